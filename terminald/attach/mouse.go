package attach

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// The mouse: the renderer keeps the client's terminal reporting button
// presses, drags and the wheel as SGR sequences (1002 and 1006) for as
// long as the session runs, whatever the program asks; the client's
// RestoreClient turns reporting off again. A report on the status line
// focuses the tab clicked; in the tab area it goes to the program when the
// program asked for the mouse (re-encoded as it asked), else the wheel
// scrolls into copy mode and a drag selects and copies. Most terminals
// keep their own selection on Shift+drag.

// mousePrefix starts an SGR mouse report.
var mousePrefix = []byte("\x1b[<")

// Report bits of an SGR mouse report's first parameter.
const (
	mouseShift  = 4
	mouseMeta   = 8
	mouseCtrl   = 16
	mouseMotion = 32
	mouseWheel  = 64
	mouseMods   = mouseShift | mouseMeta | mouseCtrl
)

// mouseEvent is one SGR mouse report.
type mouseEvent struct {
	code    int  // the first parameter: button, modifiers, motion and wheel bits
	x, y    int  // 0-based cell
	release bool // 'm': a button went up
}

// button is the report's button without the modifier and motion bits:
// 0-2 the buttons, 3 none (motion without a button), 64/65 the wheel.
func (e mouseEvent) button() int { return e.code &^ (mouseMods | mouseMotion) }

// motion reports whether the report is a move.
func (e mouseEvent) motion() bool { return e.code&mouseMotion != 0 }

// parseMouse reads the SGR mouse report at the start of b ("ESC [ < Cb ;
// Cx ; Cy M" or "m"). It returns the bytes it took: 0 when b ends before
// the report does; ok is false for a malformed report, whose bytes are
// skipped.
func parseMouse(b []byte) (ev mouseEvent, n int, ok bool) {
	var params [3]int
	p := 0
	digits := false
	for i := len(mousePrefix); i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			if params[p] > 1<<20 {
				return ev, i + 1, false
			}
			params[p] = params[p]*10 + int(c-'0')
			digits = true
		case c == ';':
			if p == 2 || !digits {
				return ev, i + 1, false
			}
			p, digits = p+1, false
		case c == 'M' || c == 'm':
			if p != 2 || !digits || params[1] < 1 || params[2] < 1 {
				return ev, i + 1, false
			}
			return mouseEvent{code: params[0], x: params[1] - 1, y: params[2] - 1, release: c == 'm'}, i + 1, true
		default:
			return ev, i + 1, false
		}
	}
	return ev, 0, false
}

// mouse acts on one report from the client.
func (s *session) mouse(ev mouseEvent) error {
	area := s.rows - 1
	btn := ev.button()
	press := !ev.release && !ev.motion()
	switch s.mode {
	case modeSheet, modePrompt, modeConfirm, modeChoose, modeGrants, modeBuffers:
		// The keys answer these; a stray click must not.
		return nil
	case modeHelp:
		// The wheel scrolls a list taller than its box; a click closes it.
		step := map[int]int{64: -wheelLines, 65: wheelLines}[btn]
		if press && !s.scrollHelp(s.helpView(), step) {
			s.mode, s.needFull = modeNormal, true
		}
		return nil
	}
	if ev.y >= area {
		// The status line: a click on a tab shows it.
		if press && btn == 0 {
			if id, ok := tabAt(s.hits, ev.x); ok {
				s.leaveCopy()
				s.focus(id)
			}
		}
		return nil
	}
	// A press in another pane focuses it first; a drag stays in the pane
	// where it started.
	if p := s.paneAt(ev.x, ev.y); p != s.fp && !s.drag.on {
		if p == nil || !press {
			return nil // a border, or a move over another pane
		}
		s.focusPane(p)
	}
	r := s.paneRect()
	ev.x = min(max(ev.x-r.x, 0), max(r.w-1, 0))
	ev.y = min(max(ev.y-r.y, 0), max(r.h-1, 0))
	area = r.h
	var modes screen.Modes
	var alt bool
	if s.mode == modeNormal {
		modes, alt = s.liveModes()
	}
	if s.mode == modeNormal && modes.Mouse != screen.MouseNone {
		// The program asked for the mouse: it gets the report.
		if seq := encodeMouse(ev, modes, s.curSnap().Cols, s.curSnap().Rows); seq != nil {
			return s.input(seq)
		}
		return nil
	}
	switch {
	case btn == mouseWheel || btn == mouseWheel+1:
		up := btn == mouseWheel
		if s.mode == modeNormal {
			if alt {
				// A full-screen program without the mouse (less, man):
				// the wheel sends arrow keys, as in most terminals.
				key := "\x1b[B"
				if up {
					key = "\x1b[A"
				}
				if modes.AppCursor {
					key = "\x1bO" + key[2:]
				}
				return s.input(bytes.Repeat([]byte(key), wheelLines))
			}
			if !up {
				return nil
			}
			s.enterCopy(true)
		}
		if s.mode == modeCopy {
			d := wheelLines
			if up {
				d = -d
			}
			s.scrollBy(d)
			if !up && s.copy.byMouse && !s.copy.sel && s.copy.top >= s.maxTop() {
				s.leaveCopy() // back at the bottom: the live screen again
			}
		}
	case btn == 0 && press:
		top := s.liveTop()
		if s.mode == modeCopy {
			top = s.copy.top
			s.copy.sel = false
			s.moveTo(ev.x, top+ev.y)
		}
		s.drag = dragState{on: true, x: ev.x, line: top + ev.y}
	case btn == 0 && ev.motion() && s.drag.on:
		if s.mode == modeNormal {
			s.enterCopy(true)
		}
		if s.mode != modeCopy {
			return nil
		}
		c := &s.copy
		if !c.sel {
			c.sel, c.ax, c.ay, c.shape = true, s.drag.x, s.drag.line, selStream
		}
		// Dragging onto the first or last row scrolls.
		switch {
		case ev.y == 0:
			s.scrollBy(-1)
		case ev.y >= area-1:
			s.scrollBy(1)
		}
		s.moveTo(ev.x, c.top+ev.y)
	case ev.release && s.drag.on:
		s.drag.on = false
		if s.mode == modeCopy && s.copy.sel {
			s.copySelection()
			if s.copy.byMouse {
				s.leaveCopy()
			}
		}
	}
	s.needFrame = true
	return nil
}

