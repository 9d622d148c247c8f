package screen

import (
	"strings"
	"testing"
)

func FuzzWrite(f *testing.F) {
	for _, tc := range cases {
		f.Add([]byte(tc.in), uint8(tc.cols), uint8(tc.rows), uint16(len(tc.in)/2))
	}
	for _, tc := range append(append([]vtcase(nil), conformanceCases...), edgeCases...) {
		f.Add([]byte(tc.in), uint8(tc.cols), uint8(tc.rows), uint16(len(tc.in)/2))
	}
	// Left/right margins, column scrolling, reverse wrap and DECCOLM mixed
	// with wide characters, combining marks and scrolling.
	f.Add([]byte("\x1b[?69h\x1b[2;7s\x1b[2;4r日本語テキスト\u0301abc\x1b[3 @\x1b[2 A\x1b[2'}\x1b['~\x1b[4h日x\x1b[L\x1b[M\x1b[S\x1b[T\n\n\x1bM\x1b[?45h\b\b\b\x1b[9D\x1b[?40h\x1b[?3h"), uint8(9), uint8(6), uint16(31))
	f.Add([]byte("\x1b]2;a\a\x1b[22;0t\x1b[?45h\x1b[?69h\x1b[1;3s\x1bM日\x1b[?69l\x1b[23;0tabc\x1b[b\r\x1b[b"), uint8(4), uint8(3), uint16(12))
	f.Add([]byte("\x1b[?1049h\x1b[5;10r\x1b[?6h\x1b[2L日本\u0301\x1b[3@x\x1b[?1049l"), uint8(7), uint8(5), uint16(9))
	f.Add([]byte("abcdefghijklmnop日本語\r\n\x1b[44m\x1b[2K\x1b[K\x1b[3P"), uint8(3), uint8(2), uint16(20))
	f.Add([]byte("\x1b[4:3;58:2::255:0:0mcurly\x1b[4:4;58;5;9md\x1b[59;4:5mx\r\n\x1b[58:5:1;4mab\x1b[0m\x1b[21;58;2;1;2;3m日本\n\n\n"), uint8(4), uint8(2), uint16(6))
	f.Add(benchData("sgr", 2000), uint8(20), uint8(4), uint16(777))
	f.Add([]byte("\x1b[?2027hab🇺🇸🇫👍🏽x👨\u200d👩\u200d👧1\ufe0f\u20e3❤\ufe0f日本\u0301\x1b[3G🏽\x1b[?2027l🇺🇸"), uint8(5), uint8(3), uint16(11))
	// Erasing the end of compact rows (a full line, then EL with the wrap
	// pending) and cursor positioning between characters.
	f.Add([]byte("0123456789\x1b[K\x1b[31mab\x1b[mcdefgh\x1b[K\r\nxy\x1b[1D\x1b[Kz\x1b[1;5H\x1b[K\x1b[2;3HA\x1b[3;1HB\x1b[m"), uint8(10), uint8(4), uint16(17))
	f.Fuzz(func(t *testing.T, data []byte, cols, rows uint8, split uint16) {
		c, r := int(cols%100)+1, int(rows%50)+1
		s1, r1 := newRec(c, r, 50)
		s1.Write(data)
		checkInvariants(t, s1)
		k := int(split) % (len(data) + 1)
		s2, r2 := newRec(c, r, 50)
		s2.Write(data[:k])
		checkInvariants(t, s2)
		s2.Write(data[k:])
		if a, b := snapshot(s1, r1), snapshot(s2, r2); a != b {
			t.Fatalf("split at %d differs:\n%s\nwant:\n%s", k, b, a)
		}
		// Forcing rows into cell form along the way (Row materialises
		// compact rows) must not change what is shown.
		s3, r3 := newRec(c, r, 50)
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 7)
			s3.Write(rest[:n])
			s3.Row(s3.Cursor().Y)
			rest = rest[n:]
		}
		if a, b := snapshot(s1, r1), snapshot(s3, r3); a != b {
			t.Fatalf("materialised rows differ:\n%s\nwant:\n%s", b, a)
		}
		// Resizing and reading back never panics and keeps invariants.
		s1.Resize(c/2+1, r/2+1)
		checkInvariants(t, s1)
		s1.Write(data)
		s1.Resize(c+3, r+2)
		checkInvariants(t, s1)
		s1.LastLines(10)
		s1.Write(data)
		checkInvariants(t, s1)
	})
}

// FuzzReflow writes random bytes between random resizes: nothing may
// panic, the invariants hold after every step, and the text of the main
// buffer (its logical lines) never changes through a resize, except for
// lines dropped from the scrollback's bound and trailing blanks.
func FuzzReflow(f *testing.F) {
	f.Add([]byte(strings.Repeat("0123456789", 12)+"\r\nab日本語cd\x1b[31mred\x1b[m😀e\u0301\r\n$ "), []byte{40, 5, 100, 7, 3, 2, 17, 9})
	f.Add([]byte("\x1b[?2027h🇺🇸👍🏽👨\u200d👩\u200d👧x1\ufe0f\u20e3❤\ufe0f"+strings.Repeat("ab", 30)), []byte{5, 3, 2, 2, 80, 4, 1, 1})
	f.Add([]byte("a\x1b[?1049hb\x1b[5;5Hc\x1b[?1049ld\x1b7\x1b[3;3H\x1b8e"), []byte{3, 9, 50, 2})
	f.Add(benchData("sgr", 3000), []byte{13, 4, 200, 10, 1, 1, 77, 3})
	f.Fuzz(func(t *testing.T, data []byte, sizes []byte) {
		if len(sizes) > 16 {
			sizes = sizes[:16]
		}
		s, _ := newRec(20, 5, 1000)
		chunk := len(data)/(len(sizes)/2+1) + 1
		for i := 0; ; i += 2 {
			n := min(chunk, len(data))
			s.Write(data[:n])
			data = data[n:]
			checkInvariants(t, s)
			if i+1 >= len(sizes) {
				break
			}
			before := s.LastLines(1 << 30)
			alt := s.AltScreen()
			dropped := s.sb.trim.lines
			s.Resize(int(sizes[i])%120+1, int(sizes[i+1])%40+1)
			checkInvariants(t, s)
			for k := 0; k < s.ScrollbackLen() && s.cols > 1; k++ {
				cells, _ := s.ScrollbackRow(k)
				if len(cells) > s.cols {
					t.Fatalf("scrollback row %d is %d columns wide at %d", k, len(cells), s.cols)
				}
			}
			// One column holds no wide character: those on the screen
			// are dropped.
			if alt || s.sb.trim.lines != dropped || s.cols < 2 {
				continue
			}
			after := s.LastLines(1 << 30)
			if !sameLines(before, after) {
				t.Fatalf("resize to %dx%d changed the text:\n%q\nwant\n%q", int(sizes[i])%120+1, int(sizes[i+1])%40+1, after, before)
			}
		}
		s.Write(data)
		checkInvariants(t, s)
	})
}

// sameLines compares logical lines, ignoring trailing blank lines.
func sameLines(a, b []string) bool {
	for len(a) > 0 && a[len(a)-1] == "" {
		a = a[:len(a)-1]
	}
	for len(b) > 0 && b[len(b)-1] == "" {
		b = b[:len(b)-1]
	}
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}
