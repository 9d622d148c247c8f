// Package attach is the human's view of a window (`phantom attach`): a
// session shows the window's focused entry (tmux's window) on a client
// terminal: one tab, or several side by side and stacked, in panes
// (layout.go, panes.go; the window's entries, shared by its clients:
// shared.go), rendered by terminald from the tabs' screen models (full
// redraw on attach, resize and tab switch; only changed rows after that),
// draws a status line of the window's entries, interprets the prefix keys
// (switch, new, close, rename, split, copy mode, detach), takes the
// client's mouse reports (mouse.go), and shows the waiting permission
// sheet in a box over the tab, answered with keys (sheet.go), and decides
// for its client whether an agent's focus request switches its tab or
// shows a notice, never moving the keys of a human who types (focus.go).
// The gRPC adapter in package terminald feeds a session the client's
// messages and sends what it renders.
package attach

import (
	"bytes"
	"context"
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
	// ClientPID is the attach client's process, for the audit log of the
	// answers given here (see ClientPID); 0 when unknown.
	ClientPID int
	// Live, when set, holds config.json's prefix, keys and status line as
	// terminald reloads them; it overrides Prefix (settings.go).
	Live *Live
	// Buffers are the paste buffers, shared by the sessions of one
	// terminald; nil gives the session its own (buffers.go).
	Buffers *Buffers
	// Focus, when set, brings agents' focus requests to the session,
	// which switches its tab only while its human is not typing, and
	// shows a notice otherwise (focus.go).
	Focus *Focuses
	// Grants, when set, are authz's grants and audit log for the grants
	// view (prefix g, grantsview.go); revocations there are the human's.
	Grants Grants
	// Window, when set, is told the window the session shows, from the
	// session's goroutine (as send is): as it starts and at each switch
	// (windows.go), so that the client can come back to it.
	Window func(id string) error
	// Attention, when set, brings new sheets and agents that wait or
	// finished to the session, which rings its client (attention.go).
	Attention *Attention
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
	// Clipboard, when not ClipboardUnknown, says where the client's
	// copies go from now on.
	Clipboard Clipboard
	// TrueColor says the client's terminal announced 24-bit colour when
	// asked (XTGETTCAP RGB or Tc), for config.json's "truecolor": auto.
	TrueColor bool
}

// Clipboard is whether a client passes copies (OSC 52) on to its
// terminal's clipboard; the copy notice says where a copy went.
type Clipboard int

const (
	ClipboardUnknown      Clipboard = iota // the client did not say (yet)
	ClipboardWritten                       // copies reach the terminal's clipboard
	ClipboardNotAnnounced                  // the terminal did not announce OSC 52
	ClipboardOff                           // the user turned it off (PHANTOM_CLIPBOARD=off)
)

// Exit is how a session ended.
type Exit struct {
	// Message is for the user, e.g. "detached from window build".
	Message string
	// OK is false when the session ended on an error.
	OK bool
}

// mode is what keys do.
type mode int