// liveModes reads the focused tab's input modes and whether it shows the
// alternate screen, now: a program that just asked for the mouse changed
// no row, so the last snapshot may not know yet.
func (s *session) liveModes() (screen.Modes, bool) {
	if s.fp == nil {
		return screen.Modes{}, false
	}
	m, alt := s.fp.snap.Modes, s.fp.snap.AltScreen
	_ = s.ws.ReadScreen(s.fp.tabID, func(scr *screen.Screen, _ int64) { m, alt = scr.Modes(), scr.AltScreen() })
	return m, alt
}

// wheelLines is how far one wheel step scrolls.
const wheelLines = 3

// encodeMouse re-encodes ev as the program asked for reports in m (its
// tracking mode and encoding); nil when it asked not to get this one or
// the report lies outside its cols x rows screen.
func encodeMouse(ev mouseEvent, m screen.Modes, cols, rows int) []byte {
	btn := ev.button()
	switch {
	case ev.x >= cols || ev.y >= rows:
		return nil
	case m.Mouse == screen.MouseNone:
		return nil
	case ev.motion() && m.Mouse < screen.MouseButton:
		return nil
	case ev.motion() && m.Mouse == screen.MouseButton && btn == 3:
		return nil
	case ev.release && m.Mouse == screen.MouseX10:
		return nil
	}
	code := ev.code
	if m.Mouse == screen.MouseX10 {
		code &^= mouseMods
	}
	switch m.MouseEncoding {
	case screen.MouseEncodingSGR, screen.MouseEncodingSGRPixels:
		// SGR-Pixels wants pixels the client did not send: cells are the
		// best guess left.
		b := append([]byte(nil), mousePrefix...)
		b = strconv.AppendInt(b, int64(code), 10)
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(ev.x+1), 10)
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(ev.y+1), 10)
		if ev.release {
			return append(b, 'm')
		}
		return append(b, 'M')
	}
	// The older encodings say "a button went up" without saying which.
	if ev.release {
		code = 3 | code&mouseMods
	}
	switch m.MouseEncoding {
	case screen.MouseEncodingURXVT:
		b := []byte("\x1b[")
		b = strconv.AppendInt(b, int64(code+32), 10)
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(ev.x+1), 10)
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(ev.y+1), 10)
		return append(b, 'M')
	case screen.MouseEncodingUTF8:
		if ev.x+33 > 2047 || ev.y+33 > 2047 {
			return nil
		}
		b := []byte("\x1b[M")
		b = utf8.AppendRune(b, rune(code+32))
		b = utf8.AppendRune(b, rune(ev.x+33))
		return utf8.AppendRune(b, rune(ev.y+33))
	}
	if ev.x+33 > 255 || ev.y+33 > 255 || code+32 > 255 {
		return nil // past what one byte can say
	}
	return []byte{0x1b, '[', 'M', byte(code + 32), byte(ev.x + 33), byte(ev.y + 33)}
}
