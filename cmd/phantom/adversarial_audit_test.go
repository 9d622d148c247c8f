package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/authz"
	"github.com/phantom-dev/phantom/authz/audit"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// floodBudget and floodActs are the scaled-down audit log and budgets of
// TestAdversarialAuditFlood: files of 64 KiB (256 KiB always kept), 12 KiB an
// hour per caller, 24 KiB for all, summaries hourly (and when authz
// stops); acts 16 KiB an hour per caller, 32 KiB for all.
var (
	floodBudget = authz.Budget{PerCaller: 12 << 10, All: 24 << 10, SummaryEvery: time.Hour}
	floodActs   = authz.Budget{PerCaller: 16 << 10, All: 32 << 10, SummaryEvery: time.Hour}
)

const floodMaxSize = 64 << 10

// auditBytes is the size of every file of the instance's audit log.
func auditBytes(t *testing.T, path string) int64 {
	t.Helper()
	var n int64
	for _, name := range audit.Files(path) {
		if fi, err := os.Stat(name); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// floodOutcome is a flood step's result (see testagent).
type floodOutcome struct {
	Calls     int            `json:"calls"`
	Refused   int            `json:"refused"`
	Allowed   int            `json:"allowed"`
	Cancelled int            `json:"cancelled"`
	Failed    int            `json:"failed"`
	Texts     map[string]int `json:"texts"`
}

// TestAdversarialAuditFlood is issue 23's attack end to end: tabs with no grant
// (sandboxed where the kernel allows) run the official MCP Go SDK client
// through the real socket, raising run_command sheets with 8,000-character
// commands and cancelling each call before the human answers, a thousand
// times each; and one whose standing grant lets it type, types 8,000
// characters a command in a loop. Each tab is turned away after three
// withdrawals, without a new sheet, told why; the typist is refused once
// its acts are over the act budget, told why. Afterwards the command the
// human allowed before the flood is still in the log, every command typed
// is there in full, the log grew no more than the budgets' bounds, and
// the lines left out are counted in the summary authz writes.
func TestAdversarialAuditFlood(t *testing.T) {
	t.Parallel()
	env := adversaryUp(t, fmt.Sprintf("%s=%d,%d,%d,%s,%d,%d", authz.AuditSizesEnv, floodMaxSize, floodBudget.PerCaller, floodBudget.All,
		floodBudget.SummaryEvery, floodActs.PerCaller, floodActs.All))
	run := func(args ...string) string { return mustPhantom(t, env, args...) }
	logPath := env.Layout.State + "/" + audit.FileName
	first, _ := settledShell(t, env)

	// Before the flood: a command the human allowed.
	marker := "echo the-human-allowed-this-before-the-flood"
	a := newAuthzCaller(t, env)
	args, _ := json.Marshal(map[string]string{"terminal_id": first, "command": marker})
	ch := a.ask("e2e", "before", "run_command", string(args))
	mustPhantom(t, env, "sheet", "answer", waitSheet(t, env, "run_command"), "--once")
	if r := a.wait(ch); !r.GetAllowed() {
		t.Fatalf("the human's command: %v", r)
	}
	eventually(t, "the allowed command in the log", func() (bool, string) {
		for _, e := range auditJSON(t, run) {
			if e.Event == audit.Allowed && e.Command == marker {
				return true, ""
			}
		}
		return false, ""
	})

	var flags []string
	if sandbox.ABI() >= sandbox.MinABI && sandbox.ProbeWalls(phantomBin) == nil {
		flags = append(flags, "--sandbox")
	} else {
		t.Log("no sandboxed tabs on this machine: the flood runs from plain tabs")
	}
	const tabsN, calls = 3, 1000
	long := strings.Repeat("x", 8000)
	type flooder struct {
		tab string
		run agentRun
	}
	var (
		fl  []flooder
		gos []string // the files that start the floods
	)
	for i := range tabsN {
		atk := newAttacker(t, env, fmt.Sprintf("flood%d", i), flags...)
		gos = append(gos, filepath.Join(atk.dir, "go"))
		fl = append(fl, flooder{atk.tab, atk.agent("flood", map[string]any{"op": "wait", "file": gos[i]},
			map[string]any{"op": "flood", "tool": "run_command", "args": map[string]any{"terminal_id": first, "command": "echo $I " + long},
				"n": calls, "cancel_ms": 2000})})
	}
	// The typist: the human allows it always, then it types in a loop.
	typist := newAttacker(t, env, "typist", flags...)
	gos = append(gos, filepath.Join(typist.dir, "go"))
	typing := typist.agent("typist", map[string]any{"op": "call", "tool": "run_command", "args": map[string]any{"terminal_id": first, "command": ": granted"}},
		map[string]any{"op": "wait", "file": gos[len(gos)-1]},
		map[string]any{"op": "flood", "tool": "run_command", "args": map[string]any{"terminal_id": first, "command": ": $I " + long},
			"n": 100, "cancel_ms": 20000})
	s := agentAsksHuman(t, env, typing.read, 0, typist.tab, "run_command", "the typist's first command")
	mustPhantom(t, env, "sheet", "answer", fmt.Sprint(s["id"]), "--always", "--scope", "all")
	if f := failure(t, waitStep(t, typing.read, 0)); f != "" {
		t.Fatalf("the typist's first command: %s", f)
	}

	before, start := auditBytes(t, logPath), time.Now()
	for _, g := range gos {
		if err := os.WriteFile(g, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	outcomes := map[string]floodOutcome{}
	for _, f := range fl {
		l := waitStepWithin(t, f.run.read, 1, 3*time.Minute)
		var o floodOutcome
		if err := json.Unmarshal(l.Result, &o); err != nil || l.Error != "" {
			t.Fatalf("tab %s: the flood step: %v %s %s", f.tab, err, l.Error, l.Result)
		}
		outcomes[f.tab] = o
		told := false
		for text := range o.Texts {
			told = told || strings.Contains(text, "withdrew 3 permission sheets") && strings.Contains(text, "wait for the human's answer")
		}
		if o.Calls != calls || o.Cancelled < 3 || o.Refused < calls/2 || !told {
			t.Errorf("tab %s: %+v; want 3 or more cancelled, then refusals saying the tab withdrew 3 sheets", f.tab, o)
		}
	}
	var typed floodOutcome
	if l := waitStepWithin(t, typing.read, 2, 3*time.Minute); json.Unmarshal(l.Result, &typed) != nil || l.Error != "" {
		t.Fatalf("the typist's flood: %s %s", l.Error, l.Result)
	}
	overActs := false
	for text := range typed.Texts {
		overActs = overActs || strings.Contains(text, "over the audit log's budget for acts") && strings.Contains(text, "ask the human")
	}
	if !overActs || typed.Allowed < 1 || typed.Allowed > int(floodActs.PerCaller/8000) {
		t.Errorf("the typist: %+v; want a few commands typed, then refusals saying its acts are over the budget", typed)
	}
	elapsed := time.Since(start)
	// authz writes its last summary as it stops.
	mustPhantom(t, env, "down")
	t.Cleanup(func() { phantom(t, env, "up") }) // for the cleanups, which expect an instance

	entries := auditJSON(t, run)
	defer func() {
		if t.Failed() {
			t.Log(run("audit"))
		}
	}()
	grew := auditBytes(t, logPath) - before
	bound := floodBudget.Bound(elapsed) + floodActs.Bound(elapsed)
	t.Logf("the flood took %s; the log grew by %d bytes (bound %d), %d entries", elapsed, grew, bound, len(entries))
	kept, typedLines := false, 0
	type tally struct{ sheets, decided, summarized int }
	per := map[string]*tally{}
	for _, f := range fl {
		per[f.tab] = &tally{}
	}
	summaries := 0
	for _, e := range entries {
		if e.Event == audit.Allowed && e.Command == marker {
			kept = true
		}
		if e.Event == audit.Allowed && e.Client == "typist" && strings.HasPrefix(e.Command, ": ") && strings.HasSuffix(e.Command, long) {
			typedLines++
		}
		if e.Event == audit.Summary {
			summaries++
			for _, c := range e.Counts {
				if c.Others {
					t.Errorf("a summary row of other callers, which cannot be checked: %+v", c)
				}
				if tl := per[c.Tab]; tl != nil {
					tl.summarized += c.N
					if c.Event == audit.SheetRaised {
						tl.sheets += c.N
					} else {
						tl.decided += c.N
					}
				}
			}
		}
		tl := per[e.Tab]
		if tl == nil || e.Client != "flood" {
			continue
		}
		if e.Event == audit.SheetRaised {
			tl.sheets += 1 + e.Repeated
		} else {
			tl.decided += 1 + e.Repeated
		}
	}
	if !kept {
		t.Error("the command the human allowed before the flood is no longer in the audit log")
	}
	if grew > bound {
		t.Errorf("the log grew by %d bytes in %s, more than the budgets' bound %d", grew, elapsed, bound)
	}
	if typedLines != typed.Allowed {
		t.Errorf("%d of the typist's commands are in the log in full; it typed %d", typedLines, typed.Allowed)
	}
	if summaries == 0 {
		t.Error("no summary line, though the flood was over the budget")
	}
	maxSheets := 3 * (1 + int(elapsed/time.Minute))
	for tab, tl := range per {
		o := outcomes[tab]
		// Every call that came back refused was decided, and logged or
		// counted; a cancelled one may have been given up before authz
		// saw it.
		if tl.decided < o.Refused || tl.decided > o.Calls {
			t.Errorf("tab %s: %d decisions logged or counted; the agent made %d calls, %d came back refused", tab, tl.decided, o.Calls, o.Refused)
		}
		if tl.sheets < 1 || tl.sheets > maxSheets {
			t.Errorf("tab %s raised %d sheets, want 1 to %d (three per turn-away)", tab, tl.sheets, maxSheets)
		}
		if tl.summarized == 0 {
			t.Errorf("tab %s: nothing of its flood in a summary", tab)
		}
	}
}
