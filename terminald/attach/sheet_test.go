package attach

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/terminald/workspace"
)

// fakeSheets is a queue of sheets; an answer takes the head off.
type fakeSheets struct {
	mu      sync.Mutex
	queue   []*Sheet
	changed chan struct{}
	answers []string // "id decision scope"
}

func newFakeSheets() *fakeSheets { return &fakeSheets{changed: make(chan struct{})} }

func (f *fakeSheets) Current() (*Sheet, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queue) == 0 {
		return nil, 0
	}
	s := *f.queue[0]
	s.WaitingBehind = len(f.queue) - 1
	return &s, len(f.queue)
}

func (f *fakeSheets) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

func (f *fakeSheets) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeSheets) push(s *Sheet) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = append(f.queue, s)
	f.notifyLocked()
}

// withdraw drops sheet id, as authz does when its connection closes.
func (f *fakeSheets) withdraw(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = slices.DeleteFunc(f.queue, func(s *Sheet) bool { return s.ID == id })
	f.notifyLocked()
}

func (f *fakeSheets) Answer(_ context.Context, id string, d Decision, scope Scope) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queue) == 0 || f.queue[0].ID != id {
		return fmt.Errorf("no sheet %s on screen", id)
	}
	f.answers = append(f.answers, fmt.Sprintf("%s %s %s", id, d, scope))
	f.queue = f.queue[1:]
	f.notifyLocked()
	return nil
}

func (f *fakeSheets) answered() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.answers)
}

func readSheet(id string) *Sheet {
	return &Sheet{ID: id, Client: "claude", TabID: "t3", TabTitle: "build", Capability: "read",
		Reach: ScopeGroup, Tool: "read_output", Subject: "tab t5 (server logs)", Project: "/src/app",
		Deadline: time.Now().Add(42 * time.Second)}
}

func sheetClient(t *testing.T) (*fakeClient, *fakeSheets) {
	ws := newWorkspace(t)
	if _, err := ws.Create(workspace.CreateSpec{Directory: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	f := newFakeSheets()
	c := startClientWith(t, Options{Workspace: ws, Sheets: f}, Hello{Cols: 100, Rows: 30})
	c.waitText("1:")
	return c, f
}

func (c *fakeClient) waitNoText(s string) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%q gone", s), func(text string) bool { return !strings.Contains(text, s) })
}

func (c *fakeClient) waitAnswers(f *fakeSheets, want ...string) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Equal(f.answered(), want) {
		if time.Now().After(deadline) {
			c.t.Fatalf("answers %q, want %q; the client shows:\n%s", f.answered(), want, c.text())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSheetMarkerIsLive(t *testing.T) {
	c, f := sheetClient(t)
	f.push(readSheet("s1"))
	c.waitFor("the marker", func(string) bool { return strings.Contains(c.row(29), "1 sheet (prefix s)") })
	f.push(readSheet("s2"))
	c.waitFor("two sheets", func(string) bool { return strings.Contains(c.row(29), "2 sheets") })
	f.withdraw("s1")
	f.withdraw("s2")
	c.waitFor("no marker", func(string) bool { return !strings.Contains(c.row(29), "sheet") })
}

func TestSheetBoxAnswers(t *testing.T) {
	c, f := sheetClient(t)
	c.send("echo mark-$((40+2))\r")
	c.waitText("mark-42")
	f.push(readSheet("s1"))
	run := readSheet("s2")
	run.Capability, run.Reach, run.Tool, run.Subject = "run", ScopeTab, "run_command", "make test"
	f.push(run)

	c.send("\x1cs")
	for _, want := range []string{
		"claude in tab t3 (build) wants to READ", "reach: group", "read_output: tab t5 (server logs)",
		"project /src/app", "s left — 1 more waiting", "d deny  o once  a always",
	} {
		c.waitText(want)
	}
	// The box's scopes start at the reach: never narrower.
	c.waitFor("scopes group and all", func(s string) bool {
		return strings.Contains(s, "scope:  group   all") && !strings.Contains(s, "tab  ")
	})
	// Keys in the box never reach the tab.
	c.send("zzz")
	c.send("s") // group → all
	c.send("s") // all → back to the reach
	c.send("\t")
	c.send("a")
	c.waitAnswers(f, "s1 allowed always all")

	// The next sheet follows in the box, its scope starting at its reach.
	c.waitText("wants to RUN")
	c.waitText("run_command: make test")
	c.send("d")
	c.waitAnswers(f, "s1 allowed always all", "s2 denied tab")
	c.waitNoText("permission sheet")
	c.waitText("mark-42")
	c.send("\r")
	time.Sleep(200 * time.Millisecond)
	if strings.Contains(c.text(), "zzz") {
		t.Errorf("keys typed into the box reached the tab:\n%s", c.text())
	}

	// Once, after widening to all from a tab reach.
	again := *run
	again.ID = "s3"
	f.push(&again)
	c.send("\x1cs")
	c.waitText("run_command: make test")
	c.send("so")
	c.waitAnswers(f, "s1 allowed always all", "s2 denied tab", "s3 allowed once group")
	c.waitNoText("permission sheet")
}

func TestSheetBoxEscAndWithdraw(t *testing.T) {
	c, f := sheetClient(t)
	c.send("\x1cs")
	c.waitText("no permission sheet waiting")

	f.push(readSheet("s1"))
	c.send("\x1cs")
	c.waitText("wants to READ")
	c.send("\x1b")
	c.waitNoText("wants to READ")
	if got := f.answered(); len(got) != 0 {
		t.Fatalf("Esc answered: %q", got)
	}
	if !strings.Contains(c.row(29), "1 sheet") {
		t.Errorf("after Esc the sheet still waits; status line %q", c.row(29))
	}

	// Withdrawn while the box is open: the box closes by itself.
	c.send("\x1cs")
	c.waitText("wants to READ")
	f.withdraw("s1")
	c.waitNoText("wants to READ")
	c.waitText("withdrawn")
}
