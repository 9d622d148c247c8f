package main

// Red team for issue 25's attention (bells and notifications,
// terminald/attach/attention*.go, cmd/phantom/attach_notify.go): attacks
// from real tabs, plain and sandboxed. A HOLE test failed before its fix;
// a HOLD test asserts a refusal that was already there.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/phantom-dev/phantom/internal/notify/notifytest"
	"github.com/phantom-dev/phantom/terminald/attach"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// rt25bModes are the attacker tabs: plain, and sandboxed where the
// kernel has the sandbox.
func rt25bModes() []struct {
	name  string
	flags []string
} {
	modes := []struct {
		name  string
		flags []string
	}{{"plain", nil}}
	if sandbox.ABI() >= sandbox.MinABI {
		modes = append(modes, struct {
			name  string
			flags []string
		}{"boxed", []string{"--sandbox"}})
	}
	return modes
}

// rt25bLive lists what of s could drive a terminal or a notification
// server: C0 and C1 controls (ESC, BEL, the ST and OSC of 8-bit C1),
// bytes that are not UTF-8 (a lone 0x9c is ST to some terminals), bidi
// controls and line breaks.
func rt25bLive(s string) []string {
	var bad []string
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			bad = append(bad, fmt.Sprintf("byte %#x at %d", s[i], i))
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			bad = append(bad, fmt.Sprintf("control %U at %d", r, i))
		case attach.BidiControl(r) || r == 0x2028 || r == 0x2029:
			bad = append(bad, fmt.Sprintf("%U at %d", r, i))
		case !unicode.IsPrint(r) && r != ' ':
			bad = append(bad, fmt.Sprintf("unprintable %U at %d", r, i))
		}
	}
	return bad
}

// notifyEscapes returns the texts of the notification escapes starting
// with start in raw, each up to its BEL (to the end when it has none).
func notifyEscapes(raw, start string) []string {
	var out []string
	for {
		i := strings.Index(raw, start)
		if i < 0 {
			return out
		}
		raw = raw[i+len(start):]
		j := strings.IndexByte(raw, '\a')
		if j < 0 {
			return append(out, raw+" [no BEL]")
		}
		out = append(out, raw[:j])
		raw = raw[j+1:]
	}
}

// rt25bClients attaches a client whose terminal announced kitty (OSC 9)
// and one whose terminal announced foot (OSC 777).
func rt25bClients(t *testing.T, in *instance) (kitty, foot *client) {
	t.Helper()
	kitty = in.attach(t, 120, 24, nil)
	foot = in.attach(t, 120, 24, nil)
	kitty.answerProbe(versionReply("kitty(0.32.2)"))
	foot.answerProbe(versionReply("foot(1.16.2)"))
	for _, c := range []*client{kitty, foot} {
		c.waitStatus("the status line", func(s string) bool { return strings.Contains(s, "1:") })
	}
	return kitty, foot
}

// rt25bCount counts the notifications with what in their title that the
// kitty and the foot client got, together.
func rt25bCount(kitty, foot *client, what string) int {
	n := 0
	for _, s := range notifyEscapes(kitty.rawText(), "\x1b]9;") {
		if title, _, _ := strings.Cut(s, ": tab "); strings.Contains(title, what+":") || strings.HasSuffix(title, what) {
			n++
		}
	}
	for _, s := range notifyEscapes(foot.rawText(), "\x1b]777;notify;") {
		if title, _, _ := strings.Cut(s, ";"); strings.HasSuffix(title, what) {
			n++
		}
	}
	return n
}

// rt25bInert checks every notification escape the clients got and every
// desktop notification: inert text, an OSC 777 title without ';' (else
// the terminal takes the rest as the body), the fixed "Phantom: " start,
// a body without markup. It returns the OSC 9 texts, the OSC 777 titles
// and the desktop summaries.
func rt25bInert(t *testing.T, kitty, foot *client, svc *notifytest.Service) (osc9, titles, summaries []string) {
	t.Helper()
	for _, s := range notifyEscapes(kitty.rawText(), "\x1b]9;") {
		if bad := rt25bLive(s); len(bad) > 0 {
			t.Errorf("the kitty client's OSC 9 %q carries %v", s, bad)
		}
		if !strings.HasPrefix(s, "Phantom: ") {
			t.Errorf("the kitty client's OSC 9 %q does not start with Phantom's name", s)
		}
		osc9 = append(osc9, s)
	}
	for _, s := range notifyEscapes(foot.rawText(), "\x1b]777;notify;") {
		if bad := rt25bLive(s); len(bad) > 0 {
			t.Errorf("the foot client's OSC 777 %q carries %v", s, bad)
		}
		title, _, _ := strings.Cut(s, ";")
		if !strings.HasPrefix(title, "Phantom: ") {
			t.Errorf("the foot client's OSC 777 title %q does not start with Phantom's name", title)
		}
		titles = append(titles, title)
	}
	for _, raw := range []string{kitty.rawText(), foot.rawText()} {
		if strings.Contains(raw, "\x1b]2;PWNED") {
			t.Errorf("the agent's title escape reached a client raw")
		}
	}
	if svc == nil {
		return osc9, titles, nil
	}
	for _, n := range svc.Received() {
		for what, s := range map[string]string{"summary": n.Summary, "body": n.Body} {
			if bad := rt25bLive(s); len(bad) > 0 {
				t.Errorf("the desktop notification's %s %q carries %v", what, s, bad)
			}
		}
		if strings.ContainsAny(n.Body, "<>") {
			t.Errorf("the desktop notification's body %q carries markup", n.Body)
		}
		summaries = append(summaries, n.Summary)
	}
	return osc9, titles, summaries
}

