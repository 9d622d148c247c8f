package authz

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/authz/audit"
	"github.com/phantom-dev/phantom/authz/grants"
	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/authz/sheets"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

// floodTabs are the tabs of the flood: the human's h1, and the agents'.
func floodTabs(n int) fakeTabs {
	out := fakeTabs{{ID: "h1", Title: "human", Directory: "/src/app", Project: "/src/app", Idle: true}}
	for i := range n {
		out = append(out, policy.TabInfo{ID: fmt.Sprintf("f%d", i), Title: "agent", Directory: "/src/app", Project: "/src/app", Idle: true})
	}
	return out
}

// floodFixture is an authz service writing a real audit log, scaled
// down: rotated at 64 KiB, four old files kept.
type floodFixture struct {
	svc   *Service
	clock *sheets.FakeClock
	log   *audit.Log
	path  string
}

const floodMaxSize = 64 << 10

func newFloodFixture(t *testing.T, tabs fakeTabs, b Budget) *floodFixture {
	t.Helper()
	dir := t.TempDir()
	clock := sheets.NewFakeClock(time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC))
	path := filepath.Join(dir, audit.FileName)
	log := audit.Open(path, audit.Options{MaxSize: floodMaxSize, Now: clock.Now})
	svc := NewService(Options{
		Policy: policy.New(tabs, func(_ context.Context, dir string) string { return dir }),
		Grants: grants.Open(filepath.Join(dir, grants.FileName), clock.Now),
		Sheets: sheets.New(sheets.Options{Clock: clock}),
		Audit:  log,
		Budget: b,
	})
	f := &floodFixture{svc: svc, clock: clock, log: log, path: path}
	t.Cleanup(f.close)
	return f
}

func (f *floodFixture) close() { f.svc.Close(); f.log.Close() }

