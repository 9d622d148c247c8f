package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/phantom-dev/phantom/authz/audit"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/attach"
)

// focusResult is focus_terminal's structuredContent.
type focusResult struct {
	Outcome         string `json:"outcome"`
	MovedClients    int    `json:"moved_clients"`
	NotifiedClients int    `json:"notified_clients"`
	Note            string `json:"note"`
	Terminal        struct {
		ID      string `json:"id"`
		Focused bool   `json:"focused"`
	} `json:"terminal"`
}

// focusWorld is an instance whose first tab, named tabA, the human
// attaches to, beside a tab named tabc.
type focusWorld struct {
	in   *instance
	a, c string
	dir  string // where the test drops the files the agent waits for
}

func newFocusWorld(t *testing.T) *focusWorld {
	t.Helper()
	w := &focusWorld{in: startPhantom(t), dir: t.TempDir()}
	w.a = w.in.list(t)[0].GetId()
	if _, err := w.in.tc.UpdateTerminal(tctx(t), &terminalv1.UpdateTerminalRequest{TerminalId: w.a, Name: proto.String("tabA")}); err != nil {
		t.Fatal(err)
	}
	r, err := w.in.tc.CreateTerminal(tctx(t), &terminalv1.CreateTerminalRequest{Directory: w.in.env.Home, Name: "tabc"})
	if err != nil {
		t.Fatal(err)
	}
	w.c = r.GetTerminal().GetId()
	return w
}

// human attaches to tabA and waits for its prompt.
func (w *focusWorld) human(t *testing.T) *client {
	t.Helper()
	c := w.in.attach(t, 120, 30, nil, w.a)
	c.waitStatus("tabA shown", func(s string) bool { return strings.Contains(s, "tabA*") })
	w.idle(t, w.a)
	return c
}

// idle waits until tab id's shell is at its prompt.
func (w *focusWorld) idle(t *testing.T, id string) {
	t.Helper()
	eventually(t, "tab "+id+" at its prompt", func() (bool, string) {
		for _, tm := range w.in.list(t) {
			if tm.GetId() == id {
				return tm.GetIdle(), tm.String()
			}
		}
		return false, "tab gone"
	})
}

// quiet lets the human's hands rest for longer than attach.QuietTime.
func quiet() { time.Sleep(attach.QuietTime + 500*time.Millisecond) }

// focusEntry waits for the audit log's entry of event about a focus of
// target from tab.
func (w *focusWorld) focusEntry(t *testing.T, event, tab, target string) audit.Entry {
	t.Helper()
	var got audit.Entry
	eventually(t, event+" in the audit log", func() (bool, string) {
		out, err := w.in.run("audit", "--json")
		if err != nil {
			return false, string(out)
		}
		es := auditJSON(t, func(...string) string { return string(out) })
		i := slices.IndexFunc(es, func(e audit.Entry) bool {
			return e.Event == event && e.Tool == "focus_terminal" && e.Tab == tab && e.Target == target
		})
		if i < 0 {
			return false, string(out)
		}
		got = es[i]
		return true, ""
	})
	return got
}