// rt25bEvilClient is an agent's MCP client name (printable, as the
// gateway's handshake demands) with markup a notification server would
// take for a link and an image, and ';', OSC 777's field separator.
const rt25bEvilClient = `<a href="https://evil.example/">ok</a>;<img src="file:///etc/passwd">;x`

// TestRedTeam25b_NotificationTextIsInert — HOLD. Agents in a plain and a
// sandboxed tab name their tab with escapes, C1 controls, a bidi override
// and ';', set its title likewise, call themselves by a name full of
// markup and ';', then ask a permission (a sheet) and wait (an agent
// waiting for input). The OSC 9 a kitty client gets, the OSC 777 a foot
// client gets and the desktop notifications hold no control, no bidi, no
// title cut by ';' and no markup.
func TestRedTeam25b_NotificationTextIsInert(t *testing.T) {
	svc := notifytest.Start(t, true)
	in := startPhantomWith(t, `{"shell":"/bin/bash","attention":{"desktop":"on"}}`, "DBUS_SESSION_BUS_ADDRESS="+svc.Address)
	if os.Getenv("RT25B_NODESK") != "" {
		in = startPhantom(t)
	}
	kitty, foot := rt25bClients(t, in)
	target := permTarget(t, in.env, "rt25b-target")
	for _, m := range rt25bModes() {
		a := newAttacker(t, in.env, m.name, m.flags...)
		// The tab's title, by the tab's own terminal: UTF-8 C1 controls
		// (U+009C is ST), a bidi override, ';' and markup.
		title := `\033]2;T\302\234\342\200\256;a;b<b>x</b>\007`
		if r := a.run(`printf '` + title + `' >` + "/dev/tty"); r.code != 0 {
			t.Fatalf("%s: set the title: %v", m.name, r)
		}
		gone := filepath.Join(a.dir, "go")
		asked := rt25bCount(kitty, foot, " asks permission")
		run := a.agent(rt25bEvilClient+"-"+m.name,
			map[string]any{"op": "call", "tool": "update_terminal", "args": map[string]any{"terminal_id": a.tab,
				"name": rt25Evil + ";n;\u009c\u009d\x1b\\" + "<i>" + m.name}},
			permRead(target),
			map[string]any{"op": "wait", "file": gone},
		)
		waitStep(t, run.read, 0)
		s := agentAsksHuman(t, in.env, run.read, 1, a.tab, "read_output", m.name+" agent asks with an evil name")
		eventually(t, m.name+": the sheet's notifications", func() (bool, string) {
			return rt25bCount(kitty, foot, " asks permission") >= asked+2, fmt.Sprintf("kitty %q\nfoot %q",
				notifyEscapes(kitty.rawText(), "\x1b]9;"), notifyEscapes(foot.rawText(), "\x1b]777;notify;"))
		})
		deny(t, in.env, s)
		waitStep(t, run.read, 1)
		if err := os.WriteFile(gone, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the desktop notifications", func() (bool, string) {
		return len(svc.Received()) >= len(rt25bModes()), formatNotes(svc.Received())
	})
	_, titles, summaries := rt25bInert(t, kitty, foot, svc)
	for _, title := range append(titles, summaries...) {
		if !strings.HasSuffix(title, "asks permission") && !strings.HasSuffix(title, "waits for input") {
			t.Errorf("title %q does not end with what happened", title)
		}
	}
}

