package screen

import (
	"testing"
)

func FuzzWrite(f *testing.F) {
	for _, tc := range cases {
		f.Add([]byte(tc.in), uint8(tc.cols), uint8(tc.rows), uint16(len(tc.in)/2))
	}
	f.Add([]byte("\x1b[?1049h\x1b[5;10r\x1b[?6h\x1b[2L日本\u0301\x1b[3@x\x1b[?1049l"), uint8(7), uint8(5), uint16(9))
	f.Add([]byte("abcdefghijklmnop日本語\r\n\x1b[44m\x1b[2K\x1b[K\x1b[3P"), uint8(3), uint8(2), uint16(20))
	f.Add(benchData("sgr", 2000), uint8(20), uint8(4), uint16(777))
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
