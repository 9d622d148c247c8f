package screen

import "unsafe"

// DefaultScrollback is the scrollback size used when Options.Scrollback is 0.
const DefaultScrollback = 100000

// Options configures a new Screen.
type Options struct {
	// Cols and Rows are the initial size; values below 1 become 80x24.
	Cols, Rows int
	// Scrollback is the maximum number of lines kept in the scrollback:
	// 0 means DefaultScrollback, a negative value disables scrollback.
	Scrollback int
	// Reply receives answers to terminal queries (DA, DSR, DECRQM, OSC
	// 10/11...), which the caller should write back to the PTY. It is
	// called synchronously from Write and must not block; the slice is not
	// reused after the call returns. May be nil.
	Reply func([]byte)
	// OnEvent receives titles, cwd changes, OSC 133 prompt marks and bells,
	// synchronously from Write. It must not block. May be nil.
	OnEvent func(Event)
}

// EventKind says what an Event reports.
type EventKind int

// Event kinds.
const (
	EventTitle           EventKind = iota + 1 // OSC 0/2; Text is the title
	EventCwd                                  // OSC 7; Text is the decoded path
	EventPromptStart                          // OSC 133;A
	EventCommandStart                         // OSC 133;B (end of prompt, start of input)
	EventCommandExecuted                      // OSC 133;C
	EventCommandFinished                      // OSC 133;D[;exit]; ExitCode/HasExit
	EventBell                                 // BEL in the ground state
	// EventCommandLine is OSC 133;E;cmdline_url=<percent-encoded line>,
	// which Phantom's shell integration sends just before C: the command
	// line the shell is about to run, as the shell has it.
	EventCommandLine
)

// Event is something the program in the terminal reported.
type Event struct {
	Kind     EventKind
	Text     string // title, cwd, or the raw OSC 133 parameters after the letter
	ExitCode int    // for EventCommandFinished when HasExit
	HasExit  bool
}

// Cursor is the cursor state; X and Y are 0-based.
type Cursor struct {
	X, Y    int
	Visible bool
}

// grid is one screen buffer (main or alternate).
type grid struct {
	lines []*line
	base  []*line // backing array lines may be a window into (scrollFull)
	saved savedCursor
}

// savedCursor is what DECSC saves.
type savedCursor struct {
	set      bool
	x, y     int
	pen      cell
	wrapNext bool
	origin   bool
	charsets [2]bool
	gl       uint8
}

// Screen is a terminal screen with scrollback fed by Write.
//
// A Screen is not safe for concurrent use; the caller holds a lock around
// every call.
type Screen struct {
	cols, rows int

	main, alt *grid
	cur       *grid
	altActive bool

	x, y     int
	wrapNext bool
	pen      cell // current rendition; r unused, w == 1
	top, bot int  // scroll region, inclusive
	// ulColors are the underline colours cells number in their attr
	// (underline.go); kept for the screen's life, since the scrollback
	// may hold any of them.
	ulColors []Color
	tabs     []bool
	m        Modes
	charsets [2]bool // true: DEC special graphics
	gl       uint8
	lastRune rune

	title, cwd string
	clean      []bool // per visible row: unchanged since ClearDirty (inverted so scrolls can clear() it)
	sb         scrollback
	tmpLines   []*line
	blankRow   []cell // cached row of blankVal cells for fast clearing
	blankVal   cell

	reply   func([]byte)
	onEvent func(Event)

	p parser

	ext extState // left/right margins, extra modes, title stack (ext.go)

	sgrCache [sgrCacheSize]sgrCacheEntry // see cachedSGR
	gs       gscratch                    // grapheme segmentation scratch (mode 2027)
	runEnd   int                         // groundCompact: end of a run cut at the margin
}

// New returns a Screen of the given size with the cursor at the top left.
func New(o Options) *Screen {
	if o.Cols < 1 || o.Rows < 1 {
		o.Cols, o.Rows = 80, 24
	}
	o.Cols, o.Rows = clampSize(o.Cols, o.Rows)
	max := o.Scrollback
	if max == 0 {
		max = DefaultScrollback
	}
	if max < 0 {
		max = 0
	}
	s := &Screen{cols: o.Cols, rows: o.Rows, reply: o.Reply, onEvent: o.OnEvent}
	s.sb.max = max
	s.main = s.newGrid()
	s.cur = s.main
	s.clean = make([]bool, s.rows)
	s.ClearDirty()
	s.resetState()
	return s
}

// maxDim bounds the size so that cell counts and column indexes stay sane.
const maxDim = 4096

func clampSize(cols, rows int) (int, int) {
	cols = min(max(cols, 1), maxDim)
	rows = min(max(rows, 1), maxDim)
	return cols, rows
}

func (s *Screen) newGrid() *grid {
	g := &grid{lines: make([]*line, s.rows)}
	// One backing array for all rows keeps a fresh screen compact.
	cells := make([]cell, s.cols*s.rows)
	for i := range g.lines {
		l := &line{c: cells[i*s.cols : (i+1)*s.cols : (i+1)*s.cols], compact: true}
		g.lines[i] = l
	}
	fillBlank(cells, blankCell)
	return g
}