const (
	modeNormal  mode = iota // keys go to the tab
	modePrompt              // keys edit the status line prompt (rename, search, tab number)
	modeCopy                // keys move through the scrollback, search and select (copy.go)
	modeSheet               // a permission sheet's box is open; keys answer it
	modeHelp                // the key list's box is open; it scrolls, any other key closes it
	modeChoose              // the tab chooser's box is open
	modeConfirm             // the status line asks y/n before closing a tab
	modeGrants              // the grants view's box is open (grantsview.go)
	modeBuffers             // the paste buffers' box is open (buffers.go)
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

	tabID  string // the focused pane's tab
	root   *node  // the shown entry's layout of panes (layout.go); nil before the first
	fp     *pane  // the focused pane
	direct *pane  // the pane whose output signal Run takes itself (directDirty)
	zoomed bool   // the focused pane fills the area
	// entries are the window's status-line entries as this session last
	// read or published them; layoutCh is closed when they change
	// (shared.go).
	entries  []workspace.Entry
	layoutCh <-chan struct{}
	dirty    chan struct{}
	last     [][]screen.Cell // what the client shows of the tab area
	lastS    []screen.Cell   // what the client shows of the status line

	tabs      []workspace.Terminal
	groups    map[string]workspace.Group
	winName   string
	statusOld bool // tabs/groups need re-reading
	needFull  bool // redraw everything
	needFrame bool // something changed since the last render
	// statusStale is set when anything but a tab's output happened since
	// the status line was drawn: output alone (a keystroke's echo) does
	// not change it, and it costs more to lay out than the echo's row.
	statusStale bool
	outputWake  bool // the loop last woke for a tab's output
	lastRender  time.Time
	tokens      float64 // frames that may be drawn now (token bucket)

	mode       mode
	prefixed   bool          // the prefix was pressed; the next key is a command
	prompt     []rune        // the prompt's text
	promptKind promptKind    // what the prompt asks for
	promptBack mode          // the mode to return to when the prompt ends
	copy       copyState     // modeCopy
	clipboard  Clipboard     // where the client puts copies
	color      clientColor   // what the client said of 24-bit colour (truecolor.go)
	confirmID  string        // modeConfirm: the tab to close
	confirmWin string        // modeConfirm: the window to close, instead (windows.go)
	winOrder   []string      // the windows' ids in order, as last listed
	chosen     int           // modeChoose: the highlighted row of the tree
	helpTop    int           // modeHelp: the key list's first row shown (keylist.go)
	tree       treeState     // modeChoose: the tree of windows and tabs (tree.go)
	pending    []byte        // the start of a mouse report cut by a read
	drag       dragState     // a mouse button held in the tab area
	hits       []tabHit      // where the status line shows each tab
	fill       []screen.Cell // a row of fillCell, cols wide
	message    string
	msgUntil   time.Time

	sheet     *Sheet            // modeSheet: the sheet in the box
	scope     Scope             // modeSheet: the scope an answer grants
	answering string            // the sheet whose answer is in flight
	answered  string            // the sheet last answered here
	answers   chan answerResult // answers coming back
	shownSecs int               // the countdown the box shows
	boxCache  *sheetBox

	gv       grantsState       // modeGrants
	grantsIn chan grantsResult // the grants view's loads coming back

	// Agents' focus requests (focus.go). followed is the window's focused
	// tab as the session last followed it; diverged the tab an agent's
	// request switched this client to while the window's focus stayed
	// (another client was in use), shown until the window's focus moves.
	focusIn   *focusInbox
	lastInput time.Time // when the client last sent a byte
	lastMoved time.Time // when an agent's request last switched the tab
	typedTab  string    // the tab the client last typed into
	followed  string
	diverged  string
	notice    *focusNotice

	habit habitState // the command prompt, last tab, repeat (cmdline.go)
	att   attention  // bell marks and ring limits (attention.go)

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
		r:     Renderer{Mouse: true, UnderlineColor: takesUnderlineColor(h.Term)},
		color: clientColor{term: h.Term, colorterm: h.ColorTerm},
		cols:  max(h.Cols, 2), rows: max(h.Rows, 2),
		answers:  make(chan answerResult, 1),
		grantsIn: make(chan grantsResult, 1),
		dirty:    make(chan struct{}, 1),
	}
	defer s.bg.Wait()
	watch := s.ws.Watch()
	defer func() { watch.Stop() }()
	live := s.liveChanged()
	s.applyLive()
	bells, calls, stopAttention := s.watchAttention()
	defer stopAttention()
	if err := s.start(h); err != nil {
		return Exit{}, err
	}
	if o.Window != nil {
		if err := o.Window(s.winID); err != nil {
			return Exit{}, fmt.Errorf("send the window to the client: %w", err)
		}
	}
	if o.Focus != nil {
		s.focusIn = newFocusInbox(s.winID)
		defer o.Focus.join(s.focusIn)()
	}
	defer func() {
		for _, l := range s.root.leaves(nil) {
			l.pane.close()
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
		// Taken before refresh reads the windows, so no change is missed.
		windows := s.ws.WindowsChanged()
		if !s.outputWake {
			s.statusStale = true
		}
		s.outputWake = false
		if s.layoutCh == nil {
			s.syncLayout()
		}
		// A focus request first: what it decided must hold before the
		// window's focus is followed.
		if err := s.takeFocusAsk(); err != nil {
			return Exit{}, err
		}
		if err := s.refresh(); err != nil {
			return Exit{}, err
		}
		s.trackShown()
		if s.exit != nil {
			break
		}
		wait, err := s.maybeRender()
		if err != nil {
			return Exit{}, err
		}
		timer.Reset(wait)
		direct := s.directDirty()
		select {
		case <-ctx.Done():
			return s.shuttingDown(), nil
		case m, ok := <-in:
			if !ok {
				return Exit{Message: "client went away", OK: true}, nil
			}
			if err := s.handle(m); err != nil {
				return Exit{}, err
			}
		case <-s.dirty:
			s.needFrame, s.outputWake = true, true
		case <-live:
			live = s.liveChanged()
			s.applyLive()
		case <-direct:
			s.needFrame, s.outputWake = true, true
		case <-s.layoutCh:
			s.layoutCh = nil // read again at the top
		case <-windows:
			s.statusOld = true // windows.go
		case <-s.focusWake():
			// Taken at the top.
		case <-sheets:
			s.needFrame = true // the status line's marker
			s.syncSheet()
			s.grantsChanged()
		case r := <-s.answers:
			s.answerDone(r)
		case r := <-s.grantsIn:
			s.grantsDone(r)
		case id := <-bells:
			if err := s.bellRang(id); err != nil {
				return Exit{}, err
			}
		case c := <-calls:
			if err := s.called(c); err != nil {
				return Exit{}, err
			}
		case _, ok := <-watch.Events():
			if !ok {
				if watch.Err() == nil {
					return s.shuttingDown(), nil
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

// shuttingDown is the exit when terminald goes away: "Phantom stopped"
// after phantom down, else the message on which the client waits for the
// next terminald to take the tabs over.
func (s *session) shuttingDown() Exit {
	if s.ws.Stopping() {
		return Exit{Message: "Phantom stopped", OK: true}
	}
	return Exit{Message: "terminald is shutting down"}
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
	wins := s.ws.Windows()
	for _, w := range wins {
		if w.ID == s.winID {
			win = &w
			break
		}
	}
	if win == nil || len(win.TabIDs) == 0 {
		if s.leaveWindow(win, wins) { // windows.go
			s.syncLayout()
			return s.refresh()
		}
		msg := fmt.Sprintf("window %s has no tabs left", s.windowLabel())
		if s.ws.Stopping() {
			// phantom down hung the tabs up: say what happened, not
			// its consequence.
			msg = "Phantom stopped"
		}
		s.exit = &Exit{Message: msg, OK: true}
		return nil
	}
	s.winName = win.Name
	s.winOrder = s.winOrder[:0]
	for _, w := range wins {
		s.winOrder = append(s.winOrder, w.ID)
	}
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
	// The entries first: another client's change, a tab opened or
	// closed, may have changed the one shown.
	s.syncLayout()
	if s.dropClosedPanes() && s.fp != nil {
		// A pane's tab closed and its neighbour took the room: show the
		// neighbour's tab focused, not the one the window picked.
		s.focus(s.fp.tabID)
		return nil
	}
	// Follow the window's focus, unless an agent's request switched this
	// client alone and the window's focus has not moved since.
	stay := s.diverged != "" && s.diverged == s.tabID && win.FocusedTab == s.followed
	s.followed = win.FocusedTab
	if win.FocusedTab != s.tabID && !stay {
		s.diverged = ""
		return s.show(win.FocusedTab)
	}
	return nil
}

// show switches the client to tab id: the pane that shows it takes the
// focus, else the entry holding it is shown, with its pane focused.
func (s *session) show(id string) error {
	for _, l := range s.root.leaves(nil) {
		if l.pane.tabID == id {
			s.setFocus(l.pane)
			return nil
		}
	}
	switch s.mode {
	case modeCopy, modePrompt, modeConfirm:
		s.mode = modeNormal
	}
	s.copy, s.drag = copyState{}, dragState{}
	es, changed := s.ws.Entries(s.winID)
	s.entries, s.layoutCh = es, changed
	s.orderTabs()
	i := workspace.EntryOf(es, id)
	if i < 0 {
		// Closed meanwhile; the close event brings the next focus.
		s.statusOld = true
		return nil
	}
	s.showEntry(es[i], id)
	if s.tabID != id {
		s.statusOld = true // its pane did not open: closed meanwhile
	}
	return nil
}

// handle applies one client message.
func (s *session) handle(m Msg) error {
	if m.Cols > 0 && m.Rows > 0 {
		s.cols, s.rows = max(m.Cols, 2), max(m.Rows, 2)
		s.relayout()
	}
	if m.Clipboard != ClipboardUnknown {
		s.clipboard = m.Clipboard
	}
	if m.TrueColor && !s.color.announced {
		s.color.announced = true
		s.applyTrueColor()
	}
	if len(m.Input) == 0 {
		return nil
	}
	s.lastInput = s.now()
	typing := s.typing()
	fp := s.fp
	err := s.keys(m.Input)
	if !typing || !s.typing() || s.fp != fp || bytes.Contains(m.Input, mousePrefix) {
		// A key may change what a prompt or box shows; an unchanged
		// frame costs only its diff.
		s.needFrame = true
	}
	// Keys typed into a tab change nothing here until the tab echoes:
	// a frame now would only delay the echo's.
	return err
}

// typing reports whether keys go straight to the focused tab.
func (s *session) typing() bool {
	return s.mode == modeNormal && !s.prefixed && len(s.pending) == 0
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
		s.needFrame, s.statusStale = true, true
	}
	wait := time.Hour
	if s.message != "" {
		wait = s.msgUntil.Sub(now)
	}
	wait = min(wait, s.sheetTick(now), s.noticeTick(s.now()))
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
