package terminald

import (
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/terminald/screen"
)

func TestParseCursor(t *testing.T) {
	tests := []struct {
		in   string
		want readCursor
		err  string
	}{
		{in: "t3.5z.n.120.7", want: readCursor{tab: "t3", epoch: 215, pos: screen.Pos{Seq: 120, Off: 7}}},
		{in: "t3.0.o.120.0.20", want: readCursor{tab: "t3", older: true, pos: screen.Pos{Seq: 120}, stop: 20}},
		{in: "t3.0.o.20.0.20", want: readCursor{tab: "t3", older: true, pos: screen.Pos{Seq: 20}, stop: 20}},
		{in: "t3.0.n.18446744073709551615.0", want: readCursor{tab: "t3", pos: screen.Pos{Seq: 1<<64 - 1}}},
		{in: "", err: "wrong number of parts"},
		{in: "t3.0.n.1", err: "wrong number of parts"},
		{in: ".0.n.1.0", err: "no tab"},
		{in: "t3.-1.n.1.0", err: "bad run"},
		{in: "t3.0.x.1.0", err: "bad kind"},
		{in: "t3.0.n.1.0.0", err: "bad kind"},
		{in: "t3.0.o.1.0", err: "bad kind"},
		{in: "t3.0.n.01.0", err: "bad line number"},
		{in: "t3.0.n.+1.0", err: "bad line number"},
		{in: "t3.0.n.18446744073709551616.0", err: "bad line number"},
		{in: "t3.0.n.1.99999999999999", err: "bad offset"},
		{in: "t3.0.o.5.0.6", err: "bad window"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseCursor(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parseCursor(%q) = %+v, %v; want an error saying %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseCursor(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
			if s := got.String(); s != tc.in {
				t.Fatalf("String() = %q, want %q", s, tc.in)
			}
		})
	}
}

// FuzzParseCursor checks that parsing never panics and that every cursor
// it accepts has exactly one spelling: the one String gives.
func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{"t3.5z.n.120.7", "t1.lx2abc.o.99.1024.3", "t3.0.n.01.0", "..n..", "t3.zzzzzzzzzzzzzzzz.n.1.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseCursor(s)
		if err != nil {
			return
		}
		if got := c.String(); got != s {
			t.Fatalf("parseCursor(%q) = %+v, which prints as %q", s, c, got)
		}
		if c.older && c.stop > c.pos.Seq {
			t.Fatalf("parseCursor(%q): window stop %d after its end %d", s, c.stop, c.pos.Seq)
		}
	})
}