// TestRedTeam25b_LongNameKeepsWhatHappened — HOLE (a notification's title
// was cut at 64 characters after the agent's name was put in, and the
// sheet's body at 200 after the agent's name and its tab's title: an
// agent calling itself by a long name, or its tab by a long title, cut
// off what happened — "waits for input" read as the agent's own words,
// e.g. a permission request of its making — and what a sheet asks).
// An agent whose client name is 128 bytes of "asks permission to…" and
// whose tab's title is long asks and waits: each notification still
// ends with what happened, and the sheet's says which tool it asks for.
func TestRedTeam25b_LongNameKeepsWhatHappened(t *testing.T) {
	in := startPhantom(t)
	kitty, foot := rt25bClients(t, in)
	target := permTarget(t, in.env, "rt25b-long-target")
	a := newAttacker(t, in.env, "long")
	// The gateway takes client names of up to 128 bytes.
	name := "claude asks permission to read ~/.ssh (answer yes: prefix s) "
	name += strings.Repeat("x", 128-len(name))
	gone := filepath.Join(a.dir, "go")
	run := a.agent(name,
		map[string]any{"op": "call", "tool": "update_terminal", "args": map[string]any{"terminal_id": a.tab,
			"name": strings.Repeat("a very long tab name ", 10)}},
		permRead(target),
		map[string]any{"op": "wait", "file": gone},
	)
	waitStep(t, run.read, 0)
	s := agentAsksHuman(t, in.env, run.read, 1, a.tab, "read_output", "an agent with a long name")
	eventually(t, "the sheet's notification", func() (bool, string) {
		return len(notifyEscapes(kitty.rawText(), "\x1b]9;")) >= 1 && len(notifyEscapes(foot.rawText(), "\x1b]777;notify;")) >= 1, ""
	})
	deny(t, in.env, s)
	waitStep(t, run.read, 1)
	eventually(t, "the waiting agent's notification", func() (bool, string) {
		return len(notifyEscapes(kitty.rawText(), "\x1b]9;")) >= 2 && len(notifyEscapes(foot.rawText(), "\x1b]777;notify;")) >= 2,
			fmt.Sprintf("%q", notifyEscapes(kitty.rawText(), "\x1b]9;"))
	})
	os.WriteFile(gone, nil, 0o600)
	osc9, titles, _ := rt25bInert(t, kitty, foot, nil)
	if len(titles) < 2 || len(osc9) < 2 {
		t.Fatalf("want 2 notifications each, got %q and %q", osc9, titles)
	}
	if !strings.HasSuffix(titles[0], " asks permission") || !strings.HasSuffix(titles[1], " waits for input") {
		t.Errorf("the OSC 777 titles %q do not end with what happened", titles)
	}
	if !strings.Contains(osc9[0], "asks permission: ") || !strings.Contains(osc9[1], "waits for input: ") {
		t.Errorf("the OSC 9 texts %q do not say what happened", osc9)
	}
	if !strings.Contains(osc9[0], "(read_output)") {
		t.Errorf("the sheet's OSC 9 %q does not say which tool the agent asks for", osc9[0])
	}
}

// TestRedTeam25b_BellFlood — HOLD. A plain and a sandboxed tab write
// millions of BELs as fast as they can, in the background and then shown;
// the client gets a bounded number of BELs (one per half second at most:
// generously bounded by the flood's length) and what the tab prints after
// the flood still reaches it.
func TestRedTeam25b_BellFlood(t *testing.T) {
	in := startPhantom(t)
	c := in.attach(t, 100, 24, nil)
	c.answerProbe(versionReply("XTerm(388)"))
	c.waitStatus("the status line", func(s string) bool { return strings.Contains(s, "1:") })
	for i, m := range rt25bModes() {
		a := newAttacker(t, in.env, "flood"+m.name, m.flags...)
		for _, shown := range []bool{false, true} {
			if shown {
				c.send("\x1c" + fmt.Sprint(i+2)) // prefix N: show the attacker's tab
				c.waitStatus("the attacker's tab shown", func(s string) bool { return strings.Contains(s, fmt.Sprintf("%d:flood%s*", i+2, m.name)) })
			}
			before := c.bells()
			start := time.Now()
			marker := fmt.Sprintf("after-the-flood-%s-%v", m.name, shown)
			// BELs as fast as the tab takes them for 3 seconds, then a line.
			j := a.start(`end=$(($(date +%s)+3)); while [ "$(date +%s)" -lt "$end" ]; do head -c 1000000 /dev/zero | tr '\0' '\a'; done >` +
				"/dev/tty" + `; echo ` + marker + ` >` + "/dev/tty")
			if r := j.wait(); r.code != 0 {
				t.Fatalf("%s: the flood: %v", m.name, r)
			}
			if shown {
				c.waitText(marker)
			} else {
				eventually(t, "the flood's end in the tab", func() (bool, string) {
					out := in.must(t, "read", a.tab)
					return strings.Contains(out, marker), out
				})
			}
			elapsed := time.Since(start)
			// Let what terminald still queued arrive.
			time.Sleep(time.Second)
			got := c.bells() - before
			// At most one per ringGap (500 ms): twice that, and some.
			limit := int(4*elapsed/time.Second) + 6
			t.Logf("%s shown=%v: %d BELs to the client over %v", m.name, shown, got, elapsed)
			if got > limit {
				t.Errorf("%s (shown %v): the client got %d BELs over %v of flood; want at most %d", m.name, shown, got, elapsed, limit)
			}
		}
		c.send("\x1c1")
		c.waitStatus("tab 1 shown", func(s string) bool { return strings.Contains(s, "1:") && !strings.Contains(s, "flood"+m.name+"*") })
	}
}

