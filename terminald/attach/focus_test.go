package attach

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/terminald/workspace"
)

func TestDecideFocus(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	for _, c := range []struct {
		name string
		st   focusState
		move bool
		why  string
	}{
		{"never typed", focusState{}, true, ""},
		{"quiet for longer than QuietTime", focusState{lastInput: ago(QuietTime + time.Millisecond)}, true, ""},
		{"quiet for exactly QuietTime", focusState{lastInput: ago(QuietTime)}, true, ""},
		{"typed just now", focusState{lastInput: ago(0)}, false, "typed"},
		{"typed a moment ago", focusState{lastInput: ago(QuietTime - time.Millisecond)}, false, "typed"},
		{"a half-typed line, long quiet", focusState{lastInput: ago(time.Hour), lineTyped: true}, false, "half-typed"},
		{"a prompt or box open", focusState{keysBusy: true}, false, "prompt"},
		{"already shown, even while typing", focusState{lastInput: ago(0), lineTyped: true, keysBusy: true, shown: true}, true, ""},
		{"just switched by an agent", focusState{lastMoved: ago(time.Second)}, false, "agent switched"},
		{"switched by an agent a while ago", focusState{lastMoved: ago(QuietTime)}, true, ""},
		{"split, tab in another pane", focusState{split: true, inPane: true}, true, ""},
		{"split, tab not shown, only client", focusState{split: true, alone: true}, true, ""},
		{"split, tab not shown, other clients", focusState{split: true}, false, "split layout"},
		{"split, in another pane, but typing", focusState{split: true, inPane: true, lastInput: ago(time.Second)}, false, "typed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.st.now = now
			move, why := decideFocus(c.st)
			if move != c.move || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
				t.Errorf("decideFocus(%+v) = %v, %q; want %v, %q", c.st, move, why, c.move, c.why)
			}
		})
	}
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// focusWorld is a workspace with tabs a, b and c in one window, and the
// focus requests on a fake clock.
type focusWorld struct {
	t       *testing.T
	ws      *workspace.Workspace
	f       *Focuses
	clock   *fakeClock
	a, b, c string
}

