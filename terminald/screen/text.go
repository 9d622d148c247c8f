package screen

import "unicode/utf8"

// appendRowText appends the text of visible cells (no right halves of wide
// characters, no wrap padding) to dst.
func appendRowText(dst []byte, l *line) []byte {
	if l.compact {
		return append(dst, l.text...)
	}
	for i := range l.c {
		c := &l.c[i]
		if c.w == 0 || c.fl&flPad != 0 {
			continue
		}
		if c.r < utf8.RuneSelf {
			dst = append(dst, byte(c.r))
		} else {
			dst = utf8.AppendRune(dst, c.r)
		}
		if c.fl&flComb != 0 {
			dst = append(dst, l.comb[i]...)
		}
	}
	return dst
}

// lineEmpty reports whether a row shows no text.
func lineEmpty(l *line) bool {
	if l.compact {
		for _, b := range l.text {
			if b != ' ' {
				return false
			}
		}
		return true
	}
	for i := range l.c {
		if l.c[i].r != ' ' || l.c[i].fl&flComb != 0 {
			return false
		}
	}
	return true
}

func trimSpaces(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return b
}

// LastLines returns the last n logical lines of scrollback plus screen as
// plain text: soft-wrapped rows are joined into one line, trailing spaces
// are trimmed, and trailing blank rows of the screen are dropped. On the
// alternate screen it returns (the last n of) the visible rows instead,
// one per row, without trailing blank rows.
func (s *Screen) LastLines(n int) []string {
	if n <= 0 {
		return nil
	}
	if s.altActive {
		last := s.rows - 1
		for last >= 0 && lineEmpty(s.cur.lines[last]) {
			last--
		}
		first := max(0, last+1-n)
		out := make([]string, 0, last+1-first)
		var buf []byte
		for y := first; y <= last; y++ {
			buf = trimSpaces(appendRowText(buf[:0], s.cur.lines[y]))
			out = append(out, string(buf))
		}
		return out
	}

	last := s.rows - 1
	for last >= 0 && lineEmpty(s.main.lines[last]) {
		last--
	}
	total := s.sb.n + last + 1
	// Physical rows k in [0, total): scrollback first, then the screen.
	wrapped := func(k int) bool {
		if k < s.sb.n {
			return s.sb.at(k).wrapped
		}
		return s.main.lines[k-s.sb.n].wrapped
	}
	rev := make([]string, 0, min(n, total))
	var pieces [][]byte
	var screenBuf []byte
	end := total // the logical line being built spans rows [k, end)
	for k := total - 1; k >= 0 && len(rev) < n; k-- {
		if k > 0 && wrapped(k-1) {
			continue
		}
		// Rows [k, end) form one logical line.
		pieces = pieces[:0]
		size := 0
		for j := k; j < end; j++ {
			var p []byte
			if j < s.sb.n {
				p = lineText(s.sb.data(s.sb.at(j)))
			} else {
				start := len(screenBuf)
				screenBuf = appendRowText(screenBuf, s.main.lines[j-s.sb.n])
				p = screenBuf[start:]
			}
			pieces = append(pieces, p)
			size += len(p)
		}
		buf := make([]byte, 0, size)
		for _, p := range pieces {
			buf = append(buf, p...)
		}
		rev = append(rev, string(trimSpaces(buf)))
		end = k
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}
