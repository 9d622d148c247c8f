package screen

import "strconv"

// escDispatch handles ESC final (no intermediate).
func (s *Screen) escDispatch(b byte) {
	s.lastRune = 0 // REP repeats only a character right before it
	switch b {
	case '7':
		s.saveCursor()
	case '8':
		s.restoreCursor()
	case 'D':
		s.index()
	case 'E':
		s.index()
		s.carriageReturn()
	case 'H':
		if s.x < s.cols {
			s.tabs[s.x] = true
		}
	case 'M':
		s.reverseIndex()
	case 'c':
		s.fullReset()
	case '=':
		s.m.AppKeypad = true
	case '>':
		s.m.AppKeypad = false
	case 'Z':
		s.sendReply([]byte("\x1b[?62;22c"))
	}
}

// escInterDispatch handles ESC intermediate final.
func (s *Screen) escInterDispatch(inter, b byte) {
	s.lastRune = 0
	switch inter {
	case '#':
		if b == '8' {
			s.alignmentTest()
		}
	case '(', ')':
		g := 0
		if inter == ')' {
			g = 1
		}
		s.charsets[g] = b == '0'
	}
}

// csiDispatch executes a complete CSI sequence with final byte b.
func (s *Screen) csiDispatch(b byte) {
	ps := &s.p
	if b == 'm' && ps.priv == 0 && ps.inter == 0 {
		s.sgr()
		return
	}
	// REP repeats the preceding character only if nothing but SGR
	// came between (ECMA-48: "the preceding character in the data
	// stream"); after REP the same character may be repeated again.
	if b != 'b' || ps.priv != 0 || ps.inter != 0 {
		s.lastRune = 0
	}
	switch ps.priv {
	case 0:
	case '?':
		s.csiPrivate(b)
		return
	case '>':
		switch b {
		case 'c':
			if ps.param0(0, 0) == 0 {
				s.sendReply([]byte("\x1b[>1;10;0c"))
			}
		case 'q':
			if ps.inter == 0 && ps.param0(0, 0) == 0 {
				s.sendReply([]byte("\x1bP>|Phantom\x1b\\"))
			}
		}
		return
	default:
		return
	}
	switch ps.inter {
	case 0:
	case ' ':
		switch b {
		case 'q': // DECSCUSR
			s.m.CursorStyle = ps.param0(0, 0)
		case '@': // SL
			s.scrollColumns(ps.param(0, 1))
		case 'A': // SR
			s.scrollColumns(-ps.param(0, 1))
		}
		return
	case '\'':
		switch b {
		case '}': // DECIC
			s.editColumns(ps.param(0, 1))
		case '~': // DECDC
			s.editColumns(-ps.param(0, 1))
		}
		return
	case '!':
		if b == 'p' {
			s.softReset()
		}
		return
	case '$':
		if b == 'p' { // DECRQM, ANSI modes
			mode := ps.param0(0, 0)
			v := 0
			switch mode {
			case 4:
				v = setReset(s.m.Insert)
			case 20:
				v = setReset(s.m.NewLine)
			}
			s.sendReply([]byte("\x1b[" + strconv.Itoa(mode) + ";" + strconv.Itoa(v) + "$y"))
		}
		return
	default:
		return
	}
	switch b {
	case 'm':
		s.sgr()
	case '@':
		s.ich(ps.param(0, 1))
	case 'A':
		s.moveRel(-ps.param(0, 1))
	case 'B':
		s.moveRel(ps.param(0, 1))
	case 'e': // VPR: like VPA, to the screen edge (xterm), not CUD
		s.cursorSet(s.curRow()+ps.param(0, 1), s.curCol())
	case 'C':
		s.cursorForward(ps.param(0, 1))
	case 'a': // HPR: like HPA (xterm), not CUF
		s.cursorSet(s.curRow(), s.curCol()+ps.param(0, 1))
	case 'D':
		s.cursorBack(ps.param(0, 1))
	case 'E':
		s.moveRel(ps.param(0, 1))
		s.carriageReturn()
	case 'F':
		s.moveRel(-ps.param(0, 1))
		s.carriageReturn()
	case 'G', '`':
		s.cursorSet(s.curRow(), ps.param(0, 1)-1)
	case 'H', 'f':
		s.cup(ps.param(0, 1), ps.param(1, 1))
	case 'I':
		s.tab(ps.param(0, 1))
	case 'J':
		s.eraseDisplay(ps.param0(0, 0))
	case 'K':
		s.eraseLine(ps.param0(0, 0))
	case 'L':
		s.insertLines(ps.param(0, 1))
	case 'M':
		s.deleteLines(ps.param(0, 1))
	case 'P':
		s.dch(ps.param(0, 1))
	case 'S':
		n := ps.param(0, 1)
		s.scrollUp(s.top, s.bot, n, true)
		s.unwrapAbove(s.bot - min(n, s.bot-s.top+1) + 1)
	case 'T':
		if ps.np <= 1 {
			s.scrollDown(s.top, s.bot, ps.param(0, 1))
		}
	case 'X':
		s.wrapNext = false
		s.eraseCells(s.y, s.x, s.x+ps.param(0, 1))
	case 'Z':
		s.backTab(ps.param(0, 1))
	case 'b':
		s.rep(ps.param(0, 1))
	case 'c':
		if ps.param0(0, 0) == 0 {
			s.sendReply([]byte("\x1b[?62;22c"))
		}
	case 'd':
		s.cursorSet(ps.param(0, 1)-1, s.curCol())
	case 'g':
		switch ps.param0(0, 0) {
		case 0:
			s.tabs[s.x] = false
		case 3:
			clear(s.tabs)
		}
	case 'h', 'l':
		for i := 0; i < ps.np; i++ {
			switch ps.params[i] {
			case 4:
				s.m.Insert = b == 'h'
			case 20:
				s.m.NewLine = b == 'h'
			}
		}
	case 'n':
		switch ps.param0(0, 0) {
		case 5:
			s.sendReply([]byte("\x1b[0n"))
		case 6:
			s.sendReply([]byte("\x1b[" + strconv.Itoa(s.reportRow()) + ";" + strconv.Itoa(s.x+1) + "R"))
		}
	case 'r':
		s.setScrollRegion(ps.param(0, 1), ps.param(1, s.rows))
	case 's':
		if s.ext.lrmm { // DECSLRM replaces SCOSC while DECLRMM is set
			s.setLRMargins(ps.param(0, 1), ps.param(1, s.cols))
		} else {
			s.saveCursor()
		}
	case 'u':
		s.restoreCursor()
	case 't':
		switch ps.param0(0, 0) {
		case 18:
			s.sendReply([]byte("\x1b[8;" + strconv.Itoa(s.rows) + ";" + strconv.Itoa(s.cols) + "t"))
		case 22, 23: // XTPUSHTITLE, XTPOPTITLE
			s.titleStack(ps.params[0] == 22, ps.param0(1, 0))
		}
	}
}

