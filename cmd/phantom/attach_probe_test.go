package main

import (
	"bytes"
	"strings"
	"testing"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

func TestParseTermReply(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want termReply
		n    int
	}{
		{"DA1 with the clipboard", "\x1b[?64;1;2;52;22cX", termReply{kind: replyDA1, clipboard: true}, 16},
		{"DA1 without", "\x1b[?62;22c", termReply{kind: replyDA1}, 9},
		{"DA1 with 520, not 52", "\x1b[?62;520c", termReply{kind: replyDA1}, 10},
		{"Ms announced, ST", "\x1bP1+r4d73=5c45\x1b\\k", termReply{kind: replyCap, ms: true}, 16},
		{"Ms announced, BEL", "\x1bP1+r4D73=\a", termReply{kind: replyCap, ms: true}, 11},
		{"Ms refused", "\x1bP0+r4d73\x1b\\", termReply{kind: replyCap}, 11},
		{"another capability", "\x1bP1+r636f=3235\x1b\\", termReply{kind: replyCap}, 16},
		{"RGB announced with a value", "\x1bP1+r524742=382f382f38\x1b\\", termReply{kind: replyCap, rgb: true}, 24},
		{"RGB announced, a flag", "\x1bP1+r524742\x1b\\", termReply{kind: replyCap, rgb: true}, 13},
		{"Tc announced", "\x1bP1+r5463\x1b\\", termReply{kind: replyCap, rgb: true}, 11},
		{"RGB refused", "\x1bP0+r524742\x1b\\", termReply{kind: replyCap}, 13},
		{"XTVERSION, ST", "\x1bP>|WezTerm 20240203-110809-5046fc22\x1b\\x", termReply{kind: replyVersion, version: "WezTerm 20240203-110809-5046fc22"}, 38},
		{"XTVERSION, BEL", "\x1bP>|XTerm(388)\a", termReply{kind: replyVersion, version: "XTerm(388)"}, 15},
		{"XTVERSION cut short", "\x1bP>|kit", termReply{}, -1},
		{"XTVERSION's start", "\x1bP>", termReply{}, -1},
		{"DA1 cut short", "\x1b[?64;1", termReply{}, -1},
		{"XTGETTCAP cut short", "\x1bP1+r4d", termReply{}, -1},
		{"XTGETTCAP cut inside ST", "\x1bP1+r4d73=1\x1b", termReply{}, -1},
		{"ESC [ alone", "\x1b[", termReply{}, -1},
		{"ESC alone: the Escape key, or a reply's start", "\x1b", termReply{}, -1},
		{"an arrow key", "\x1b[A", termReply{}, 0},
		{"a mouse report", "\x1b[<0;1;1M", termReply{}, 0},
		{"Alt-P then a letter", "\x1bPx", termReply{}, 0},
		{"a DCS that is not a reply", "\x1bP1$r0m\x1b\\", termReply{}, 0},
		{"not an escape", "abc", termReply{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, n := parseTermReply([]byte(tt.in))
			if r != tt.want || n != tt.n {
				t.Errorf("parseTermReply(%q) = %+v, %d; want %+v, %d", tt.in, r, n, tt.want, tt.n)
			}
		})
	}
}

// TestClipboardProbeCutReplies: the replies are taken out wherever the
// reads cut them.
func TestClipboardProbeCutReplies(t *testing.T) {
	reply := "\x1bP1+r4d73=5c45\x1b\\\x1b[?62;22c"
	for i := 1; i < len(reply); i++ {
		p := &clipboardProbe{}
		keys := append(p.keys([]byte("a"+reply[:i])), p.keys([]byte(reply[i:]+"b"))...)
		if string(keys) != "ab" || p.State() != terminalv1.AttachClipboard_STATE_WRITTEN {
			t.Errorf("cut at %d: keys %q, state %v; want \"ab\", written", i, keys, p.State())
		}
	}
}

// TestClipboardProbeLateReply: a reply after the timeout still counts.
func TestClipboardProbeLateReply(t *testing.T) {
	p := &clipboardProbe{changed: make(chan struct{}, 1)}
	p.set(terminalv1.AttachClipboard_STATE_NOT_ANNOUNCED, true)
	<-p.Changed()
	if keys := p.keys([]byte("\x1b[?62;52c")); len(keys) != 0 {
		t.Errorf("the late reply reached the keys: %q", keys)
	}
	select {
	case <-p.Changed():
	default:
		t.Fatal("the late reply signalled no change")
	}
	if p.State() != terminalv1.AttachClipboard_STATE_WRITTEN {
		t.Errorf("state %v after a late reply announcing the clipboard", p.State())
	}
}