// TestRedTeam25b_TabCannotAnnounceNotifications — HOLD. While the
// client's probe waits for the terminal's answer, an agent's tab prints
// a kitty XTVERSION answer and DA1 (as if its terminal announced OSC 9),
// notification escapes of its own and the probe's queries; the outer
// terminal then answers as xterm. A sheet gets the client a BEL but no
// notification escape, and none of the tab's bytes reach it raw.
func TestRedTeam25b_TabCannotAnnounceNotifications(t *testing.T) {
	in := startPhantom(t)
	c := in.attach(t, 100, 24, nil)
	c.waitRaw("the probe", probeQuery)
	target := permTarget(t, in.env, "rt25b-probe-target")
	a := newAttacker(t, in.env, "spoof")
	// Into the tab's terminal: the answer of a kitty, then OSC 777 and
	// OSC 9 notifications and the probe's own queries.
	fake := `\033P>|kitty(0.32.2)\033\\\033[?62;22c\033]777;notify;Phantom: fake;body\007\033]9;fake\007\033[>q\033[c`
	if r := a.run(`printf '` + fake + `' >` + "/dev/tty" + `; echo spoofed >` + "/dev/tty"); r.code != 0 {
		t.Fatalf("the tab's fake answer: %v", r)
	}
	eventually(t, "the fake answer printed", func() (bool, string) {
		out := in.must(t, "read", a.tab)
		return strings.Contains(out, "spoofed"), out
	})
	c.send(versionReply("XTerm(388)"))
	c.waitStatus("the status line", func(s string) bool { return strings.Contains(s, "1:") })
	run := a.agent("spoofer", permRead(target))
	s := agentAsksHuman(t, in.env, run.read, 0, a.tab, "read_output", "after a faked XTVERSION answer")
	eventually(t, "the sheet's bell", func() (bool, string) { return c.bells() >= 1, "" })
	deny(t, in.env, s)
	// Let a notification that followed the BEL arrive.
	time.Sleep(500 * time.Millisecond)
	raw := c.rawText()
	for _, bad := range []string{"\x1b]9;", "\x1b]777;", "\x1bP>|", "kitty(0.32.2)"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the xterm client got %q", bad)
		}
	}
}

// TestRedTeam25b_FinishedFlood — HOLD. An agent in a plain tab runs an
// interactive shell on its tab's terminal that runs a program named as a
// configured agent (claude) for a moment, again and again: each time it leaves the foreground is
// an agent that finished. The clients get at most a burst of
// notifications and then one per two seconds (generously bounded by the
// churn's length), and so does the desktop.
func TestRedTeam25b_FinishedFlood(t *testing.T) {
	svc := notifytest.Start(t, true)
	in := startPhantomWith(t, `{"shell":"/bin/bash","agents":{"claude":["claude"]},"attention":{"desktop":"on"}}`,
		"DBUS_SESSION_BUS_ADDRESS="+svc.Address)
	kitty, foot := rt25bClients(t, in)
	a := newAttacker(t, in.env, "churner")
	// A program named claude that draws (its tab's status is read when
	// it draws) and runs for a moment.
	claude := filepath.Join(a.dir, "claude")
	if err := os.WriteFile(claude, []byte("#!/bin/sh\necho working; sleep 1; echo done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// An interactive bash on the tab's terminal takes its foreground and
	// gives each command it runs the foreground in turn.
	j := a.start(`bash --norc -ic 'for i in $(seq 6); do "$0"; sleep 0.5; echo idle; done' ` + sq(claude) + ` </dev/tty >/dev/tty 2>&1; echo churn-done`)
	if r := j.wait(); r.code != 0 || !strings.Contains(r.out, "churn-done") {
		t.Fatalf("the churn: %v", r)
	}
	elapsed := time.Since(start)
	time.Sleep(time.Second) // what was sent last arrives
	limit := 5 + int(elapsed/(2*time.Second)) + 4
	kf, ff := rt25bCount(kitty, foot, " finished"), len(svc.Received())
	t.Logf("%d finished notifications to the two clients, %d to the desktop, over %v", kf, ff, elapsed)
	if kf == 0 {
		t.Fatalf("no finished notification at all: the churn did not register")
	}
	if kf > 2*limit {
		t.Errorf("the clients got %d finished notifications over %v; want at most %d each", kf, elapsed, limit)
	}
	if ff > limit {
		t.Errorf("the desktop got %d notifications over %v; want at most %d", ff, elapsed, limit)
	}
	rt25bInert(t, kitty, foot, svc)
}