// reportRow is the 1-based cursor row as DSR reports it (origin aware).
func (s *Screen) reportRow() int {
	if s.m.Origin {
		return s.y - s.top + 1
	}
	return s.y + 1
}

// csiPrivate handles CSI ? ... sequences.
func (s *Screen) csiPrivate(b byte) {
	ps := &s.p
	if ps.inter == '$' {
		if b == 'p' { // DECRQM
			mode := ps.param0(0, 0)
			v, ok := s.privateMode(mode)
			r := 0
			if ok {
				r = setReset(v)
			}
			s.sendReply([]byte("\x1b[?" + strconv.Itoa(mode) + ";" + strconv.Itoa(r) + "$y"))
		}
		return
	}
	if ps.inter != 0 {
		return
	}
	switch b {
	case 'h', 'l':
		for i := 0; i < ps.np; i++ {
			s.setPrivateMode(int(ps.params[i]), b == 'h')
		}
	case 'J':
		s.eraseDisplay(ps.param0(0, 0))
	case 'K':
		s.eraseLine(ps.param0(0, 0))
	case 'n':
		if ps.param0(0, 0) == 6 {
			s.sendReply([]byte("\x1b[?" + strconv.Itoa(s.reportRow()) + ";" + strconv.Itoa(s.x+1) + "R"))
		}
	}
}

func setReset(v bool) int {
	if v {
		return 1
	}
	return 2
}

func (s *Screen) sendReply(b []byte) {
	if s.reply != nil {
		s.reply(b)
	}
}

func (s *Screen) event(e Event) {
	if s.onEvent != nil {
		s.onEvent(e)
	}
}
