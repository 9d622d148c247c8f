package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/notify/notifytest"
)

// End-to-end tests of what calls the human (config.json's attention;
// terminald/attach/attention.go): bells through a real outer terminal,
// sheets and agents ringing clients, notification escapes only for
// terminals that announced them, desktop notifications over a private
// session bus.

// ringer is a tab that rings once each time its trigger file appears
// (its program removes it after), and counts its bells.
type ringer struct {
	in      *instance
	id, dir string
	n       int // bells rung so far
}

// newRinger opens a ringer in a background tab.
func newRinger(t *testing.T, in *instance) *ringer {
	t.Helper()
	r := &ringer{in: in, dir: t.TempDir()}
	out, err := in.run("new", "--name", "ringer", "--", "sh", "-c",
		`f=$0/ring; n=0; while :; do if [ -e "$f" ]; then rm -f "$f"; printf '\a'; n=$((n+1)); echo "rang $n."; fi; sleep 0.05; done`, r.dir)
	if err != nil {
		t.Fatalf("phantom new: %v\n%s", err, out)
	}
	r.id = strings.TrimSpace(string(out))
	return r
}

// ring makes the tab ring and waits until its program says it rang
// (terminald has rendered that BEL by then).
func (r *ringer) ring(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, "ring"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r.n++
	want := fmt.Sprintf("rang %d.", r.n)
	eventually(t, want+" in the bell tab", func() (bool, string) {
		out, _ := r.in.run("read", r.id)
		return strings.Contains(string(out), want), string(out)
	})
}

// ringUntil rings until cond holds: a session passes at most one bell
// per half second to its client, so a bell right after another may be
// dropped by design.
func (r *ringer) ringUntil(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	eventually(t, what, func() (bool, string) {
		r.ring(t)
		for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if ok, _ := cond(); ok {
				return true, ""
			}
		}
		return cond()
	})
}

// bellFlag is whether the outer tmux recorded a bell in the client's
// window; resetBell clears it (selecting another window and back clears
// the flags of the window made current).
func (o *outer) bellFlag() bool {
	return strings.TrimSpace(o.tmux("display-message", "-p", "-t", ":0", "#{window_bell_flag}")) == "1"
}

func (o *outer) resetBell() {
	o.t.Helper()
	o.tmux("select-window", "-t", ":1")
	o.tmux("select-window", "-t", ":0")
	if o.bellFlag() {
		o.t.Fatal("the outer terminal's bell flag did not clear")
	}
}

// markedRinger matches the bell tab's entry with the bell mark.
var markedRinger = regexp.MustCompile(`2:ringer[^:*]*♪`)

// consistently checks that cond holds for a while: what must not happen
// (a bell that is off) has no event to wait for.
func consistently(t *testing.T, what string, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if ok, why := cond(); !ok {
			t.Fatalf("%s: %s", what, why)
		}
	}
}

// TestAttachAttentionBell: a background tab's BEL marks it on the status
// line until it is shown, and reaches the outer terminal; a BEL in the
// shown tab reaches it too; with attention.bell "off" (reloaded live)
// neither happens.
func TestAttachAttentionBell(t *testing.T) {
	in := startPhantom(t)
	o := in.attachOuter(t, 100, 24, []string{"LANG=C.UTF-8"})
	o.waitFor("the status line", func(string) bool { return strings.Contains(o.status(), "1:") })
	o.tmux("new-window", "-d") // a second outer window, to clear the bell flag with
	rg := newRinger(t, in)
	o.waitFor("the second tab", func(string) bool { return strings.Contains(o.status(), "2:ringer") })
	if strings.Contains(o.status(), "2:ringer*") {
		t.Fatalf("phantom new switched the client to the new tab: %q", o.status())
	}
	o.resetBell()

	rg.ring(t)
	o.waitFor("the bell mark on the background tab", func(string) bool { return markedRinger.MatchString(o.status()) })
	eventually(t, "the bell in the outer terminal", func() (bool, string) { return o.bellFlag(), o.status() })
	if strings.Count(o.status(), "♪") != 1 {
		t.Errorf("status %q: want the mark on the ringing tab alone", o.status())
	}

	// Shown, the tab loses its mark; a bell in the shown tab still rings.
	o.prefix("2")
	o.waitFor("the mark cleared when shown", func(string) bool {
		return strings.Contains(o.status(), "2:ringer*") && !strings.Contains(o.status(), "♪")
	})
	o.resetBell()
	rg.ringUntil(t, "the shown tab's bell in the outer terminal", func() (bool, string) { return o.bellFlag(), o.status() })
	if strings.Contains(o.status(), "♪") {
		t.Errorf("status %q: the shown tab is marked", o.status())
	}

	// Off, live: no mark, no bell.
	o.prefix("1")
	o.waitFor("tab 1 shown", func(string) bool {
		return strings.Contains(o.status(), "*") && !strings.Contains(o.status(), "2:ringer*")
	})
	writeSettings(t, in.env.Layout.Config, `{"shell":"/bin/bash","attention":{"bell":"off"}}`)
	if out, err := in.run("reload"); err != nil {
		t.Fatalf("phantom reload: %v\n%s", err, out)
	}
	o.resetBell()
	for range 3 {
		rg.ring(t)
	}
	consistently(t, "no bell with attention.bell off", time.Second, func() (bool, string) {
		return !o.bellFlag() && !strings.Contains(o.status(), "♪"), o.status()
	})
}

