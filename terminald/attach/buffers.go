package attach

import (
	"fmt"
	"strings"
	"sync"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// Paste buffers, as tmux keeps them: each copy pushes a buffer, prefix ]
// pastes the newest, prefix = lists them to paste or delete one
// (choose-buffer). The buffers belong to terminald, shared by every
// client, as tmux's belong to its server.

// MaxBuffers is how many paste buffers are kept; a copy past it drops
// the oldest (tmux's buffer-limit, smaller: a buffer may hold maxClip).
const MaxBuffers = 20

// Buffer is one copy.
type Buffer struct {
	// Name is "buffer" and a number that grows with each copy, as tmux
	// names them.
	Name string
	// Text is what was copied.
	Text string
}

// Buffers are the paste buffers of one terminald; safe for concurrent
// use by its sessions.
type Buffers struct {
	mu   sync.Mutex
	list []Buffer // newest first
	n    int      // the next buffer's number
}

// NewBuffers starts with no buffer.
func NewBuffers() *Buffers { return &Buffers{} }

// Push keeps text as the newest buffer, dropping the oldest past
// MaxBuffers.
func (b *Buffers) Push(text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	buf := Buffer{Name: fmt.Sprintf("buffer%d", b.n), Text: text}
	b.n++
	b.list = append([]Buffer{buf}, b.list[:min(len(b.list), MaxBuffers-1)]...)
}

// List returns the buffers, newest first.
func (b *Buffers) List() []Buffer {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Buffer(nil), b.list...)
}

// Newest returns the newest buffer; false when there is none.
func (b *Buffers) Newest() (Buffer, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.list) == 0 {
		return Buffer{}, false
	}
	return b.list[0], true
}

// Delete drops the buffer called name (by name, so that a client deleting
// from a list another client changed meanwhile drops the one it showed);
// false when there is none by that name.
func (b *Buffers) Delete(name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, buf := range b.list {
		if buf.Name == name {
			b.list = append(b.list[:i], b.list[i+1:]...)
			return true
		}
	}
	return false
}

// buffers are the session's paste buffers: terminald's, or its own when
// run without (tests, embedders).
func (s *session) buffers() *Buffers {
	if s.o.Buffers == nil {
		s.o.Buffers = NewBuffers()
	}
	return s.o.Buffers
}

// chooseBuffer opens the list of paste buffers (prefix =).
func (s *session) chooseBuffer() {
	if len(s.buffers().List()) == 0 {
		s.setMessage("no paste buffers: copy mode (prefix [) copies into one")
		return
	}
	s.leaveCopy()
	s.mode, s.habit.bufChosen, s.needFull = modeBuffers, 0, true
}

// bufferPreview is a buffer's one-line summary in the list: its name,
// size and start, control characters shown as tmux does (\n as ↵ here,
// as it takes one cell).
func bufferPreview(b Buffer) string {
	chars := len([]rune(b.Text))
	text := strings.NewReplacer("\r\n", "↵", "\n", "↵", "\t", " ").Replace(b.Text)
	if r := []rune(text); len(r) > 200 {
		text = string(r[:200])
	}
	return fmt.Sprintf("%s: %d character%s: %s", b.Name, chars, plural(chars), sanitize(text))
}

// buffersBox lists the paste buffers, newest first, the highlighted one
// in inverse video.
func (s *session) buffersBox() *sheetBox {
	list := s.buffers().List()
	inner := max(min(s.cols-4, 72), 1)
	room := max(s.rows-1-3, 1)
	chosen := min(s.habit.bufChosen, max(len(list)-1, 0))
	first := max(min(chosen-room/2, len(list)-room), 0)
	var body [][]screen.Cell
	for i := first; i < len(list) && i < first+room; i++ {
		st := stylePlain
		if i == chosen {
			st = styleChosen
		}
		line := []rune(bufferPreview(list[i]))
		if len(line) > inner {
			line = append(line[:inner-1], '…')
		}
		body = wrap(body, []span{{string(line), st}}, inner, len(body)+1)
	}
	body = wrap(body, []span{{"↑↓", styleBold}, {" move  ", stylePlain}, {"Enter", styleBold}, {" paste  ", stylePlain},
		{"d", styleBold}, {" delete  ", stylePlain}, {"Esc", styleBold}, {" cancel", stylePlain}}, inner, len(body)+1)
	return s.placeBox(body, " paste buffers ")
}

// bufferKeys moves through the buffer list, pastes or deletes, and
// returns the bytes left over when a key closes it.
func (s *session) bufferKeys(b []byte) []byte {
	for len(b) > 0 && s.mode == modeBuffers {
		list := s.buffers().List()
		h := &s.habit
		h.bufChosen = min(h.bufChosen, max(len(list)-1, 0))
		n := 1
		switch c := b[0]; {
		case c == 'q' || c == 0x03 || (c == 0x1b && len(b) == 1):
			s.mode = modeNormal
		case c == 0x1b:
			n = escLen(b)
			switch string(b[:n]) {
			case "\x1b[A", "\x1bOA":
				h.bufChosen = max(h.bufChosen-1, 0)
			case "\x1b[B", "\x1bOB":
				h.bufChosen = min(h.bufChosen+1, len(list)-1)
			}
		case c == 'k':
			h.bufChosen = max(h.bufChosen-1, 0)
		case c == 'j':
			h.bufChosen = min(h.bufChosen+1, len(list)-1)
		case c == '\r' || c == '\n':
			s.mode = modeNormal
			if h.bufChosen < len(list) {
				s.pasteText(list[h.bufChosen].Text)
			}
		case c == 'd' || c == 'D':
			if h.bufChosen < len(list) {
				s.buffers().Delete(list[h.bufChosen].Name)
			}
			if len(list) <= 1 {
				s.mode = modeNormal
				s.setMessage("no paste buffers left")
			}
		case c == s.o.Prefix:
			s.mode = modeNormal
			s.prefixed = true
		}
		s.needFull = true
		b = b[n:]
	}
	return b
}
