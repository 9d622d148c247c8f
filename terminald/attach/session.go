// Package attach is the human's view of a window (`phantom attach`): a
// session shows one window's focused tab on a client terminal, rendered by
// terminald from the tab's screen model (full redraw on attach, resize and
// tab switch; only changed rows after that), draws a status line of the
// window's tabs, interprets the prefix keys (switch, new, close, rename,
// scrollback, detach), and shows the waiting permission sheet in a box
// over the tab, answered with keys (sheet.go). The gRPC adapter in package terminald feeds
// a session the client's messages and sends what it renders.
package attach

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// FrameInterval is the time between two renders under sustained output:
// output arriving faster is coalesced into one frame drawn from the
// current screen state. A few frames may come closer together (frameBurst)
// so that a keystroke's echo right after another frame is not held back.
const FrameInterval = 10 * time.Millisecond

// frameBurst is how many frames may be drawn back to back after a pause.
const frameBurst = 3

// messageTime is how long a status line message stays.
const messageTime = 3 * time.Second

// Options configures sessions.
type Options struct {
	// Workspace holds the tabs.
	Workspace *workspace.Workspace
	// Prefix is the key that starts a command; DefaultPrefix if 0.
	Prefix byte
	// Sheets are the permission sheets waiting for the human; nil means
	// none ever do.
	Sheets Sheets
}

// Hello opens a session.
type Hello struct {
	// Target is a tab id, a window id, or "" for the first window.
	Target string
	// Cols and Rows are the client's size, status line included.
	Cols, Rows int
	// Term and ColorTerm are the client's TERM and COLORTERM.
	Term, ColorTerm string
	// Directory is where to open a tab if the window has none.
	Directory string
}

// Msg is one message from the client: typed bytes or a new size.
type Msg struct {
	// Input is what the user typed.
	Input []byte
	// Cols and Rows, when non-zero, are the client's new size.
	Cols, Rows int
}

// Exit is how a session ended.
type Exit struct {
	// Message is for the user, e.g. "detached from window w1".
	Message string
	// OK is false when the session ended on an error.
	OK bool
}

// mode is what keys do.
type mode int

const (
	modeNormal mode = iota // keys go to the tab
	modeRename             // keys edit the new name
	modeScroll             // keys move through the scrollback
	modeSheet              // a permission sheet's box is open; keys answer it
)

// session is one attached client.
type session struct {
	o     Options
	ws    *workspace.Workspace
	send  func([]byte) error
	r     Renderer
	cols  int
	rows  int
	winID string

	tabID string
	view  *workspace.View
	snap  workspace.Snapshot
	last  [][]screen.Cell // what the client shows of the tab area
	under [][]screen.Cell // the tab's rows as last snapshotted (under a box)
	lastS []screen.Cell   // what the client shows of the status line

	shownCols, shownRows int // the tab size last rendered

	tabs       []workspace.Terminal
	groups     map[string]workspace.Group
	winName    string
	statusOld  bool // tabs/groups need re-reading
	needFull   bool // redraw everything
	needFrame  bool // something changed since the last render
	lastRender time.Time
	tokens     float64 // frames that may be drawn now (token bucket)

	mode      mode
	prefixed  bool   // the prefix was pressed; the next key is a command
	prompt    []rune // the rename prompt's text
	scrollTop int    // modeScroll: history line at the top of the area
	message   string
	msgUntil  time.Time

	sheet     *Sheet            // modeSheet: the sheet in the box
	scope     Scope             // modeSheet: the scope an answer grants
	answering string            // the sheet whose answer is in flight
	answered  string            // the sheet last answered here
	answers   chan answerResult // answers coming back
	shownSecs int               // the countdown the box shows
	boxCache  *sheetBox

	exit *Exit
	bg   sync.WaitGroup // tab closes still running
	out  []byte
}