// TestAttachAttentionSheet: a sheet opened by an agent's call rings the
// outer terminal; with attention.sheet "off" it does not.
func TestAttachAttentionSheet(t *testing.T) {
	for _, tt := range []struct {
		name, config string
		rings        bool
	}{
		{"default", `{"shell":"/bin/bash"}`, true},
		{"off", `{"shell":"/bin/bash","attention":{"sheet":"off","waiting":"off","finished":"off"}}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := startPhantomWith(t, tt.config)
			o := in.attachOuter(t, 100, 24, []string{"LANG=C.UTF-8"})
			o.waitFor("the status line", func(string) bool { return strings.Contains(o.status(), "1:") })
			o.tmux("new-window", "-d")
			target := permTarget(t, in.env, "attention-target")
			o.waitFor("the target tab", func(string) bool { return strings.Contains(o.status(), "2:target") })
			o.resetBell()
			_, read := runAgent(t, in.env, []map[string]any{permRead(target)})
			permConnected(t, read)
			waitSheet(t, in.env, "read_output")
			o.waitFor("the sheet marker", func(string) bool { return strings.Contains(o.status(), "1 sheet") })
			if tt.rings {
				eventually(t, "the sheet's bell in the outer terminal", func() (bool, string) { return o.bellFlag(), o.status() })
				return
			}
			consistently(t, "no bell with attention.sheet off", time.Second, func() (bool, string) { return !o.bellFlag(), o.status() })
		})
	}
}

// oscs matches the escapes of a client's raw output that carry a BEL
// without being one: OSCs ended by BEL.
var oscs = regexp.MustCompile(`\x1b\][^\x07\x1b]*\x07`)

// bells counts the BELs a client received, not those ending an OSC.
func (c *client) bells() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Count(oscs.ReplaceAllString(c.raw.String(), ""), "\a")
}

func (c *client) rawText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw.String()
}

// versionReply is the probe's answer of a terminal named version:
// XTVERSION, then DA1 (which ends the probe).
func versionReply(version string) string {
	return "\x1bP>|" + version + "\x1b\\" + "\x1b[?62;22c"
}

// TestAttachAttentionNotify: a sheet, the agent then waiting for input,
// then the agent finishing each ring attached clients: a BEL to both, an
// OSC 9 notification to the client whose terminal announced it (kitty),
// none to the one that did not (xterm).
func TestAttachAttentionNotify(t *testing.T) {
	in := startPhantom(t)
	kitty := in.attach(t, 100, 24, nil)
	xterm := in.attach(t, 100, 24, nil)
	kitty.answerProbe(versionReply("kitty(0.32.2)")) // attach_clipboard_test.go
	xterm.answerProbe(versionReply("XTerm(388)"))
	for _, c := range []*client{kitty, xterm} {
		c.waitStatus("the status line", func(s string) bool { return strings.Contains(s, "1:") })
	}
	target := permTarget(t, in.env, "notify-target")
	dir := t.TempDir()
	gone := filepath.Join(dir, "go")
	tab, read := runAgent(t, in.env, []map[string]any{
		permRead(target),
		{"op": "wait", "file": gone},
		{"op": "exit"},
	})
	permConnected(t, read)
	id := waitSheet(t, in.env, "read_output")

	waitNotify := func(c *client, what string) {
		t.Helper()
		eventually(t, "OSC 9 "+what, func() (bool, string) {
			return strings.Contains(c.rawText(), "\x1b]9;Phantom: test "+what), fmt.Sprintf("%q", regexp.MustCompile("\x1b\\]9;[^\a]*").FindAllString(c.rawText(), -1))
		})
	}
	waitNotify(kitty, "asks permission")
	eventually(t, "the sheet's bell at the xterm client", func() (bool, string) { return xterm.bells() >= 1, "" })

	mustPhantom(t, in.env, "sheet", "answer", id, "--once")
	waitStep(t, read, 0)
	waitNotify(kitty, "waits for input")
	if err := os.WriteFile(gone, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the agent tab exited", func() (bool, string) {
		for _, tm := range in.list(t) {
			if tm.GetId() == tab && tm.GetExited() {
				return true, ""
			}
		}
		return false, fmt.Sprint(in.list(t)) + "\n" + kitty.status()
	})
	waitNotify(kitty, "finished")
	eventually(t, "the finished agent's bell at the xterm client", func() (bool, string) {
		return xterm.bells() >= 3, strings.ReplaceAll(xterm.rawText(), "\x1b", "^[")
	})
	if raw := xterm.rawText(); strings.Contains(raw, "\x1b]9;") || strings.Contains(raw, "\x1b]777;") {
		t.Errorf("the xterm client, whose terminal announced no notifications, got one")
	}
	if !strings.Contains(kitty.rawText(), "tab "+tab) {
		t.Errorf("the notifications do not name the agent's tab %s", tab)
	}
}

// TestAttachAttentionDesktop: with attention.desktop on, terminald sends
// a new sheet to the freedesktop notification service of the session bus
// phantom up ran with — no client attached.
func TestAttachAttentionDesktop(t *testing.T) {
	svc := notifytest.Start(t, true)
	in := startPhantomWith(t, `{"shell":"/bin/bash","attention":{"desktop":"on"}}`, "DBUS_SESSION_BUS_ADDRESS="+svc.Address)
	target := permTarget(t, in.env, "desktop-target")
	_, read := runAgent(t, in.env, []map[string]any{permRead(target)})
	permConnected(t, read)
	waitSheet(t, in.env, "read_output")
	eventually(t, "a Notify call for the sheet", func() (bool, string) {
		for _, n := range svc.Received() {
			if n.App == "Phantom" && strings.Contains(n.Summary, "test asks permission") && strings.Contains(n.Body, "read_output") {
				return true, ""
			}
		}
		return false, formatNotes(svc.Received())
	})
}

func formatNotes(ns []notifytest.Notification) string {
	var b strings.Builder
	for _, n := range ns {
		b.WriteString(n.App + ": " + n.Summary + " | " + n.Body + "\n")
	}
	return "received:\n" + b.String()
}