func newFocusWorld(t *testing.T) *focusWorld {
	ws := newWorkspace(t)
	w := &focusWorld{t: t, ws: ws, clock: &fakeClock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}}
	w.f = newFocuses(w.clock.now)
	for _, id := range []*string{&w.a, &w.b, &w.c} {
		tab, err := ws.Create(workspace.CreateSpec{Directory: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		*id = tab.ID
	}
	return w
}

func (w *focusWorld) attach() *fakeClient {
	c := startClientWith(w.t, Options{Workspace: w.ws, Focus: w.f}, Hello{Cols: 100, Rows: 24})
	c.waitText("3:")
	return c
}

// request is an agent in tab b asking to bring tab id forward.
func (w *focusWorld) request(id string) FocusResult {
	w.t.Helper()
	res, err := w.f.Request(context.Background(), w.ws, FocusRequest{Tab: id, Client: "claude", FromTab: w.b})
	if err != nil {
		w.t.Fatal(err)
	}
	return res
}

func (w *focusWorld) focused() string {
	w.t.Helper()
	for _, win := range w.ws.Windows() {
		return win.FocusedTab
	}
	return ""
}

// status is the client's status line.
func (c *fakeClient) status() string { return c.row(23) }

// shows waits until the client's status line marks tab n (1-based) shown.
func (c *fakeClient) shows(n string) {
	c.t.Helper()
	c.waitFor("tab "+n+" shown", func(string) bool { return shownNumber(c.status()) == n })
}

// shownNumber is the number of the tab the status line marks shown.
func shownNumber(status string) string {
	for _, f := range strings.Fields(status) {
		if i := strings.IndexByte(f, ':'); i > 0 && strings.Contains(f, "*") {
			return f[:i]
		}
	}
	return ""
}

// prompted waits until tab id's shell is at its prompt.
func (w *focusWorld) prompted(id string) {
	w.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		tm, err := w.ws.Get(id)
		if err == nil && tm.Idle {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("tab %s never idle at its prompt", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFocusNoticeWhileTyping(t *testing.T) {
	w := newFocusWorld(t)
	w.prompted(w.a)
	c := w.attach()
	c.shows("1")

	// The human types half a line: the agent's request leaves the client
	// where it is and puts up a notice naming the agent and the tab.
	c.send("echo par")
	c.waitText("echo par")
	res := w.request(w.c)
	if res.Outcome != FocusNotice || res.Noticed != 1 || res.Moved != 0 {
		t.Fatalf("request while typing: %+v, want a notice to the one client", res)
	}
	c.waitFor("the notice", func(string) bool {
		return strings.Contains(c.status(), "claude in "+w.b+" asks to show 3:") && strings.Contains(c.status(), "prefix f")
	})
	if got := w.focused(); got != w.a {
		t.Errorf("the window's focus moved to %s; want it left on %s", got, w.a)
	}
	// The rest of the line and its Enter run where the human typed them.
	c.send("tial-$((40+2))\r")
	c.waitText("partial-42")
	c.shows("1")

	// Quiet for longer than QuietTime, at an empty prompt: the request
	// switches the client, and the window's focus.
	w.prompted(w.a)
	w.clock.add(QuietTime)
	if res := w.request(w.c); res.Outcome != FocusMoved || res.Moved != 1 {
		t.Fatalf("request while quiet: %+v, want moved", res)
	}
	c.shows("3")
	if got := w.focused(); got != w.c {
		t.Errorf("the window's focus is %s after the client moved; want %s", got, w.c)
	}
	c.waitFor("the notice gone", func(string) bool { return !strings.Contains(c.status(), "asks to show") })

	// A half-typed line holds the client however long the human pauses.
	w.prompted(w.c)
	c.send("echo half")
	c.waitText("echo half")
	w.clock.add(time.Hour)
	eventually(t, "the half-typed line seen", func() bool { return w.ws.LineTyped(w.c) })
	res = w.request(w.a)
	if res.Outcome != FocusNotice || !strings.Contains(strings.Join(res.Why, ";"), "half-typed") {
		t.Fatalf("request over a half-typed line: %+v, want a notice saying why", res)
	}
	// The human accepts the notice with prefix f: the client shows the
	// tab, and the window's focus follows.
	c.send("\x1cf")
	c.shows("1")
	if got := w.focused(); got != w.a {
		t.Errorf("after accepting, the window's focus is %s; want %s", got, w.a)
	}
	// prefix f with no notice does nothing but say so.
	c.send("\x1cf")
	c.waitFor("the message", func(string) bool { return strings.Contains(c.status(), "no agent asked") })
	c.shows("1")
}

func TestFocusSpamKeepsOneNotice(t *testing.T) {
	w := newFocusWorld(t)
	c := w.attach()
	c.shows("1")
	for i := range 50 {
		c.send("x")
		id := w.b
		if i%2 == 1 {
			id = w.c
		}
		if res := w.request(id); res.Outcome != FocusNotice {
			t.Fatalf("request %d while typing: %+v, want a notice", i, res)
		}
	}
	// The latest replaces the earlier: one notice, for tab c (the 50th).
	c.waitFor("the last notice", func(string) bool { return strings.Contains(c.status(), "asks to show 3:") })
	if n := strings.Count(c.status(), "asks to show"); n != 1 {
		t.Errorf("status line %q: %d notices, want 1", c.status(), n)
	}
	c.shows("1")
	// The human's keys still reach the tab, unhindered.
	c.send("\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7fecho still-$((1+1))\r")
	c.waitText("still-2")
}

func TestFocusPerClient(t *testing.T) {
	w := newFocusWorld(t)
	typing, quiet := w.attach(), w.attach()
	typing.shows("1")
	quiet.shows("1")
	typing.send("echo busy")
	typing.waitText("echo busy")
	res := w.request(w.c)
	if res.Outcome != FocusNotice || res.Moved != 1 || res.Noticed != 1 {
		t.Fatalf("one client typing, one quiet: %+v, want one moved and one notice", res)
	}
	quiet.shows("3")
	typing.shows("1")
	if got := w.focused(); got != w.a {
		t.Errorf("the window's focus is %s; want it left on %s while a client kept it", got, w.a)
	}
	// A change elsewhere does not drag the quiet client back, nor the
	// typing one forward.
	name := "renamed"
	if _, err := w.ws.Update(w.b, workspace.Update{Name: &name}); err != nil {
		t.Fatal(err)
	}
	quiet.waitFor("the rename", func(string) bool { return strings.Contains(quiet.status(), "renamed") })
	typing.waitFor("the rename", func(string) bool { return strings.Contains(typing.status(), "renamed") })
	quiet.shows("3")
	typing.shows("1")
	// The human's own focus moves both, as before.
	if _, err := w.ws.Focus(w.b); err != nil {
		t.Fatal(err)
	}
	quiet.shows("2")
	typing.shows("2")
}

func TestFocusNoClient(t *testing.T) {
	w := newFocusWorld(t)
	res := w.request(w.c)
	if res.Outcome != FocusNoClient || !res.Terminal.Focused {
		t.Fatalf("nobody attached: %+v, want the window's focus set", res)
	}
	if got := w.focused(); got != w.c {
		t.Errorf("the window's focus is %s; want %s", got, w.c)
	}
	// The next client to attach shows it.
	w.attach().shows("3")
}

// eventually polls cond for a while.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFocusStuckAndGoneClients: a client whose session does not answer
// (blocked on a slow terminal) counts as in use and keeps its tab; one
// that detaches before answering does not count at all.
func TestFocusStuckAndGoneClients(t *testing.T) {
	w := newFocusWorld(t)
	win := w.ws.Windows()[0].ID
	stuck := newFocusInbox(win)
	leave := w.f.join(stuck)
	res := w.request(w.c)
	if res.Outcome != FocusNotice || res.Noticed != 1 || !strings.Contains(res.Why[0], "did not answer") {
		t.Fatalf("a stuck client: %+v, want a notice", res)
	}
	if got := w.focused(); got == w.c {
		t.Errorf("the window's focus moved past a stuck client")
	}
	// The stuck session, when it gets to the request, finds it given up:
	// it may only show the notice.
	if a := stuck.take(); a == nil || a.claim() {
		t.Errorf("the request left for the stuck session: %+v, want one it can no longer claim", a)
	}

	// A client that detaches with the request unanswered.
	done := make(chan FocusResult)
	go func() { done <- w.request(w.c) }()
	eventually(t, "the request in the inbox", func() bool {
		stuck.mu.Lock()
		defer stuck.mu.Unlock()
		return stuck.ask != nil
	})
	leave()
	if res := <-done; res.Outcome != FocusNoClient || res.Moved+res.Noticed != 0 {
		t.Fatalf("the only client detached: %+v, want no client", res)
	}
	if got := w.focused(); got != w.c {
		t.Errorf("the window's focus is %s; want %s", got, w.c)
	}
}

// TestFocusNoticeNotPaintable: a tab's output cannot reach the status
// line, where notices are: whatever it positions lands in its own rows.
func TestFocusNoticeNotPaintable(t *testing.T) {
	w := newFocusWorld(t)
	w.prompted(w.a)
	c := w.attach()
	c.shows("1")
	c.send(`printf '\033[999;1HFAKE-NOTICE asks to show\033[24;40HFAKE2\033[25;1HFAKE3\033[r\033[999B\033[999CX'; sleep 1000` + "\r")
	c.waitFor("the output drawn", func(string) bool { return strings.Contains(c.row(22), "FAKE") })
	c.waitFor("the output settled", func(text string) bool { return strings.Contains(text, "X") })
	if s := c.status(); strings.Contains(s, "FAKE") || strings.Contains(s, "asks to show") {
		t.Errorf("the tab's output reached the status line: %q", s)
	}
	c.shows("1")
}