func FuzzParseTermReply(f *testing.F) {
	for _, s := range []string{"\x1b[?64;52c", "\x1bP>|foot(1.16.2)\x1b\\", "\x1bP1+r4d73=5c45\x1b\\", "\x1bP0+r4d73\a", "\x1b[A", "\x1b", "\x1b[?", "\x1bP1+r" + strings.Repeat("a", 600), "\x1bP1+r524742=382f382f38\x1b\\", "\x1bP1+r5463\x1b\\"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, n := parseTermReply(b)
		switch {
		case n > len(b) || n < -1:
			t.Fatalf("parseTermReply(%q) = %d: outside the input", b, n)
		case n > 0 && r.kind == 0:
			t.Fatalf("parseTermReply(%q) consumed %d bytes but found no reply", b, n)
		case n <= 0 && r != termReply{}:
			t.Fatalf("parseTermReply(%q) = %+v with no reply", b, r)
		case n == -1 && len(b) >= maxReply:
			t.Fatalf("parseTermReply(%q): a cut reply longer than maxReply", b)
		}
		// Whatever the reader is given, keys come out in order and no
		// byte is invented.
		p := &clipboardProbe{rgb: make(chan struct{})}
		out := p.keys(append([]byte(nil), b...))
		out = append(out, p.keys(append([]byte(nil), b...))...) // twice: RGB announced once
		out = append(out, p.pending...)
		if len(out) > 2*len(b) {
			t.Fatalf("keys(%q) = %q: longer than the input", b, out)
		}
	})
}

// TestClipboardProbeKeys: the probe takes the replies out of the keys,
// across reads, and decides from them.
func TestClipboardProbeKeys(t *testing.T) {
	tests := []struct {
		name  string
		reads []string
		keys  string
		state terminalv1.AttachClipboard_State
	}{
		{"DA1 announces it", []string{"ab\x1b[?62;52cde"}, "abde", terminalv1.AttachClipboard_STATE_WRITTEN},
		{"Ms announces it", []string{"\x1bP1+r4d73=\x1b\\", "\x1b[?62;22c"}, "", terminalv1.AttachClipboard_STATE_WRITTEN},
		{"neither does", []string{"\x1bP0+r4d73\x1b\\\x1b[?62;22c", "x"}, "x", terminalv1.AttachClipboard_STATE_NOT_ANNOUNCED},
		{"a reply cut by a read", []string{"a\x1b[?62", ";52c", "b"}, "ab", terminalv1.AttachClipboard_STATE_WRITTEN},
		{"keys pass while it runs", []string{"\x1b", "\x1b[A", "q"}, "\x1b\x1b[Aq", terminalv1.AttachClipboard_STATE_UNSPECIFIED},
		{"keys after it pass at once", []string{"\x1b[?62c", "\x1b"}, "\x1b", terminalv1.AttachClipboard_STATE_NOT_ANNOUNCED},
		{"a second DA1 changes nothing", []string{"\x1b[?62c", "\x1b[?62;52c"}, "", terminalv1.AttachClipboard_STATE_NOT_ANNOUNCED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &clipboardProbe{}
			var keys []byte
			for _, r := range tt.reads {
				keys = append(keys, p.keys([]byte(r))...)
			}
			if !bytes.Equal(keys, []byte(tt.keys)) || p.State() != tt.state {
				t.Errorf("keys %q, state %v; want %q, %v", keys, p.State(), tt.keys, tt.state)
			}
		})
	}
}

// TestProbeTrueColor: an answer for RGB or Tc, even late and cut by
// reads, announces 24-bit colour once; a refusal does not.
func TestProbeTrueColor(t *testing.T) {
	for _, tt := range []struct {
		name    string
		replies []string // what successive reads bring
		want    bool
	}{
		{"RGB then DA1", []string{"\x1bP1+r524742=382f382f38\x1b\\\x1b[?62;22c"}, true},
		{"Tc, cut", []string{"\x1bP1+r54", "63\x1b\\\x1b[?62c"}, true},
		{"refused both", []string{"\x1bP0+r524742\x1b\\\x1bP0+r5463\x1b\\\x1b[?62c"}, false},
		{"only Ms", []string{"\x1bP1+r4d73=5c45\x1b\\\x1b[?62c"}, false},
		{"late, after DA1", []string{"\x1b[?62c", "\x1bP1+r524742\x1b\\"}, true},
		{"twice", []string{"\x1bP1+r524742\x1b\\\x1bP1+r5463\x1b\\\x1b[?62c"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &clipboardProbe{changed: make(chan struct{}, 1), rgb: make(chan struct{})}
			var keys []byte
			for _, r := range tt.replies {
				keys = append(keys, p.keys([]byte(r))...)
			}
			if len(keys) != 0 {
				t.Errorf("replies reached the tab as keys: %q", keys)
			}
			got := false
			select {
			case <-p.TrueColor():
				got = true
			default:
			}
			if got != tt.want {
				t.Errorf("24-bit colour announced: %v, want %v", got, tt.want)
			}
		})
	}
}
