package screen

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestFastSGRMatchesGeneral checks the SGR fast paths (fastSGR, the SGR
// cache, the reset shortcuts) against the general CSI parser: the same
// random sequences, written whole and byte by byte (too short for any
// fast path), must leave the same pen, starting from random pens.
func TestFastSGRMatchesGeneral(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	num := func() string {
		switch rng.Intn(8) {
		case 0:
			return ""
		case 1:
			return fmt.Sprint(rng.Intn(100000))
		case 2:
			return fmt.Sprint(rng.Intn(1000))
		default:
			return fmt.Sprint(rng.Intn(256))
		}
	}
	code := func() string {
		switch rng.Intn(12) {
		case 0:
			return "38;5;" + num()
		case 1:
			return "48;5;" + num()
		case 2:
			return "38;2;" + num() + ";" + num() + ";" + num()
		case 3:
			return "48;2;" + num() + ";" + num()
		case 4:
			return []string{"38", "48", "58", "4:3", "38:5:7", "0", "", "04", "007"}[rng.Intn(9)]
		case 5:
			return num()
		default:
			return fmt.Sprint(rng.Intn(110))
		}
	}
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		// A random starting pen, then the sequence under test, then text
		// so that the pen shows in the cells.
		fmt.Fprintf(&b, "\x1b[%d;%d;38;5;%d;48;2;1;2;%dmx", 1+rng.Intn(9), 30+rng.Intn(8), rng.Intn(256), rng.Intn(256))
		k := 1 + rng.Intn(4)
		parts := make([]string, k)
		for i := range parts {
			parts[i] = code()
		}
		seq := "\x1b[" + strings.Join(parts, ";") + "m"
		b.WriteString(seq)
		b.WriteString("abcdefghijklmnopqrstuvwxyz")
		in := []byte(b.String())
		s1 := New(Options{Cols: 80, Rows: 4})
		s1.Write(in)
		s1.Write(in) // the second time hits the SGR cache
		s2 := New(Options{Cols: 80, Rows: 4})
		for i := range in {
			s2.Write(in[i : i+1])
		}
		for i := range in {
			s2.Write(in[i : i+1])
		}
		if s1.pen != s2.pen {
			t.Fatalf("%q: pen %+v, general parser %+v", seq, s1.pen, s2.pen)
		}
		r1, r2 := s1.Row(0), s2.Row(0)
		for x := range r1 {
			if r1[x] != r2[x] {
				t.Fatalf("%q: cell %d %+v, general parser %+v", seq, x, r1[x], r2[x])
			}
		}
	}
}
