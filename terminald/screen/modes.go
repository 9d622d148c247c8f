package screen

// MouseMode is the mouse tracking mode a program asked for.
type MouseMode int

// Mouse tracking modes (DECSET 9, 1000, 1002, 1003).
const (
	MouseNone   MouseMode = iota // no mouse reporting
	MouseX10                     // ?9: button presses only
	MouseNormal                  // ?1000: presses and releases
	MouseButton                  // ?1002: also motion while a button is down
	MouseAny                     // ?1003: all motion
)

// MouseEncoding is how mouse reports are encoded.
type MouseEncoding int

// Mouse report encodings (DECSET 1005, 1006, 1015, 1016).
const (
	MouseEncodingDefault   MouseEncoding = iota // X10 bytes
	MouseEncodingUTF8                           // ?1005
	MouseEncodingSGR                            // ?1006
	MouseEncodingURXVT                          // ?1015
	MouseEncodingSGRPixels                      // ?1016
)

// Modes are the terminal modes set by the program. An attaching client
// needs them to encode keys, mouse and paste the way the program expects.
type Modes struct {
	AppCursor      bool          // DECCKM (?1): cursor keys send SS3
	AppKeypad      bool          // DECKPAM (ESC =)
	BracketedPaste bool          // ?2004
	Mouse          MouseMode     // ?9 / ?1000 / ?1002 / ?1003
	MouseEncoding  MouseEncoding // ?1005 / ?1006 / ?1015 / ?1016
	FocusEvents    bool          // ?1004
	AltScroll      bool          // ?1007: wheel sends cursor keys on the alt screen
	Autowrap       bool          // DECAWM (?7)
	Origin         bool          // DECOM (?6)
	Insert         bool          // IRM (CSI 4 h)
	NewLine        bool          // LNM (CSI 20 h): LF also returns the carriage
	CursorVisible  bool          // DECTCEM (?25)
	CursorBlink    bool          // ?12
	CursorStyle    int           // DECSCUSR parameter (0 = default)
	ReverseVideo   bool          // DECSCNM (?5)
	SyncOutput     bool          // ?2026 synchronized output
	// GraphemeCluster (?2027) measures text by grapheme clusters instead
	// of per code point (grapheme_width.go).
	GraphemeCluster bool
}

// setPrivateMode handles one DECSET/DECRST parameter.
func (s *Screen) setPrivateMode(mode int, on bool) {
	m := &s.m
	switch mode {
	case 1:
		m.AppCursor = on
	case 5:
		m.ReverseVideo = on
		s.markAllDirty()
	case 6:
		m.Origin = on
		s.cup(1, 1)
	case 7:
		m.Autowrap = on
		if !on {
			s.wrapNext = false
		}
	case 9, 1000, 1002, 1003:
		mm := MouseX10
		switch mode {
		case 1000:
			mm = MouseNormal
		case 1002:
			mm = MouseButton
		case 1003:
			mm = MouseAny
		}
		if on {
			m.Mouse = mm
		} else if m.Mouse == mm {
			m.Mouse = MouseNone
		}
	case 1005, 1006, 1015, 1016:
		e := MouseEncodingUTF8
		switch mode {
		case 1006:
			e = MouseEncodingSGR
		case 1015:
			e = MouseEncodingURXVT
		case 1016:
			e = MouseEncodingSGRPixels
		}
		if on {
			m.MouseEncoding = e
		} else if m.MouseEncoding == e {
			m.MouseEncoding = MouseEncodingDefault
		}
	case 3: // DECCOLM, only when ?40 allows it
		s.setColumnMode(on)
	case 40:
		s.ext.allow132 = on
	case 45: // reverse wraparound
		s.ext.reverseWrap = on
	case 69: // DECLRMM; margins go back to the full width either way
		s.ext.lrmm = on
		s.resetLR()
	case 12:
		m.CursorBlink = on
	case 25:
		m.CursorVisible = on
	case 1004:
		m.FocusEvents = on
	case 1007:
		m.AltScroll = on
	case 2004:
		m.BracketedPaste = on
	case 2026:
		m.SyncOutput = on
	case 2027:
		m.GraphemeCluster = on
	case 47:
		if on {
			s.enterAlt(false)
		} else {
			s.exitAlt()
		}
	case 1047:
		if on {
			s.enterAlt(false)
		} else {
			if s.altActive {
				s.enterAlt(true) // clear the alt screen on leaving it
			}
			s.exitAlt()
		}
	case 1048:
		if on {
			s.saveCursor()
		} else {
			s.restoreCursor()
		}
	case 1049:
		if on {
			if !s.altActive {
				s.saveCursor()
			}
			s.enterAlt(true)
		} else if s.altActive {
			s.exitAlt()
			s.restoreCursor()
		}
	}
}

// privateMode reports a DEC private mode for DECRQM.
func (s *Screen) privateMode(mode int) (on, known bool) {
	m := &s.m
	switch mode {
	case 1:
		return m.AppCursor, true
	case 5:
		return m.ReverseVideo, true
	case 6:
		return m.Origin, true
	case 7:
		return m.Autowrap, true
	case 9:
		return m.Mouse == MouseX10, true
	case 1000:
		return m.Mouse == MouseNormal, true
	case 1002:
		return m.Mouse == MouseButton, true
	case 1003:
		return m.Mouse == MouseAny, true
	case 1005:
		return m.MouseEncoding == MouseEncodingUTF8, true
	case 1006:
		return m.MouseEncoding == MouseEncodingSGR, true
	case 1015:
		return m.MouseEncoding == MouseEncodingURXVT, true
	case 1016:
		return m.MouseEncoding == MouseEncodingSGRPixels, true
	case 3:
		return s.ext.col132, true
	case 40:
		return s.ext.allow132, true
	case 45:
		return s.ext.reverseWrap, true
	case 69:
		return s.ext.lrmm, true
	case 12:
		return m.CursorBlink, true
	case 25:
		return m.CursorVisible, true
	case 1004:
		return m.FocusEvents, true
	case 1007:
		return m.AltScroll, true
	case 2004:
		return m.BracketedPaste, true
	case 2026:
		return m.SyncOutput, true
	case 2027:
		return m.GraphemeCluster, true
	case 47, 1047, 1049:
		return s.altActive, true
	}
	return false, false
}
