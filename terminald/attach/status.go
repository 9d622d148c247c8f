package attach

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// StatusInfo is what the status line shows.
type StatusInfo struct {
	// Window is the window's name.
	Window string
	// Tabs are the status line's entries in order, each as the tab of its
	// focused pane (tmux's windows, shown by their active pane).
	Tabs []workspace.Terminal
	// Panes, when set, is a mark for each entry of Tabs: its pane count
	// when it has several ("2", "2"+markZoomed when zoomed), else "".
	Panes []string
	// Groups holds the window's groups by id.
	Groups map[string]workspace.Group
	// Focused is the id of the tab the client shows.
	Focused string
	// Sheets is how many permission sheets wait for an answer.
	Sheets int
	// Notice is an agent's request to show a tab that this client did
	// not follow, its human being busy (focus.go); shown beside the
	// sheets in colours no tab title can take.
	Notice string
	// GrantsRefused is true when authz refuses its grants file (invalid
	// or unsafe): every call that needs a grant is refused. Shown as an
	// alarm beside the sheets; prefix s tells why.
	GrantsRefused bool
	// Right replaces the right-hand side (RightText) when set: a
	// message, the scrollback position.
	Right string
	// Left is shown before the tabs; RightText at the right end, the
	// window name when empty. Both come from config.json's status formats.
	Left, RightText string
	// Style holds config.json's status line colours; nil for the default
	// bar.
	Style *Settings
	// Prompt, when set, replaces the whole line (the rename prompt).
	Prompt string
	// TrueColor selects 24-bit palette colours instead of ANSI256 ones.
	TrueColor bool
	// Bells are the tabs that rang while the client did not show them
	// (attention.go): marked with markBell.
	Bells map[string]bool
}

// Status line glyphs: compact state marks after a tab's title. Each has
// a line in markLegend, which the key list (prefix ?) shows.
const (
	markBusy     = "●" // a program runs in the tab
	markExited   = "✗" // the tab's program ended, failing; its exit status follows
	markExitOK   = "✓" // the tab's program ended with exit status 0
	markZoomed   = "Z" // in an entry's pane count ([2Z]): its focused pane fills the area (tmux's flag)
	markAgent    = "◆" // an agent is working
	markAgentIdl = "◇" // an agent is connected, waiting for its next call
	markAgentAsk = "!" // an agent waits for a permission sheet
	markEditor   = "✎" // the window's editor, which agents drive
	markOpen     = "⚠" // an agent runs in a tab that is not sandboxed
	markBell     = "♪" // the tab's program rang the bell while not shown
	maxTitle     = 24  // a longer title is cut with …
)

// markLegend explains the status line's marks, in the key list (prefix
// ?): a new mark adds its line here.
var markLegend = []struct{ mark, means string }{
	{"*", "shown"},
	{"[2]", "2 panes"},
	{"[2" + markZoomed + "]", "zoomed"},
	{markBusy, "busy"},
	{markExitOK, "exit 0"},
	{markExited + "3", "exit 3"},
	{markEditor, "editor"},
	{markAgent, "agent working"},
	{markAgentIdl, "agent idle"},
	{markAgentAsk, "agent asks"},
	{markOpen, "agent unsandboxed"},
	{markBell, "bell rang"},
	{":3000", "dev server"},
}

// noticeStyle draws an agent's focus notice: bold black on bright yellow,
// at the right end, where no tab's name or title is drawn.
const noticeStyle = "\x1b[0;1;30;103m"

// color returns the SGR sequence that sets palette colour name as the
// foreground or background: 24-bit with TrueColor, else its ANSI256 index.
func (si *StatusInfo) color(name string, bg bool) string {
	for _, c := range workspace.Palette {
		if c.Name != name {
			continue
		}
		base := "38"
		if bg {
			base = "48"
		}
		if si.TrueColor {
			var r, g, b int
			fmt.Sscanf(c.Hex, "#%02x%02x%02x", &r, &g, &b)
			return fmt.Sprintf("\x1b[%s;2;%d;%d;%dm", base, r, g, b)
		}
		return fmt.Sprintf("\x1b[%s;5;%dm", base, c.ANSI256)
	}
	return ""
}

// segment is one piece of the status line: its escape-coded text and width.
type segment struct {
	text  string
	width int
	id    string // the tab it shows
}

// StatusLine returns the status line for a client cols wide.
func StatusLine(si StatusInfo, cols int) []screen.Cell {
	cells, _ := statusLayout(si, cols)
	return cells
}