// Run runs a session until the user detaches, the window runs out of
// tabs, the client goes away (in is closed) or ctx ends. It calls send
// with each rendered frame; send may block, the tabs never wait for it.
func Run(ctx context.Context, o Options, h Hello, in <-chan Msg, send func([]byte) error) (Exit, error) {
	if o.Prefix == 0 {
		o.Prefix = DefaultPrefix
	}
	s := &session{
		o: o, ws: o.Workspace, send: send,
		r:    Renderer{TrueColor: h.ColorTerm == "truecolor" || h.ColorTerm == "24bit"},
		cols: max(h.Cols, 2), rows: max(h.Rows, 2),
		answers: make(chan answerResult, 1),
	}
	defer s.bg.Wait()
	watch := s.ws.Watch()
	defer func() { watch.Stop() }()
	if err := s.start(h); err != nil {
		return Exit{}, err
	}
	defer func() {
		if s.view != nil {
			s.view.Close()
		}
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for s.exit == nil {
		var sheets <-chan struct{}
		if s.o.Sheets != nil {
			// Taken before anything reads the sheets, so no change is missed.
			sheets = s.o.Sheets.Changed()
		}
		if err := s.refresh(); err != nil {
			return Exit{}, err
		}
		if s.exit != nil {
			break
		}
		wait, err := s.maybeRender()
		if err != nil {
			return Exit{}, err
		}
		timer.Reset(wait)
		var dirty <-chan struct{}
		if s.view != nil && s.mode != modeScroll {
			dirty = s.view.Dirty()
		}
		select {
		case <-ctx.Done():
			return Exit{Message: "terminald is shutting down"}, nil
		case m, ok := <-in:
			if !ok {
				return Exit{Message: "client went away", OK: true}, nil
			}
			if err := s.handle(m); err != nil {
				return Exit{}, err
			}
		case <-dirty:
			s.needFrame = true
		case <-sheets:
			s.needFrame = true // the status line's marker
			s.syncSheet()
		case r := <-s.answers:
			s.answerDone(r)
		case _, ok := <-watch.Events():
			if !ok {
				if watch.Err() == nil {
					return Exit{Message: "terminald is shutting down"}, nil
				}
				watch = s.ws.Watch() // fell behind: start over
			}
			s.statusOld = true
		drain:
			for {
				select {
				case _, ok := <-watch.Events():
					if !ok {
						break drain
					}
				default:
					break drain
				}
			}
		case <-timer.C:
		}
	}
	// Leave the client as it was: pen, modes, cursor.
	b := s.r.ResetModes(s.r.ResetPen(nil))
	b = s.r.Cursor(b, 0, 0, true)
	if err := s.send(b); err != nil {
		return Exit{}, err
	}
	return *s.exit, nil
}

// start picks the window and tab the hello names and shows it.
func (s *session) start(h Hello) error {
	target := h.Target
	var tabID string
	if target != "" && target[0] == 't' {
		t, err := s.ws.Focus(target)
		if err != nil {
			return err
		}
		tabID, target = t.ID, t.WindowID
	}
	wins := s.ws.Windows()
	i := 0
	if target != "" {
		i = slices.IndexFunc(wins, func(w workspace.Window) bool { return w.ID == target })
		if i < 0 {
			return fmt.Errorf("attach %q: no such tab or window: %w", h.Target, errdefs.ErrNotFound)
		}
	}
	s.winID = wins[i].ID
	if tabID == "" && len(wins[i].TabIDs) == 0 {
		// An empty window: open a tab where the client is.
		if _, err := s.ws.Create(workspace.CreateSpec{Directory: h.Directory, WindowID: s.winID,
			Cols: s.cols, Rows: s.rows - 1}); err != nil {
			return fmt.Errorf("attach: window %s has no tab and opening one failed: %w", s.winID, err)
		}
	}
	s.statusOld = true
	return nil
}

// refresh re-reads the window's tabs after a change and follows its
// focus: another client or an agent focused a tab, or the shown tab
// closed.
func (s *session) refresh() error {
	if !s.statusOld {
		return nil
	}
	s.statusOld = false
	s.needFrame = true
	var win *workspace.Window
	for _, w := range s.ws.Windows() {
		if w.ID == s.winID {
			win = &w
			break
		}
	}
	if win == nil || len(win.TabIDs) == 0 {
		s.exit = &Exit{Message: fmt.Sprintf("window %s has no tabs left", s.winID), OK: true}
		return nil
	}
	s.winName = win.Name
	s.tabs = s.tabs[:0]
	for _, t := range s.ws.List() {
		if t.WindowID == s.winID {
			s.tabs = append(s.tabs, t)
		}
	}
	s.groups = map[string]workspace.Group{}
	for _, g := range s.ws.Groups() {
		if g.WindowID == s.winID {
			s.groups[g.ID] = g
		}
	}
	if win.FocusedTab != s.tabID {
		return s.show(win.FocusedTab)
	}
	return nil
}

// show switches the client to tab id.
func (s *session) show(id string) error {
	if s.view != nil {
		s.view.Close()
		s.view = nil
	}
	s.tabID = id
	if s.mode == modeScroll || s.mode == modeRename {
		s.mode = modeNormal
	}
	v, err := s.ws.OpenView(id, s.cols, s.rows-1)
	if errors.Is(err, errdefs.ErrNotFound) {
		// Closed meanwhile; the close event brings the next focus.
		s.statusOld = true
		return nil
	}
	if err != nil {
		return err
	}
	s.view = v
	s.needFull = true
	return nil
}

// handle applies one client message.
func (s *session) handle(m Msg) error {
	if m.Cols > 0 && m.Rows > 0 {
		s.cols, s.rows = max(m.Cols, 2), max(m.Rows, 2)
		s.needFull = true
		if s.view != nil {
			if err := s.view.Resize(s.cols, s.rows-1); err != nil {
				s.setMessage(err.Error())
			}
		}
	}
	if len(m.Input) > 0 {
		return s.keys(m.Input)
	}
	return nil
}

// setMessage shows msg on the status line for a few seconds.
func (s *session) setMessage(msg string) {
	s.message, s.msgUntil = msg, time.Now().Add(messageTime)
	s.needFrame = true
}

// maybeRender draws a frame if one is due and returns how long to wait
// before the next one may be due.
func (s *session) maybeRender() (time.Duration, error) {
	now := time.Now()
	if s.message != "" && !now.Before(s.msgUntil) {
		s.message = ""
		s.needFrame = true
	}
	wait := time.Hour
	if s.message != "" {
		wait = s.msgUntil.Sub(now)
	}
	wait = min(wait, s.sheetTick(now))
	if !s.needFrame && !s.needFull {
		return wait, nil
	}
	s.tokens = min(s.tokens+float64(now.Sub(s.lastRender))/float64(FrameInterval), frameBurst)
	s.lastRender = now
	if s.tokens < 1 {
		return min(wait, time.Duration((1-s.tokens)*float64(FrameInterval))+time.Millisecond/10), nil
	}
	s.tokens--
	s.needFrame = false
	if err := s.send(s.render()); err != nil {
		return 0, fmt.Errorf("send frame to client: %w", err)
	}
	return wait, nil
}