// size is the bytes of every file of the log.
func (f *floodFixture) size(t *testing.T) int64 {
	t.Helper()
	var n int64
	for _, name := range audit.Files(f.path) {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// entries reads every file of the log, oldest first.
func (f *floodFixture) entries(t *testing.T) []audit.Entry {
	t.Helper()
	var out []audit.Entry
	for _, name := range audit.Files(f.path) {
		file, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		es, bad, err := audit.Read(file, time.Time{})
		file.Close()
		if err != nil || len(bad) > 0 {
			t.Fatalf("%s: %v %v", name, err, bad)
		}
		out = append(out, es...)
	}
	return out
}

// call is one Authorize of the flood's client from tab.
func call(conn, tab, tool string, args map[string]string) *authzv1.AuthorizeRequest {
	b, _ := json.Marshal(args)
	return &authzv1.AuthorizeRequest{Caller: &authzv1.Caller{Client: "flood", ConnectionId: conn, TabId: tab, Pid: 4242, Program: testProgram},
		Tool: tool, ArgumentsJson: string(b)}
}

// raiseAndWithdraw asks, and gives up as soon as the sheet is up, as the
// attack did. It reports whether a sheet was raised; otherwise the call
// was refused at once, and its reason is returned.
func (f *floodFixture) raiseAndWithdraw(t *testing.T, r *authzv1.AuthorizeRequest) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type res struct {
		resp *authzv1.AuthorizeResponse
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		resp, err := f.svc.Authorize(ctx, r)
		ch <- res{resp, err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case got := <-ch:
			if got.err != nil || got.resp.GetAllowed() {
				t.Fatalf("raise: %v %v, want a refusal or a sheet", got.resp, got.err)
			}
			return false, got.resp.GetReason()
		default:
		}
		if n, _ := f.svc.sheets.Counts(); n > 0 {
			cancel()
			if got := <-ch; got.err == nil {
				t.Fatalf("withdrawn call: %v, want an error", got.resp)
			}
			return true, ""
		}
		if time.Now().After(deadline) {
			t.Fatal("neither a sheet nor a refusal")
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// TestAuditFlood is the attack of issue 23 in-process, on a real audit
// log scaled down (64 KiB files, capacity 256 KiB kept): six tabs without
// a grant raise and withdraw run_command sheets with 8,000-character
// commands, call with 8,000-character bad arguments from a new connection
// each time, and poll a read their standing grant allows, for half an
// hour of the fake clock. Within the budget, the command the human
// allowed before the flood is still in the log, the log grew no more
// than Budget.Bound, the human saw at most three sheets per tab per
// turn-away, and every line left out is counted, in a later line's
// Repeated or in a summary. Without the budget (the control), the same
// flood pushes the command out.
func TestAuditFlood(t *testing.T) {
	b := Budget{PerCaller: 16 << 10, All: 64 << 10, SummaryEvery: 5 * time.Minute}
	tests := []struct {
		name   string
		budget Budget
		kept   bool
	}{
		{"within the budget", b, true},
		{"control: no budget", Budget{PerCaller: 1 << 40, All: 1 << 40, SummaryEvery: time.Hour}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const nTabs, rounds = 6, 30
			f := newFloodFixture(t, floodTabs(nTabs), tt.budget)
			// Before the flood: a command the human allowed.
			marker := "echo the-human-allowed-this-before-the-flood"
			ch := make(chan *authzv1.AuthorizeResponse, 1)
			go func() {
				resp, _ := f.svc.Authorize(context.Background(), &authzv1.AuthorizeRequest{
					Caller: &authzv1.Caller{Client: "claude", ConnectionId: "h", TabId: "h1", Pid: 7, Program: testProgram},
					Tool:   "run_command", ArgumentsJson: `{"terminal_id":"h1","command":"` + marker + `"}`})
				ch <- resp
			}()
			var id string
			for id == "" {
				if l := f.svc.sheets.List(); len(l) > 0 {
					id = l[0].ID
				}
				time.Sleep(time.Millisecond)
			}
			if _, err := f.svc.AnswerSheet(context.Background(), &authzv1.AnswerSheetRequest{SheetId: id, Decision: authzv1.Decision_DECISION_ONCE}); err != nil {
				t.Fatal(err)
			}
			if r := <-ch; !r.GetAllowed() {
				t.Fatalf("the human's command: %v", r)
			}
			// The flood's tabs may read their own output (a standing grant).
			if _, err := f.svc.grants.Add(grants.Grant{Client: "flood", Capability: policy.Read, Scope: policy.Tab, Project: "/src/app", Always: true, Program: testProgram}); err != nil {
				t.Fatal(err)
			}
			before := f.size(t)

			made := map[string]int{} // flood lines authz had to decide, by event
			sheetsSeen := 0
			for round := range rounds {
				for i := range nTabs {
					tab := fmt.Sprintf("f%d", i)
					for k := range 6 {
						cmd := fmt.Sprintf("%d-%d-%d ", round, i, k) + strings.Repeat("x", 8000)
						raised, reason := f.raiseAndWithdraw(t, call("c-"+tab, tab, "run_command", map[string]string{"terminal_id": tab, "command": cmd}))
						if raised {
							made[audit.SheetRaised]++
							made[audit.Withdrawn]++
							sheetsSeen++
							continue
						}
						if !strings.Contains(reason, "withdrew 3 permission sheets") || !strings.Contains(reason, "wait for the human's answer") {
							t.Fatalf("refusal after withdrawals: %q", reason)
						}
						made[audit.TurnedAway]++
					}
					for k := range 5 {
						bad := fmt.Sprintf("nope-%d-%d-%d-", round, i, k) + strings.Repeat("y", 8000)
						resp, err := f.svc.Authorize(context.Background(), call(fmt.Sprintf("n-%d-%d-%d", round, i, k), tab, "read_output",
							map[string]string{"terminal_id": bad}))
						if err != nil || resp.GetAllowed() || !strings.Contains(resp.GetReason(), "no tab") {
							t.Fatalf("bad argument: %v %v", resp, err)
						}
						made[audit.Refused]++
					}
					for range 20 {
						resp, err := f.svc.Authorize(context.Background(), call("r-"+tab, tab, "read_output", map[string]string{"terminal_id": tab}))
						if err != nil || !resp.GetAllowed() {
							t.Fatalf("read under the standing grant: %v %v", resp, err)
						}
						made[audit.Allowed]++
					}
				}
				f.clock.Advance(time.Minute)
			}
			elapsed := time.Duration(rounds) * time.Minute
			// Each tab raised at most three sheets per turn-away: the
			// fourth call is turned away for a minute.
			if max := nTabs * 3 * rounds; sheetsSeen > max {
				t.Errorf("the human saw %d sheets, more than %d", sheetsSeen, max)
			}
			f.close()
			grew := f.size(t) - before
			es := f.entries(t)
			kept := false
			got := map[string]int{}
			summaries := 0
			for _, e := range es {
				if e.Event == audit.Allowed && e.Command == marker {
					kept = true
				}
				if e.Client == "flood" {
					got[e.Event] += 1 + e.Repeated
				}
				if e.Event == audit.Summary {
					summaries++
					for _, c := range e.Counts {
						if c.Client != "flood" && !c.Others {
							t.Errorf("summary row %+v of another client", c)
						}
						got[c.Event] += c.N
						if c.Others {
							t.Errorf("summary with an others row: %+v; the accounting cannot be checked by event", c)
						}
					}
				}
			}
			t.Logf("%d sheets raised; the log grew by %d bytes (bound %d) in %d lines, %d summaries", sheetsSeen, grew, tt.budget.Bound(elapsed), len(es), summaries)
			if kept != tt.kept {
				t.Errorf("the command allowed before the flood is in the log: %v, want %v", kept, tt.kept)
			}
			if !tt.kept {
				return
			}
			if bound := tt.budget.Bound(elapsed); grew > bound {
				t.Errorf("the log grew by %d bytes in %s, more than the budget's bound %d", grew, elapsed, bound)
			}
			if summaries == 0 {
				t.Error("no summary line: the flood did not exceed the budget")
			}
			for ev, n := range made {
				if got[ev] != n {
					t.Errorf("%s: %d lines, repeats and summary counts; the flood made %d", ev, got[ev], n)
				}
			}
		})
	}
}