// tabHit is where a tab sits on the status line, for mouse clicks: the
// columns [from, to) show tab id (its group's label, when it leads one,
// included).
type tabHit struct {
	from, to int
	id       string
}

// tabAt returns the tab shown at column x of the status line.
func tabAt(hits []tabHit, x int) (string, bool) {
	for _, h := range hits {
		if x >= h.from && x < h.to {
			return h.id, true
		}
	}
	return "", false
}

// statusLayout returns the status line and where each tab shown on it
// sits.
func statusLayout(si StatusInfo, cols int) ([]screen.Cell, []tabHit) {
	base, active := si.barStyle()
	if si.Prompt != "" {
		return drawLine(cols, base, base+" "+si.Prompt+" "), nil
	}
	var segs []segment
	focusedSeg := 0
	prevGroup := ""
	for i, t := range si.Tabs {
		var sb strings.Builder
		if t.GroupID != "" && t.GroupID != prevGroup {
			if g, ok := si.Groups[t.GroupID]; ok {
				sb.WriteString("\x1b[0;1;30" + "m" + si.color(g.Color, true) + " " + sanitize(g.Name) + " ")
			}
		}
		prevGroup = t.GroupID
		// The tab: group colour behind it, its own colour for the title.
		style := base
		if g, ok := si.Groups[t.GroupID]; ok && t.GroupID != "" {
			style = "\x1b[0;30m" + si.color(g.Color, true)
		}
		if t.ID == si.Focused {
			style += active
			focusedSeg = len(segs)
		}
		sb.WriteString(style + " " + strconv.Itoa(i+1) + ":")
		if t.Icon != "" {
			sb.WriteString(sanitize(t.Icon) + " ")
		}
		title := sanitize(t.Title)
		if title == "" {
			title = t.ID
		}
		if r := []rune(title); len(r) > maxTitle {
			title = string(r[:maxTitle-1]) + "…"
		}
		if t.Color != "" {
			sb.WriteString(si.color(t.Color, false) + title + style)
		} else {
			sb.WriteString(title)
		}
		if i < len(si.Panes) && si.Panes[i] != "" {
			sb.WriteString("[" + si.Panes[i] + "]")
		}
		if t.ID == si.Focused {
			sb.WriteString("*")
		}
		sb.WriteString(stateMarks(t))
		if si.Bells[t.ID] {
			sb.WriteString(" " + markBell)
		}
		sb.WriteString(" ")
		segs = append(segs, segment{text: sb.String(), id: t.ID})
	}
	for i := range segs {
		segs[i].width = textWidth(segs[i].text)
	}
	// The right-hand side, shortened when the focused tab would not fit.
	right := si.Right
	if right == "" {
		right = si.RightText
	}
	if right == "" {
		right = si.Window
	}
	left := sanitize(si.Left)
	sheets, short := "", ""
	if si.Sheets > 0 {
		sheets = fmt.Sprintf("\x1b[0;1;97;41m ! %d sheet%s (prefix s) ", si.Sheets, plural(si.Sheets))
		short = fmt.Sprintf("\x1b[0;1;97;41m !%d ", si.Sheets)
	}
	if si.GrantsRefused {
		sheets = "\x1b[0;1;97;41m ! grants.json refused (prefix s) " + sheets
		short = "\x1b[0;1;97;41m !grants " + short
	}
	if si.Notice != "" {
		sheets = noticeStyle + " " + markAgent + " " + sanitize(si.Notice) + " " + sheets
		short = noticeStyle + " " + markAgent + " f " + short
	}
	need := 2 + textWidth(left)
	if len(segs) > 0 {
		need += segs[focusedSeg].width
	}
	// A message too long for the room left is cut, not dropped: the
	// start of a reason says the most.
	right = sanitize(right)
	if room := cols - need - textWidth(sheets) - 2; room >= 12 && textWidth(right) > room {
		r := []rune(right)
		for len(r) > 0 && textWidth(string(r))+1 > room {
			r = r[:len(r)-max(1, (textWidth(string(r))+1-room)/2)]
		}
		right = string(r) + "…"
	}
	var rightText string
	var rw int
	for _, cand := range []string{sheets + base + " " + right + " ", sheets, short} {
		rightText, rw = cand, textWidth(cand)
		if cols-rw >= need {
			break
		}
	}
	// Show as many tabs as fit, keeping the focused one in view.
	avail := cols - rw
	var line strings.Builder
	line.WriteString(base + left)
	used := textWidth(left)
	start := 0
	for start < focusedSeg && used+sumWidth(segs[start:focusedSeg+1])+1 > avail {
		start++
	}
	if start > 0 {
		line.WriteString("<")
		used++
	}
	var hits []tabHit
	for _, s := range segs[start:] {
		if used+s.width > avail {
			line.WriteString(base + ">")
			used++
			break
		}
		line.WriteString(s.text)
		hits = append(hits, tabHit{from: used, to: used + s.width, id: s.id})
		used += s.width
	}
	line.WriteString(base)
	if pad := avail - used; pad > 0 {
		line.WriteString(strings.Repeat(" ", pad))
	}
	line.WriteString(rightText)
	return drawLine(cols, base, line.String()), hits
}