var blankCell = cell{r: ' ', w: 1}

func fillBlank(c []cell, b cell) {
	for i := range c {
		c[i] = b
	}
}

// resetState puts modes, pen, margins and tabs to their power-on values.
func (s *Screen) resetState() {
	s.pen = blankCell
	s.m = Modes{Autowrap: true, CursorVisible: true}
	s.top, s.bot = 0, s.rows-1
	s.charsets = [2]bool{}
	s.gl = 0
	s.wrapNext = false
	s.resetTabs()
	s.main.saved = savedCursor{}
	if s.alt != nil {
		s.alt.saved = savedCursor{}
	}
}

func (s *Screen) resetTabs() {
	if cap(s.tabs) >= s.cols {
		s.tabs = s.tabs[:s.cols]
	} else {
		s.tabs = make([]bool, s.cols)
	}
	for i := range s.tabs {
		s.tabs[i] = i%8 == 0 && i > 0
	}
}

// Size returns the screen size in cells.
func (s *Screen) Size() (cols, rows int) { return s.cols, s.rows }

// Title returns the window title last set with OSC 0 or 2.
func (s *Screen) Title() string { return s.title }

// Cwd returns the working directory last reported with OSC 7.
func (s *Screen) Cwd() string { return s.cwd }

// AltScreen reports whether the alternate screen is active.
func (s *Screen) AltScreen() bool { return s.altActive }

// Cursor returns the cursor position and visibility.
func (s *Screen) Cursor() Cursor {
	return Cursor{X: s.x, Y: s.y, Visible: s.m.CursorVisible}
}

// Modes returns the terminal modes a client attaching to the screen needs
// to reproduce (keyboard, mouse, paste) or render (cursor, reverse video).
func (s *Screen) Modes() Modes { return s.m }

// ScrollbackLen returns the number of lines in the scrollback.
func (s *Screen) ScrollbackLen() int { return s.sb.n }

// Row returns a copy of visible row y (0 = top) as exactly cols cells, or
// nil if y is out of range.
func (s *Screen) Row(y int) []Cell {
	if y < 0 || y >= s.rows {
		return nil
	}
	l := s.cur.lines[y]
	s.mat(l)
	out := make([]Cell, len(l.c))
	for i := range l.c {
		c := &l.c[i]
		out[i] = Cell{Rune: c.r, Width: int(c.w), Style: c.style()}
		if c.fl&flComb != 0 {
			out[i].Comb = l.comb[i]
		}
		if c.attr&attrULMask != 0 {
			s.underline(&out[i].Style)
		}
	}
	return out
}

// RowWrapped reports whether visible row y was soft-wrapped onto row y+1.
func (s *Screen) RowWrapped(y int) bool {
	return y >= 0 && y < s.rows && s.cur.lines[y].wrapped
}

// ScrollbackRow returns scrollback line i (0 = oldest) as cells, and
// whether it was soft-wrapped onto the next line. Trailing blank cells are
// not stored, so the row may be shorter than the screen. Resize re-wraps
// the scrollback to the new width, so a row is never wider than the screen
// except for a wide character on a screen of one column. Out of range
// returns nil.
func (s *Screen) ScrollbackRow(i int) (cells []Cell, wrapped bool) {
	if i < 0 || i >= s.sb.n {
		return nil, false
	}
	l := s.sb.at(i)
	d := s.sb.data(l)
	cells = decodeCells(d, encodedGmode(d))
	for i := range cells {
		if cells[i].Style.Attrs&attrULMask != 0 {
			s.underline(&cells[i].Style)
		}
	}
	return cells, l.wrapped
}

// Dirty returns the visible rows changed since the last ClearDirty, in
// increasing order.
func (s *Screen) Dirty() []int {
	var out []int
	for y, c := range s.clean {
		if !c {
			out = append(out, y)
		}
	}
	return out
}

// ClearDirty forgets the damage reported by Dirty.
func (s *Screen) ClearDirty() {
	for i := range s.clean {
		s.clean[i] = true
	}
}

func (s *Screen) markAllDirty() {
	clear(s.clean)
}

// MemoryUsage returns the approximate number of bytes held by the screen,
// its scrollback and its parser.
func (s *Screen) MemoryUsage() int {
	const lineSize = 64 // line struct + pointer
	n := 512 + int(unsafe.Sizeof(s.sgrCache)) + cap(s.tabs) + cap(s.clean) + len(s.title) + len(s.cwd)
	for _, g := range []*grid{s.main, s.alt} {
		if g == nil {
			continue
		}
		n += cap(g.base) * 8
		for _, l := range g.lines {
			n += lineSize + cap(l.c)*16 + cap(l.text) + cap(l.runs)
			for _, v := range l.comb {
				n += 48 + len(v)
			}
		}
	}
	n += s.sb.memory()
	n += cap(s.p.str)
	return n
}