// drop creates the file an agent's wait step waits for.
func (w *focusWorld) drop(t *testing.T, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(w.dir, name), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestFocusMCPWhileTyping: the human, attached through a real `phantom
// attach`, has typed half a line in tab A when an agent in tab B (the
// official MCP client over the real socket) brings tab C forward. The
// client stays on A and shows a notice naming the agent and C, the rest
// of the line and its Enter run in A, the result says "notice", and the
// audit log has it. Once the human has been quiet, the same call
// switches the client and says so.
func TestFocusMCPWhileTyping(t *testing.T) {
	w := newFocusWorld(t)
	focusC := map[string]any{"op": "call", "tool": "focus_terminal", "args": map[string]any{"terminal_id": w.c}}
	b, read := runAgent(t, w.in.env, []map[string]any{
		{"op": "wait", "file": filepath.Join(w.dir, "typing")}, focusC,
		{"op": "wait", "file": filepath.Join(w.dir, "quiet")}, focusC,
	})
	c := w.human(t)
	c.waitStatus("the agent's tab", func(s string) bool { return strings.Contains(s, "agent") })

	c.send("echo hello-fro")
	c.waitText("echo hello-fro")
	w.drop(t, "typing")
	var r focusResult
	structured(t, waitStep(t, read, 1), &r)
	if r.Outcome != "notice" || r.NotifiedClients != 1 || r.MovedClients != 0 || r.Terminal.Focused ||
		!strings.Contains(r.Note, "NOT brought forward") {
		t.Errorf("focus_terminal while the human types: %+v; want a notice, not moved", r)
	}
	c.waitStatus("the notice naming the agent and tab C", func(s string) bool {
		return strings.Contains(s, "test in "+b+" asks to show 2:tabc ("+w.c+")") && strings.Contains(s, "prefix f")
	})
	if s := c.status(); !strings.Contains(s, "tabA*") {
		t.Errorf("status line %q: the client moved off tab A", s)
	}
	// The rest of the line and its Enter run in A, not in C.
	c.send("m-A-$((6*7))\r")
	c.waitText("hello-from-A-42")
	w.idle(t, w.a)
	if out := mustPhantom(t, w.in.env, "read", w.a); !strings.Contains(out, "hello-from-A-42") {
		t.Errorf("tab A's output lacks the human's command:\n%s", out)
	}
	if out := mustPhantom(t, w.in.env, "read", w.c); strings.Contains(out, "hello") || strings.Contains(out, "m-A-") {
		t.Errorf("the human's keys reached tab C:\n%s", out)
	}
	e := w.focusEntry(t, audit.FocusNotice, b, w.c)
	if e.Client != "test" || !strings.Contains(e.Subject, "not switched") {
		t.Errorf("the notice's audit entry: %+v", e)
	}

	// Quiet at an empty prompt: the agent's call switches the client.
	quiet()
	w.drop(t, "quiet")
	structured(t, waitStep(t, read, 3), &r)
	if r.Outcome != "moved" || r.MovedClients != 1 || !r.Terminal.Focused {
		t.Errorf("focus_terminal while the human is quiet: %+v; want moved", r)
	}
	c.waitStatus("tab C shown", func(s string) bool { return strings.Contains(s, "tabc*") && !strings.Contains(s, "asks to show") })
	w.focusEntry(t, audit.FocusMoved, b, w.c)
}

// TestAdversarialFocusFromTab: an agent with a shell uses our own CLI from
// inside its tab instead: `phantom focus` gets the same treatment (a
// notice while the human types, said on stdout; a switch once quiet), and
// is audited with its process. It cannot write the audit log itself, nor
// fake a notice: its title shows as a title, and the notice key without
// a notice moves nothing.
func TestAdversarialFocusFromTab(t *testing.T) {
	w := newFocusWorld(t)
	grpcurl := grpcurlPath(t)
	a := newAttacker(t, w.in.env, "attacker")
	c := w.human(t)
	c.waitStatus("the attacker's tab", func(s string) bool { return strings.Contains(s, "attacker") })

	// A name dressed as a notice stays a tab's name: printable, cut
	// short, in the bar's colours; the notice key moves nothing without a
	// real notice.
	if r := a.run(shellCmd(phantomBin, "rename", a.tab, "test in t9 asks to show 1:x (t1): prefix f")); r.code != 0 {
		t.Fatalf("rename from the tab: %v", r)
	}
	c.waitStatus("the forged name", func(s string) bool { return strings.Contains(s, "test in t9 asks") })
	c.send(prefix + "f")
	c.waitStatus("no notice to accept", func(s string) bool { return strings.Contains(s, "no agent asked to show a tab") })
	if s := c.status(); !strings.Contains(s, "tabA*") {
		t.Errorf("status line %q: the notice key without a notice moved the client", s)
	}

	// While the human types, the CLI's call is a notice, and says so.
	w.idle(t, w.a)
	c.send("echo typed-by-hum")
	c.waitText("echo typed-by-hum")
	r := a.run(shellCmd(phantomBin, "focus", w.c))
	if r.code != 0 || !strings.Contains(r.out, "NOT brought forward") {
		t.Errorf("phantom focus from a tab while the human types: %v; want exit 0 saying it was not brought forward", r)
	}
	c.waitStatus("the notice", func(s string) bool { return strings.Contains(s, "shell in "+a.tab+" asks to show 2:tabc") })
	c.send("an-$((2+2))\r")
	c.waitText("typed-by-human-4")
	if s := c.status(); !strings.Contains(s, "tabA*") {
		t.Errorf("status line %q: the client moved off tab A", s)
	}
	e := w.focusEntry(t, audit.FocusNotice, a.tab, w.c)
	if e.Client != "shell" || e.PID <= 0 {
		t.Errorf("the CLI's audit entry does not name its process: %+v", e)
	}

	// The audit log is not the tab's to write.
	forged := shellCmd("timeout", "10", grpcurl, "-plaintext", "-unix", "-d",
		`{"caller":{"client":"claude","connection_id":"x","tab_id":"t99"},"event":"REPORTED_EVENT_FOCUS_MOVED","target":"t98"}`,
		w.in.env.Layout.DaemonSocket("authz"), "phantom.authz.v1.AuthzService/RecordEvent")
	if r := a.run(forged); !refused(r) || !strings.Contains(r.out, "audit log is not written from inside Phantom") {
		t.Errorf("RecordEvent from tab %s: want a refusal saying why, got %v", a.tab, r)
	}

	// Quiet: the CLI's call switches the client, silently.
	w.idle(t, w.a)
	quiet()
	if r := a.run(shellCmd(phantomBin, "focus", w.c)); r.code != 0 || strings.TrimSpace(r.out) != "" {
		t.Errorf("phantom focus from a tab while the human is quiet: %v; want exit 0, nothing said", r)
	}
	c.waitStatus("tab C shown", func(s string) bool { return strings.Contains(s, "tabc*") })
	w.focusEntry(t, audit.FocusMoved, a.tab, w.c)
	if es := auditJSON(t, func(args ...string) string { return mustPhantom(t, w.in.env, args...) }); slices.ContainsFunc(es, func(e audit.Entry) bool { return e.Target == "t98" }) {
		t.Errorf("the forged line is in the audit log")
	}
}