// barStyle returns the SGR sequences of the bar and of the shown tab's
// title: config.json's colours, else the client's colours in inverse
// video, the shown tab bold and underlined.
func (si *StatusInfo) barStyle() (base, active string) {
	base, active = "\x1b[0;7m", "\x1b[1;4m"
	st := si.Style
	if st == nil {
		return base, active
	}
	inverse := true
	if st.BG.IsSet() || st.FG.IsSet() {
		base, inverse = sgr("0", st.FG.SGR(false, si.TrueColor), st.BG.SGR(true, si.TrueColor)), false
	}
	if st.ActiveFG.IsSet() || st.ActiveBG.IsSet() {
		on := "1;4"
		if inverse {
			on += ";27" // the shown tab's own colours, not swapped by the bar's inverse video
		}
		active = sgr(on, st.ActiveFG.SGR(false, si.TrueColor), st.ActiveBG.SGR(true, si.TrueColor))
	}
	return base, active
}

// sgr joins the non-empty SGR parameters into one sequence.
func sgr(params ...string) string {
	var b strings.Builder
	b.WriteString("\x1b[")
	sep := ""
	for _, p := range params {
		if p != "" {
			b.WriteString(sep + p)
			sep = ";"
		}
	}
	return b.String() + "m"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func sumWidth(segs []segment) int {
	n := 0
	for _, s := range segs {
		n += s.width
	}
	return n
}

// stateMarks is a tab's compact state: busy or exited, agent, dev port.
func stateMarks(t workspace.Terminal) string {
	var s string
	switch {
	case t.Exited && t.ExitCode == 0:
		s += " " + markExitOK
	case t.Exited:
		s += " " + markExited + strconv.Itoa(t.ExitCode)
	case !t.Idle:
		s += " " + markBusy
	}
	if t.Editor {
		s += " " + markEditor
	}
	switch t.AgentState {
	case workspace.AgentIdle:
		s += " " + markAgentIdl
	case workspace.AgentWorking:
		s += " " + markAgent
	case workspace.AgentWaitingForPermission:
		s += " " + markAgentAsk
	}
	if t.UnsandboxedAgent {
		s += " " + markOpen
	}
	if len(t.DevServerPorts) > 0 {
		s += " :" + strconv.Itoa(int(t.DevServerPorts[0]))
		if len(t.DevServerPorts) > 1 {
			s += "+"
		}
	}
	return s
}

// sanitize keeps text printable: a title is the program's, and must not
// smuggle escape sequences into the client; nor bidi controls, which a
// bidi-aware client (Konsole, mlterm) would apply to the rest of the row,
// reordering what Phantom shows after an agent's name.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || BidiControl(r) {
			return -1
		}
		return r
	}, s)
}

// BidiControl reports whether r is one of Unicode's bidirectional
// formatting characters (marks, embeddings, overrides, isolates), which
// text an agent chose must not carry to the human's terminal.
func BidiControl(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// textWidth is how many cells s (text with SGR sequences) takes.
func textWidth(s string) int {
	scr := screen.New(screen.Options{Cols: 1000, Rows: 1, Scrollback: -1})
	scr.Write([]byte(s))
	return scr.Cursor().X
}

// drawLine renders s (text with SGR sequences) into one row of cols cells,
// cut at the right edge, the rest filled in the bar's style.
func drawLine(cols int, bar, s string) []screen.Cell {
	scr := screen.New(screen.Options{Cols: cols, Rows: 1, Scrollback: -1})
	// No autowrap: what does not fit is cut, not wrapped.
	scr.Write([]byte("\x1b[?7l"))
	scr.Write([]byte(s))
	// Fill the rest of the bar in the bar's colours.
	scr.Write([]byte(bar + strings.Repeat(" ", max(cols-scr.Cursor().X, 0))))
	return scr.Row(0)
}
