package main

// The adversarial suite of issue 8: "the permission boundary holds against
// an agent that has a shell". Every attack runs FROM A REAL TAB of a real,
// isolated instance — a shell command typed into an attacker tab, or the
// official MCP Go SDK client running there — the way an eager model tries
// when refused: setsid, double forks, cleared or forged PHANTOM_*
// variables, rewritten files, grpcurl on every daemon socket, every
// `phantom` subcommand, floods, a fake authz. The test plays the human,
// outside Phantom. For each attack it asserts the refusal and that nothing
// changed: no grant added, no sheet answered, no tab closed or resized, no
// file written, no key typed into the human's tab.
//
// Each test runs its own instance (so the tests run in parallel); the
// subtests of one test share it and run in order.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/authz"
	"github.com/phantom-dev/phantom/internal/testenv"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestAdversarialIdentity: who is inside Phantom comes from the kernel,
// not from files (issue 8, points 1 and 4).
func TestAdversarialIdentity(t *testing.T) {
	t.Parallel()
	env := adversaryUp(t)
	human, _ := settledShell(t, env)
	humanState := filepath.Join(env.Layout.TabStateDir(), human+".json")
	const marker = "identity-secret-marker"
	target := humanTab(t, env, "secrets", marker)

	// The agent answers its own pending sheet "always, all", hiding where
	// the answer comes from; it must stay pending until the human answers.
	t.Run("answering its own sheet", func(t *testing.T) {
		for _, d := range []disguise{plainly, afterSetsid, setsidOrphan, doubleFork, envCleared,
			movedTabState, rewrittenTabState, posingAs(human, humanState)} {
			t.Run(d.name, func(t *testing.T) {
				a := newAttacker(t, env, "attacker")
				read := a.start(shellCmd(phantomBin, "read", target))
				s := asksHuman(t, env, read, a.tab, "read_output", "phantom read "+target)
				id := s["id"].(string)
				grants := grantIDs(t, env)

				r := a.run(d.wrap(shellCmd("timeout", "10", phantomBin, "sheet", "answer", id, "--always", "--scope", "all")))
				checkOrphan(t, env, d, r)
				if !refused(r) {
					t.Errorf("the attacker ran `phantom sheet answer %s --always --scope all` %s; want a refusal, got %v", id, d.name, r)
				}
				if sheetOf(t, env, a.tab, "read_output") == nil {
					t.Errorf("after the attacker answered %s, its sheet %s is no longer waiting: %v", d.name, id, sheetsJSON(t, env))
				}
				if got := grantIDs(t, env); !slices.Equal(got, grants) {
					t.Errorf("after the attacker answered %s, the grants are %v, were %v", d.name, grantsJSON(t, env), grants)
				}
				if r, ok := read.done(); ok {
					t.Errorf("the attacker's `phantom read %s` ended before the human answered: %v", target, r)
				}

				deny(t, env, s)
				if r := read.wait(); r.code == 0 || strings.Contains(r.out, marker) {
					t.Errorf("the human denied, yet the attacker's `phantom read %s` gave %v", target, r)
				}
			})
		}
	})

	// Pid files are not trusted: a process that wrote its own pid into every
	// daemon's pid file is still the tab's agent: its read asks, and its
	// answer is refused.
	t.Run("its own pid in every daemon pid file", func(t *testing.T) {
		pidFiles, _ := filepath.Glob(filepath.Join(env.Layout.Runtime, "*.pid"))
		if len(pidFiles) == 0 {
			t.Fatalf("no pid files in %s", env.Layout.Runtime)
		}
		saved := map[string][]byte{}
		for _, f := range pidFiles {
			saved[f], _ = os.ReadFile(f)
		}
		t.Cleanup(func() {
			for f, b := range saved {
				os.WriteFile(f, b, 0o600)
			}
		})
		// asDaemon writes the shell's pid into every pid file, then execs
		// argv in the same process.
		asDaemon := func(argv ...string) string {
			return `for f in ` + sq(env.Layout.Runtime) + `/*.pid; do echo $$ >"$f" || exit 99; done; exec ` + shellCmd(argv...)
		}
		a := newAttacker(t, env, "attacker")
		read := a.start(asDaemon(phantomBin, "read", target))
		s := asksHuman(t, env, read, a.tab, "read_output", "phantom read "+target+" with its pid in every pid file")
		pid := strconv.Itoa(int(s["pid"].(float64)))
		for _, f := range pidFiles {
			if b, _ := os.ReadFile(f); strings.TrimSpace(string(b)) != pid {
				t.Errorf("pid file %s holds %q, want the attacker's pid %s: the attack did not happen as planned", f, b, pid)
			}
		}

		id := s["id"].(string)
		if r := a.run(asDaemon(phantomBin, "sheet", "answer", id, "--always", "--scope", "all")); !refused(r) {
			t.Errorf("the attacker, its pid in every pid file, ran `phantom sheet answer %s --always --scope all`; want a refusal, got %v", id, r)
		}
		if sheetOf(t, env, a.tab, "read_output") == nil || len(grantIDs(t, env)) != 0 {
			t.Errorf("after the attacker answered with its pid in every pid file: sheets %v, grants %v", sheetsJSON(t, env), grantsJSON(t, env))
		}

		deny(t, env, s)
		if r := read.wait(); r.code == 0 || strings.Contains(r.out, marker) {
			t.Errorf("the human denied, yet the attacker (its pid in every pid file) read: %v", r)
		}
	})

	// "Once" lives as long as the process the human allowed: the next
	// process of the same tab asks again, and the dead grant is not listed.
	t.Run("once dies with the process", func(t *testing.T) {
		a := newAttacker(t, env, "attacker")
		first := a.start(shellCmd(phantomBin, "read", target))
		s := asksHuman(t, env, first, a.tab, "read_output", "phantom read "+target)
		mustPhantom(t, env, "sheet", "answer", s["id"].(string), "--once")
		if r := first.wait(); r.code != 0 || !strings.Contains(r.out, marker) {
			t.Fatalf("the human allowed `phantom read %s` once, yet it gave %v", target, r)
		}
		conn := "proc-" + strconv.Itoa(int(s["pid"].(float64))) + "-"
		eventually(t, "no once grant of the exited process "+conn+"…", func() (bool, string) {
			gs := grantsJSON(t, env)
			return !slices.ContainsFunc(gs, func(g map[string]any) bool {
				return g["always"] == false && strings.HasPrefix(fmt.Sprint(g["connection_id"]), conn)
			}), fmt.Sprint(gs)
		})

		second := a.start(shellCmd(phantomBin, "read", target))
		s2 := asksHuman(t, env, second, a.tab, "read_output", "a second phantom read "+target+" from the same tab")
		if s2["id"] == s["id"] {
			t.Errorf("the second process got the first one's sheet %v", s2["id"])
		}
		deny(t, env, s2)
		if r := second.wait(); r.code == 0 || strings.Contains(r.out, marker) {
			t.Errorf("the second process, denied, gave %v", r)
		}
	})
}

// TestAdversarialHumanOnly: human-only acts are refused for every process
// inside Phantom, orphaned, setsid'd or with PHANTOM_* cleared (point 2).
func TestAdversarialHumanOnly(t *testing.T) {
	t.Parallel()
	env := adversaryUp(t, authz.SheetTimeoutEnv+"=3m")
	human, humanOut := settledShell(t, env)
	_, ac := humanClients(t, env)
	grant := standingGrant(t, env, ac, "standing-agent", human)
	sheet := pendingSheet(t, env, ac, "pending-agent", "pending-conn", human)
	a := newAttacker(t, env, "attacker")
	nTabs := len(tabs(t, env))

	stillPending := func(t *testing.T, attack string) {
		t.Helper()
		if !slices.Contains(sheetIDs(t, env), sheet) {
			t.Errorf("after %s, sheet %s is no longer waiting: %v", attack, sheet, sheetsJSON(t, env))
		}
	}
	stillGranted := func(t *testing.T, attack string) {
		t.Helper()
		if ids := grantIDs(t, env); !slices.Equal(ids, []string{grant}) {
			t.Errorf("after %s, the grants are %v, want just %s", attack, grantsJSON(t, env), grant)
		}
	}
	acts := []struct {
		name string
		args []string
		// redirect is added to the command line, e.g. the tab's terminal
		// for commands that need one.
		redirect string
		// unchanged checks what the act would have changed; out is what
		// it printed.
		unchanged func(t *testing.T, attack, out string)
	}{
		{name: "phantom sheet answer", args: []string{"sheet", "answer", sheet, "--always", "--scope", "all"},
			unchanged: func(t *testing.T, attack, _ string) { stillPending(t, attack); stillGranted(t, attack) }},
		{name: "phantom sheet list", args: []string{"sheet", "list", "--json"},
			unchanged: func(t *testing.T, attack, out string) {
				if strings.Contains(out, "pending-agent") {
					t.Errorf("%s listed the human's sheets:\n%s", attack, out)
				}
			}},
		{name: "phantom sheet (interactive)", args: []string{"sheet"}, redirect: " <" + sq(a.pty),
			unchanged: func(t *testing.T, attack, out string) {
				stillPending(t, attack)
				if strings.Contains(out, "pending-agent") {
					t.Errorf("%s showed the human's sheet:\n%s", attack, out)
				}
			}},
		{name: "phantom grants", args: []string{"grants", "--json"},
			unchanged: func(t *testing.T, attack, out string) {
				if strings.Contains(out, grant) {
					t.Errorf("%s listed the human's grants:\n%s", attack, out)
				}
			}},
		{name: "phantom grants revoke", args: []string{"grants", "revoke", grant},
			unchanged: func(t *testing.T, attack, _ string) { stillGranted(t, attack) }},
		{name: "phantom attach", args: []string{"attach", human}, redirect: " <" + sq(a.pty) + " >" + sq(a.pty),
			unchanged: func(t *testing.T, attack, _ string) { unchangedOutput(t, env, human, humanOut, attack) }},
		// phantom close is the close_terminal tool from a tab: it asks
		// (TestAdversarialSendKeysAround, TestKeysToolHumanTabAsks).
		{name: "phantom daemon authz", args: []string{"daemon", "authz", "--listen", "unix://" + filepath.Join(a.dir, "authz.sock")},
			unchanged: func(t *testing.T, attack, _ string) {
				if _, err := os.Lstat(filepath.Join(a.dir, "authz.sock")); err == nil {
					t.Errorf("after %s, a second authz listens on its socket", attack)
				}
			}},
	}
	for _, act := range acts {
		for _, d := range []disguise{plainly, setsidOrphan, envCleared, setsidOrphan.then(envCleared)} {
			t.Run(act.name+" "+d.name, func(t *testing.T) {
				attack := fmt.Sprintf("`%s` run %s", act.name, d.name)
				r := a.run(d.wrap(shellCmd(append([]string{"timeout", "10", phantomBin}, act.args...)...) + act.redirect))
				checkOrphan(t, env, d, r)
				if !refused(r) {
					t.Errorf("%s: want a refusal, got %v", attack, r)
				}
				act.unchanged(t, attack, r.out)
			})
		}
	}

	t.Run("nothing changed", func(t *testing.T) {
		stillPending(t, "every attack")
		stillGranted(t, "every attack")
		unchangedOutput(t, env, human, humanOut, "every attack")
		if n := len(tabs(t, env)); n != nTabs {
			t.Errorf("after every attack there are %d tabs, were %d", n, nTabs)
		}
	})
}

// TestAdversarialRPC: every RPC of every daemon, called with grpcurl from
// a tab, gives exactly what the tab's MCP tools would (point 3).
func TestAdversarialRPC(t *testing.T) {
	t.Parallel()
	grpcurl := grpcurlPath(t)
	env := adversaryUp(t, authz.SheetTimeoutEnv+"=3m")
	human, humanOut := settledShell(t, env)
	tc, ac := humanClients(t, env)
	grant := standingGrant(t, env, ac, "standing-agent", human)
	sheet := pendingSheet(t, env, ac, "pending-agent", "pending-conn", human)
	repo := filepath.Join(env.Home, "src", "app")
	if err := os.MkdirAll(filepath.Dir(repo), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, env, filepath.Dir(repo), "init", "-q", "-b", "main", repo)
	gitIn(t, env, repo, "commit", "-q", "--allow-empty", "-m", "init")
	a := newAttacker(t, env, "attacker")

	nTabs := len(tabs(t, env))
	humanTerm := tabByID(tabs(t, env), human)
	ctx := t.Context()
	windows, err := tc.ListWindows(ctx, &terminalv1.ListWindowsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	pwned := filepath.Join(a.dir, "pwned")

	grpc := func(daemon, data, method string) string {
		return shellCmd("timeout", "10", grpcurl, "-plaintext", "-unix", "-d", data, env.Layout.DaemonSocket(daemon), method)
	}
	worktrees := func(t *testing.T, attack string) {
		t.Helper()
		list := gitIn(t, env, repo, "worktree", "list", "--porcelain")
		if n := strings.Count(list, "worktree "); n != 1 {
			t.Errorf("after %s, the repository has %d worktrees, want only the main one:\n%s", attack, n, list)
		}
	}
	stillPending := func(t *testing.T, attack string) {
		t.Helper()
		if ids := sheetIDs(t, env); !slices.Equal(ids, []string{sheet}) {
			t.Errorf("after %s, the waiting sheets are %v, want just %s", attack, sheetsJSON(t, env), sheet)
		}
	}
	stillGranted := func(t *testing.T, attack string) {
		t.Helper()
		if ids := grantIDs(t, env); !slices.Equal(ids, []string{grant}) {
			t.Errorf("after %s, the grants are %v, want just %s", attack, grantsJSON(t, env), grant)
		}
	}

	// grpcurl works from the tab: the open methods answer, so the refusals
	// below are the guard's.
	for _, c := range []struct{ daemon, method string }{
		{"authz", "phantom.authz.v1.AuthzService/ListPolicy"},
		{"terminald", "grpc.health.v1.Health/Check"},
		{"gitd", "grpc.health.v1.Health/Check"},
	} {
		if r := a.run(grpc(c.daemon, "{}", c.method)); r.code != 0 {
			t.Fatalf("grpcurl %s %s from the attacker's tab failed, so nothing below would prove anything: %v", c.daemon, c.method, r)
		}
	}

	keys := base64.StdEncoding.EncodeToString([]byte("echo INJECTED-BY-ATTACH\r"))
	forged := fmt.Sprintf(`{"terminal_id":%q,"command":"git push --force"}`, human)
	rpcs := []struct {
		name, daemon, method, data string
		unchanged                  func(t *testing.T, attack, out string)
	}{
		// CloseTerminal is the close_terminal tool: from a tab it asks
		// (TestAdversarialSendKeysAround).
		{"ResizeTerminal of the human's tab", "terminald", "ResizeTerminal", `{"terminal_id":"` + human + `","cols":20,"rows":5}`,
			func(t *testing.T, attack, _ string) {
				if tb := tabByID(tabs(t, env), human); tb["cols"] != humanTerm["cols"] || tb["rows"] != humanTerm["rows"] {
					t.Errorf("after %s, the human's tab is %vx%v, was %vx%v", attack, tb["cols"], tb["rows"], humanTerm["cols"], humanTerm["rows"])
				}
			}},
		{"CreateTerminal with the human-only command", "terminald", "CreateTerminal",
			fmt.Sprintf(`{"directory":%q,"command":["sh","-c","echo pwned >%s"]}`, env.Home, pwned),
			func(t *testing.T, attack, _ string) {
				time.Sleep(300 * time.Millisecond) // a tab, had it started, would have written by now
				if _, err := os.Stat(pwned); err == nil {
					t.Errorf("after %s, its command ran", attack)
				}
				if n := len(tabs(t, env)); n != nTabs {
					t.Errorf("after %s, there are %d tabs, were %d", attack, n, nTabs)
				}
			}},
		{"Attach typing into the human's tab", "terminald", "Attach",
			fmt.Sprintf(`{"hello":{"target":%q,"size":{"cols":80,"rows":24}}} {"input":%q}`, human, keys),
			func(t *testing.T, attack, _ string) { unchangedOutput(t, env, human, humanOut, attack) }},
		{"SetAgentState of the human's tab", "terminald", "SetAgentState",
			`{"terminal_id":"` + human + `","client":"claude","state":"AGENT_STATE_WORKING"}`,
			func(t *testing.T, attack, _ string) {
				if tb := tabByID(tabs(t, env), human); tb["agent_client"] != "" {
					t.Errorf("after %s, the human's tab shows agent %v, %v", attack, tb["agent_client"], tb["agent_state"])
				}
			}},
		{"WatchTerminals", "terminald", "WatchTerminals", `{}`, nil},
		{"LocateProcess", "terminald", "LocateProcess", `{"pid":1}`, nil},
		{"ListWindows", "terminald", "ListWindows", `{}`, nil},
		{"CreateWindow", "terminald", "CreateWindow", `{"name":"evil"}`,
			func(t *testing.T, attack, _ string) {
				if w, err := tc.ListWindows(ctx, &terminalv1.ListWindowsRequest{}); err != nil || len(w.GetWindows()) != len(windows.GetWindows()) {
					t.Errorf("after %s, the windows are %v (%v), were %v", attack, w, err, windows)
				}
			}},
		{"Authorize for a made-up caller in the human's tab", "authz", "Authorize",
			fmt.Sprintf(`{"caller":{"client":"claude","connection_id":"forged","tab_id":%q,"pid":1},"tool":"run_command","arguments_json":%q}`, human, forged),
			func(t *testing.T, attack, _ string) { stillPending(t, attack) }},
		{"AnswerSheet always, all", "authz", "AnswerSheet", `{"sheet_id":"` + sheet + `","decision":"DECISION_ALWAYS","scope":"SCOPE_ALL"}`,
			func(t *testing.T, attack, _ string) { stillPending(t, attack); stillGranted(t, attack) }},
		{"EndConnection of the waiting sheet's connection", "authz", "EndConnection", `{"connection_id":"pending-conn"}`,
			func(t *testing.T, attack, _ string) { stillPending(t, attack) }},
		{"ListGrants", "authz", "ListGrants", `{}`,
			func(t *testing.T, attack, out string) {
				if strings.Contains(out, grant) {
					t.Errorf("%s listed the human's grants:\n%s", attack, out)
				}
			}},
		{"RevokeGrant", "authz", "RevokeGrant", `{"grant_id":"` + grant + `"}`,
			func(t *testing.T, attack, _ string) { stillGranted(t, attack) }},
		{"ListSheets", "authz", "ListSheets", `{}`,
			func(t *testing.T, attack, out string) {
				if strings.Contains(out, sheet) {
					t.Errorf("%s listed the human's sheets:\n%s", attack, out)
				}
			}},
		{"WatchSheets", "authz", "WatchSheets", `{}`, nil},
		{"AddWorktree with the hidden caller_tab_id", "gitd", "AddWorktree",
			fmt.Sprintf(`{"repository":%q,"branch":"evil","caller_tab_id":%q}`, repo, human),
			func(t *testing.T, attack, _ string) { worktrees(t, attack) }},
	}
	services := map[string]string{
		"terminald": "phantom.terminal.v1.TerminalService/",
		"authz":     "phantom.authz.v1.AuthzService/",
		"gitd":      "phantom.git.v1.GitService/",
	}
	for _, c := range rpcs {
		t.Run(c.daemon+" "+c.name, func(t *testing.T) {
			attack := fmt.Sprintf("grpcurl %s %s from tab %s", c.daemon, c.method, a.tab)
			r := a.run(grpc(c.daemon, c.data, services[c.daemon]+c.method))
			if !refused(r) || !strings.Contains(r.out, "PermissionDenied") {
				t.Errorf("%s: want PermissionDenied, got %v", attack, r)
			}
			if c.unchanged != nil {
				c.unchanged(t, attack, r.out)
			}
		})
	}

	// Tools called directly need the human as they do over MCP, also from
	// a process that left its tab (whose reach is then `all`): a sheet,
	// which the human denies — never a silent act.
	calls := []struct{ name, daemon, method, tool, data string }{
		{"RunCommand into the human's shell", "terminald", "RunCommand", "run_command",
			fmt.Sprintf(`{"terminal_id":%q,"command":"echo INJECTED-BY-GRPCURL"}`, human)},
		{"AddWorktree", "gitd", "AddWorktree", "add_worktree", fmt.Sprintf(`{"repository":%q,"branch":"no-grant"}`, repo)},
	}
	for _, c := range calls {
		for _, d := range []disguise{plainly, setsidOrphan} {
			t.Run(c.daemon+" "+c.name+" without a grant "+d.name, func(t *testing.T) {
				attack := fmt.Sprintf("grpcurl %s %s without a grant, %s", c.daemon, c.method, d.name)
				a := newAttacker(t, env, "attacker") // a fresh tab: a denial turns a tab away
				j := a.start(d.wrap(grpc(c.daemon, c.data, services[c.daemon]+c.method)))
				var s map[string]any
				if !d.orphan {
					s = asksHuman(t, env, j, a.tab, c.tool, attack)
				} else {
					// It left its tab's tree. Callers in no tab share their
					// client's turn-away, so an earlier denial of such a
					// caller may refuse it at once, without a sheet.
					eventually(t, "a sheet or a turn-away ("+attack+")", func() (bool, string) {
						if s = sheetOf(t, env, "", c.tool); s != nil {
							return true, ""
						}
						_, ok := j.done()
						return ok, fmt.Sprint(sheetsJSON(t, env))
					})
					if r, _ := j.done(); s == nil && !strings.Contains(r.out, "without asking") {
						t.Errorf("%s ended without asking the human, and not turned away: %v", attack, r)
					}
				}
				if s != nil {
					if s["reach"] != "SCOPE_ALL" {
						t.Errorf("%s: the sheet's reach is %v, want SCOPE_ALL: %v", attack, s["reach"], s)
					}
					deny(t, env, s)
				}
				r := j.wait()
				checkOrphan(t, env, d, r)
				if !refused(r) {
					t.Errorf("%s: the human denied, yet it gave %v", attack, r)
				}
				worktrees(t, attack)
				unchangedOutput(t, env, human, humanOut, attack)
			})
		}
	}

	t.Run("nothing changed", func(t *testing.T) {
		stillPending(t, "every attack")
		stillGranted(t, "every attack")
		unchangedOutput(t, env, human, humanOut, "every attack")
	})
}

// TestAdversarialWidening: no sequence of free tool calls widens what a
// grant covers (point 5). An agent holds "read, always, group" for the
// group the human put its tab in.
func TestAdversarialWidening(t *testing.T) {
	t.Parallel()
	const turnAway = time.Second
	env := adversaryUp(t, authz.TurnAwayEnv+"="+turnAway.String())
	tc, _ := humanClients(t, env)
	g1, g2 := humanGroup(t, tc, "agents"), humanGroup(t, tc, "other")
	mate := humanTab(t, env, "mate", "mate-marker", "--group", g1)
	const secret = "ungrouped-secret-marker"
	loner := humanTab(t, env, "secrets", secret)
	const other = "other-group-secret-marker"
	neighbour := humanTab(t, env, "neighbour", other, "--group", g2)
	const reviewer = "reviewer-secret-marker"
	review := humanTab(t, env, "review", reviewer, "--group", g2)
	a := newAttacker(t, env, "agent", "--group", g1)
	const client = "widener"

	// afterTurnAway waits out the turn-away of the attacker's tab after
	// the human denied it.
	afterTurnAway := func() { time.Sleep(turnAway + 500*time.Millisecond) }
	// widened checks that step i, a read the group grant must not cover,
	// asks the human, and that once denied it reads nothing.
	widened := func(t *testing.T, run agentRun, i int, marker, attack string) map[string]any {
		t.Helper()
		s := agentAsksHuman(t, env, run.read, i, a.tab, "read_output", attack)
		if s["reach"] != "SCOPE_ALL" {
			t.Errorf("%s: the sheet's reach is %v, want SCOPE_ALL: %v", attack, s["reach"], s)
		}
		deny(t, env, s)
		l := waitStep(t, run.read, i)
		if r := resultOf(t, l); !r.IsError || (marker != "" && strings.Contains(r.text(), marker)) {
			t.Errorf("%s: the human denied, yet the read gave %+v", attack, r)
		}
		return s
	}

	t.Run("the human grants read for the group", func(t *testing.T) {
		run := a.agent(client, permRead(mate))
		s := agentAsksHuman(t, env, run.read, 0, a.tab, "read_output", "read_output of a tab of its group")
		if s["reach"] != "SCOPE_GROUP" {
			t.Fatalf("reading tab %s, which the human put in the agent's group %s, reaches %v; want SCOPE_GROUP: %v", mate, g1, s["reach"], s)
		}
		mustPhantom(t, env, "sheet", "answer", s["id"].(string), "--always", "--scope", "group")
		permResult(t, waitStep(t, run.read, 0), false, "mate-marker")
		// Covered from now on, without a sheet.
		run = a.agent(client, permRead(mate))
		permResult(t, permStepNoSheet(t, env, run.read, 0), false, "mate-marker")
	})

	// The agent renames a tab of the human's and pulls it into its own
	// group, then reads it.
	for _, victim := range []struct{ name, tab, marker string }{
		{"the human's ungrouped tab", loner, secret},
		{"a tab of the human's other group", neighbour, other},
	} {
		t.Run("move_to_group pulls "+victim.name+" into the agent's group", func(t *testing.T) {
			run := a.agent(client,
				map[string]any{"op": "call", "tool": "update_terminal", "args": map[string]any{"terminal_id": victim.tab, "name": "build-logs"}},
				map[string]any{"op": "call", "tool": "move_to_group", "args": map[string]any{"terminal_id": victim.tab, "group_id": g1}},
				permRead(victim.tab))
			for i := range 2 {
				if f := failure(t, waitStep(t, run.read, i)); f != "" {
					t.Logf("step %d (a free call) was refused: %s", i, f)
				}
			}
			if tb := tabByID(tabs(t, env), victim.tab); tb["group_id"] != g1 {
				t.Logf("%s is in group %v after move_to_group, not %s", victim.name, tb["group_id"], g1)
			}
			s := widened(t, run, 2, victim.marker, "read_output of "+victim.name+" after the agent renamed it and moved it into its group")
			if subj := fmt.Sprint(s["subject"]); !strings.Contains(subj, "named by an agent") || !strings.Contains(subj, "build-logs") {
				t.Errorf("the sheet's subject %q hides that the agent named the tab it reads", subj)
			}
			afterTurnAway()
		})
	}

	t.Run("create_terminal spawns a tab into the agent's group", func(t *testing.T) {
		run := a.agent(client, map[string]any{"op": "call", "tool": "create_terminal", "args": map[string]any{"group_id": g1, "name": "spawned"}})
		r := resultOf(t, waitStep(t, run.read, 0))
		term, _ := r.StructuredContent["terminal"].(map[string]any)
		spawned, _ := term["id"].(string)
		if r.IsError || spawned == "" {
			t.Fatalf("create_terminal into the agent's group failed: %+v", r)
		}
		t.Cleanup(func() { phantom(t, env, "close", spawned) })
		// The tab it opened is its own (reach tab): the group grant covers
		// it, and it widens nothing — the human's ungrouped tab still asks.
		run = a.agent(client, permRead(spawned))
		permResult(t, permStepNoSheet(t, env, run.read, 0), false)
		// A run of its own: a sheet it raised could race the check above.
		run = a.agent(client, permRead(loner))
		widened(t, run, 0, secret, "read_output of the human's tab after the agent spawned a tab into its group")
		afterTurnAway()
	})

	t.Run("move_to_group moves the agent's own tab into another group", func(t *testing.T) {
		run := a.agent(client,
			map[string]any{"op": "call", "tool": "move_to_group", "args": map[string]any{"terminal_id": "$PHANTOM_TAB_ID", "group_id": g2}},
			permRead(review))
		if f := failure(t, waitStep(t, run.read, 0)); f != "" {
			t.Logf("moving its own tab (a free call) was refused: %s", f)
		}
		widened(t, run, 1, reviewer, "read_output of a tab of the group the agent moved itself into")
	})

	t.Run("the grant is what the human gave", func(t *testing.T) {
		gs := grantsJSON(t, env)
		if len(gs) != 1 || gs[0]["scope"] != "SCOPE_GROUP" || gs[0]["client"] != client {
			t.Errorf("grants = %v, want the one group grant of %s", gs, client)
		}
	})
}

// TestAdversarialSheet: the sheet shows what will happen and cannot be
// flooded or escaped (point 6).
func TestAdversarialSheet(t *testing.T) {
	t.Parallel()
	const sheetTimeout = 8 * time.Second
	env := adversaryUp(t, authz.SheetTimeoutEnv+"="+sheetTimeout.String())
	shell, shellOut := settledShell(t, env)
	busy := humanTab(t, env, "busy", "busy-marker")
	eventually(t, "the busy tab to be busy", func() (bool, string) {
		tb := tabByID(tabs(t, env), busy)
		return tb["idle"] == false, fmt.Sprint(tb)
	})
	runCommand := func(tab, command string) map[string]any {
		return map[string]any{"op": "call", "tool": "run_command", "args": map[string]any{"terminal_id": tab, "command": command}}
	}

	t.Run("requests that would fail anyway fail before any sheet", func(t *testing.T) {
		cases := []struct{ name, tab, command string }{
			{"run_command into a busy tab", busy, "echo never"},
			{"run_command with a newline", shell, "echo harmless\necho PWNED"},
			{"run_command into an unknown tab", "t999", "echo never"},
		}
		var script []map[string]any
		for _, c := range cases {
			script = append(script, runCommand(c.tab, c.command))
		}
		_, read := runAgent(t, env, script)
		for i, c := range cases {
			if f := failure(t, permStepNoSheet(t, env, read, i)); f == "" {
				t.Errorf("%s succeeded", c.name)
			}
		}
		unchangedOutput(t, env, shell, shellOut, "run_command calls that should have failed")
	})

	t.Run("the sheet shows the whole command, escaped", func(t *testing.T) {
		cases := []struct {
			name   string
			script []map[string]any
			// show must be in the subject; hide must not.
			show, hide []string
		}{
			{name: "make test, 3000 spaces, ; echo PWNED",
				script: []map[string]any{runCommand(shell, "make test"+strings.Repeat(" ", 3000)+"; echo PWNED")},
				show:   []string{"make test", "PWNED"}},
			{name: "a bidi override",
				script: []map[string]any{runCommand(shell, "echo \u202eDETCEJNI")},
				show:   []string{`\u202e`, "DETCEJNI"}, hide: []string{"\u202e"}},
			{name: "an escape sequence",
				script: []map[string]any{runCommand(shell, "echo \x1b]0;owned\x07 \x1b[2J")},
				hide:   []string{"\x1b", "\x07"}},
			{name: "a tab an agent named with escapes and a bidi override",
				script: []map[string]any{
					{"op": "call", "tool": "update_terminal", "args": map[string]any{"terminal_id": busy, "name": "\x1b[2Jprod\u202e"}},
					permRead(busy)},
				show: []string{"named by an agent"}, hide: []string{"\x1b", "\u202e"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				tab, read := runAgent(t, env, c.script)
				last := len(c.script) - 1
				tool := c.script[last]["tool"].(string)
				var s map[string]any
				eventually(t, "a sheet for "+c.name+" or an error before it", func() (bool, string) {
					if s = sheetOf(t, env, tab, tool); s != nil {
						return true, ""
					}
					lines := read()
					return slices.ContainsFunc(lines, func(l agentLine) bool { return l.Step == last || l.Op == "fatal" }), fmt.Sprint(lines)
				})
				if s == nil {
					if f := failure(t, waitStep(t, read, last)); f == "" || len(c.show) > 0 {
						t.Errorf("%s: no sheet, and the call gave %q", c.name, f)
					}
					return
				}
				subj := fmt.Sprint(s["subject"])
				for _, w := range c.show {
					if !strings.Contains(subj, w) {
						t.Errorf("%s: the sheet's subject %q lacks %q", c.name, subj, w)
					}
				}
				for _, w := range c.hide {
					if strings.Contains(subj, w) {
						t.Errorf("%s: the sheet's subject %q shows %q unescaped", c.name, subj, w)
					}
				}
				deny(t, env, s)
				if f := failure(t, waitStep(t, read, last)); f == "" {
					t.Errorf("%s: the human denied, yet the call succeeded", c.name)
				}
			})
		}
		unchangedOutput(t, env, shell, shellOut, "denied run_command calls")
	})

	// 50 connections from one tab, each asking: one sheet of that tab at a
	// time, and another tab's sheet is not kept waiting behind them.
	t.Run("a flood of 50 connections from one tab", func(t *testing.T) {
		f := newAttacker(t, env, "flooder")
		release := filepath.Join(f.dir, "release")
		t.Cleanup(func() { os.WriteFile(release, nil, 0o600) })
		summary := filepath.Join(f.dir, "flood50.json")
		call := fmt.Sprintf(`{"name":"read_output","arguments":{"terminal_id":%q}}`, shell)
		flood := f.start(f.floodCmd(50, summary, "hello=1", "call="+call, "wait=60", "hold="+release))
		eventually(t, "the flood's calls to be sent", func() (bool, string) {
			s, ok := readFlood(summary + ".sent")
			return ok, fmt.Sprint(s)
		})
		sent, _ := readFlood(summary + ".sent")
		t.Logf("the flood: %+v", sent)
		floodSheets := func() int {
			n := 0
			for _, s := range sheetsJSON(t, env) {
				if s["tab_id"] == f.tab {
					n++
				}
			}
			return n
		}
		eventually(t, "a sheet of the flooding tab", func() (bool, string) { return floodSheets() > 0, "" })
		for range 5 {
			if n := floodSheets(); n > 1 {
				t.Fatalf("tab %s flooded 50 connections and has %d sheets listed, want one at a time: %v", f.tab, n, sheetsJSON(t, env))
			}
			time.Sleep(100 * time.Millisecond)
		}

		// Another tab asks: its sheet comes next, not behind the flood.
		tab, read := runAgent(t, env, []map[string]any{permRead(shell), permRead(shell)})
		permConnected(t, read)
		asked := time.Now()
		var pos int
		eventually(t, "the other tab's sheet", func() (bool, string) {
			list := sheetsJSON(t, env)
			pos = slices.IndexFunc(list, func(s map[string]any) bool { return s["tab_id"] == tab })
			return pos >= 0, fmt.Sprint(list)
		})
		if d := time.Since(asked); pos > 1 || d > 10*time.Second {
			t.Errorf("the other tab's sheet came after %s at position %d behind the flood, want at most the flood's one sheet ahead: %v",
				d, pos, sheetsJSON(t, env))
		}

		// The human denies the flood: the tab is turned away, so its other
		// calls are refused without a sheet…
		eventually(t, "the human to deny the flooding tab", func() (bool, string) {
			s := sheetOf(t, env, f.tab, "read_output")
			return s != nil && phantom(t, env, "sheet", "answer", s["id"].(string), "--deny").code == 0, fmt.Sprint(s)
		})
		noSheet := func(what string) {
			if n := floodSheets(); n > 0 {
				t.Fatalf("after the human denied tab %s, %s raised another sheet: %v", f.tab, what, sheetsJSON(t, env))
			}
		}
		eventually(t, "every call of the flood to be answered", func() (bool, string) {
			noSheet("a queued call of the flood")
			_, ok := readFlood(summary)
			return ok, flood.output()
		})
		got, _ := readFlood(summary)
		allowed := slices.DeleteFunc(slices.Clone(got.Responses), func(r string) bool { return strings.Contains(r, `"isError":true`) })
		if len(got.Responses) != sent.HelloOK || len(allowed) > 0 {
			t.Errorf("the flood's %d calls got %d answers, %d of them not refused: %v", sent.HelloOK, len(got.Responses), len(allowed), allowed)
		}
		os.WriteFile(release, nil, 0o600)
		flood.wait()

		// …and reconnecting does not escape the turn-away.
		reconnect := filepath.Join(f.dir, "reconnect.json")
		j := f.start(f.floodCmd(1, reconnect, "hello=1", "call="+call, "wait=20"))
		eventually(t, "the reconnected call to end", func() (bool, string) {
			noSheet("a new connection")
			_, ok := j.done()
			return ok, j.output()
		})
		if r, ok := readFlood(reconnect); !ok || len(r.Responses) != 1 || !strings.Contains(r.Responses[0], `"isError":true`) {
			t.Errorf("a new connection from the denied tab got %+v; want a refusal that turns it away", r)
		} else if !strings.Contains(r.Responses[0], "turned away") && !strings.Contains(r.Responses[0], "without asking") {
			t.Errorf("a new connection from the denied tab was refused, but not as turned away: %s", r.Responses[0])
		}

		// Nobody answers the other tab's sheet: it times out, which is no
		// human refusal, so the tab's next call asks again.
		if f := failure(t, waitStep(t, read, 0)); f == "" {
			t.Fatalf("the other tab's read, never answered, succeeded")
		}
		s := agentAsksHuman(t, env, read, 1, tab, "read_output", "a read after a sheet timed out")
		deny(t, env, s)
	})
}

// TestAdversarialSandbox: a sandboxed tab can neither signal the daemons
// nor write Phantom's own folders (point 7).
func TestAdversarialSandbox(t *testing.T) {
	t.Parallel()
	env := adversaryUp(t)
	if !strings.Contains(newHelp(t, env), "--sandbox") {
		t.Skip("`phantom new --sandbox` does not exist yet: the Landlock sandbox of issue 8 (point 7) has not landed")
	}
	for _, d := range []string{env.Layout.Config, env.Layout.State} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	a := newAttacker(t, env, "sandboxed", "--sandbox")
	if tb := tabByID(tabs(t, env), a.tab); tb["sandboxed"] != true {
		t.Fatalf("the tab opened with --sandbox is not sandboxed: %v\nphantom status:\n%s", tb, phantom(t, env, "status").stdout)
	}
	if r := a.run(`echo ok >"$J.mine"`); r.code != 0 {
		t.Fatalf("the sandboxed tab cannot write its own scratch file, so nothing below would prove anything: %v", r)
	}

	st := getStatus(t, env)
	// The daemons, the human's test process (its client, outside Phantom)
	// and the human's shell in another tab.
	targets := map[string]int{"the human's test process": os.Getpid()}
	for _, d := range st.Daemons {
		if d.PID > 0 {
			targets[d.Name] = d.PID
		}
	}
	shell, _ := tabs(t, env)[0]["id"].(string)
	var state struct {
		LeaderPID int `json:"leader_pid"`
	}
	b, _ := os.ReadFile(filepath.Join(env.Layout.TabStateDir(), shell+".json"))
	if json.Unmarshal(b, &state) == nil && state.LeaderPID > 0 {
		targets["the human's shell in tab "+shell] = state.LeaderPID
	}
	t.Run("signals and ptrace", func(t *testing.T) {
		// As root (CAP_SYS_PTRACE), this kernel lets a Landlock domain
		// read other processes' /proc/PID/environ and maps, though not
		// open their memory; the threat model's agent is not root.
		asRoot := os.Geteuid() == 0
		if asRoot {
			t.Log("running as root: /proc/PID/environ is not checked")
		}
		for name, pid := range targets {
			p := strconv.Itoa(pid)
			if r := a.run("kill -0 " + p); r.code == 0 {
				t.Errorf("the sandboxed tab could signal %s (pid %d): %v", name, pid, r)
			}
			if r := a.run("exec 3</proc/" + p + "/mem"); r.code == 0 {
				t.Errorf("the sandboxed tab opened the memory of %s (pid %d): %v", name, pid, r)
			}
			if r := a.run("head -c 64 /proc/" + p + "/environ"); r.code == 0 && !asRoot {
				t.Errorf("the sandboxed tab read the environment of %s (pid %d): %v", name, pid, r)
			}
			if !running(pid) {
				t.Errorf("%s (pid %d) no longer runs", name, pid)
			}
		}
	})

	t.Run("writes", func(t *testing.T) {
		dirs := map[string]string{
			"config":    env.Layout.Config,
			"state":     env.Layout.State,
			"runtime":   env.Layout.Runtime,
			"tab state": env.Layout.TabStateDir(),
			"logs":      env.Layout.Logs,
			"socket":    filepath.Dir(env.Layout.MCPSocket),
		}
		for name, dir := range dirs {
			f := filepath.Join(dir, "pwned")
			if r := a.run("echo pwned >" + sq(f)); r.code == 0 {
				t.Errorf("the sandboxed tab wrote into Phantom's %s directory %s: %v", name, dir, r)
			}
			if _, err := os.Stat(f); err == nil {
				t.Errorf("%s exists after the sandboxed tab tried to write it", f)
				os.Remove(f)
			}
		}
		sock := env.Layout.DaemonSocket("authz")
		if r := a.run(shellCmd("mv", sock, sock+".aside")); r.code == 0 {
			t.Errorf("the sandboxed tab moved authz.sock aside: %v", r)
			os.Rename(sock+".aside", sock)
		}
		rc := filepath.Join(env.Home, ".bashrc")
		if r := a.run("echo 'echo pwned' >>" + sq(rc)); r.code == 0 {
			t.Errorf("the sandboxed tab appended to the human's %s: %v", rc, r)
		}
	})
}

// TestAdversarialFlood: the gateway never dies from load (point 9).
func TestAdversarialFlood(t *testing.T) {
	t.Parallel()
	env := adversaryUp(t)
	gateway := func() (pid int, health string) {
		for _, d := range getStatus(t, env).Daemons {
			if d.Name == "gateway" {
				return d.PID, d.Health
			}
		}
		t.Fatal("phantom status lists no gateway")
		return 0, ""
	}
	pid, _ := gateway()
	a := newAttacker(t, env, "flooder")
	release := filepath.Join(a.dir, "release")
	t.Cleanup(func() { os.WriteFile(release, nil, 0o600) })
	silent, hello := filepath.Join(a.dir, "silent.json"), filepath.Join(a.dir, "hello.json")
	// 1,000 connections that never say hello and 1,000 that do, from one
	// tab, all held open.
	flood := a.start(a.floodCmd(1000, silent, "hold="+release) + " & " + a.floodCmd(1000, hello, "hello=1", "hold="+release) + " & wait")
	for _, f := range []string{silent, hello} {
		eventually(t, "2,000 connections to be made", func() (bool, string) {
			s, ok := readFlood(f + ".sent")
			return ok, fmt.Sprint(s, flood.output())
		})
		s, _ := readFlood(f + ".sent")
		t.Logf("flood %s: %+v", filepath.Base(f), s)
	}

	check := func(t *testing.T, when string) {
		t.Helper()
		_, read := runAgent(t, env, []map[string]any{{"op": "list"}, {"op": "call", "tool": "list_terminals"}})
		if l := waitStep(t, read, 0); l.Error != "" || !strings.Contains(string(l.Result), "read_output") {
			t.Errorf("%s, a legitimate agent's tools/list gave %s %s", when, l.Result, l.Error)
		}
		permResult(t, waitStep(t, read, 1), false, `"terminals"`)
		if now, health := gateway(); now != pid || health != "serving" || !running(pid) {
			t.Errorf("%s, the gateway is pid %d (%s), was %d", when, now, health, pid)
		}
	}
	t.Run("while the flood holds its connections", func(t *testing.T) { check(t, "during a flood of 2,000 connections") })
	os.WriteFile(release, nil, 0o600)
	flood.wait()
	t.Run("after the flood", func(t *testing.T) { check(t, "after a flood of 2,000 connections") })
}

// TestAdversarialSocketSwap: an agent moves authz.sock aside and serves a
// yes-man authz in its place; no daemon client believes it (point 3).
func TestAdversarialSocketSwap(t *testing.T) {
	t.Parallel()
	env := adversaryUp(t, authz.SheetTimeoutEnv+"=15s")
	const marker = "swap-secret-marker"
	target := humanTab(t, env, "secrets", marker)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a := newAttacker(t, env, "attacker")
	sock := env.Layout.DaemonSocket("authz")
	aside := sock + ".real"
	// The human's view of the real authz, where the agent moved it.
	realAuthz := &testenv.Env{Vars: append(slices.Clone(env.Vars), "PHANTOM_AUTHZ_ADDR=unix://"+aside), Layout: env.Layout, Home: env.Home}

	fake := a.start(`mv ` + sq(sock) + ` ` + sq(aside) + ` || exit 99; echo $$ >"$J.pid"; exec env ` +
		fakeAuthzEnv + `=` + sq(sock) + ` ` + sq(self))
	t.Cleanup(func() {
		if b, err := os.ReadFile(fake.path + ".pid"); err == nil {
			if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 && running(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				eventually(t, "the fake authz to end", func() (bool, string) { return !running(pid), "" })
			}
		}
		if _, err := os.Lstat(aside); err == nil {
			os.Remove(sock)
			if err := os.Rename(aside, sock); err != nil {
				t.Errorf("put authz.sock back: %v", err)
			}
		}
	})
	eventually(t, "the fake authz to serve on "+sock, func() (bool, string) {
		if r, ok := fake.done(); ok {
			t.Fatalf("the fake authz ended: %v", r)
		}
		return strings.Contains(fake.output(), "fake authz serving"), fake.output()
	})

	t.Run("the human's CLI", func(t *testing.T) {
		for _, args := range [][]string{{"sheet", "list", "--json"}, {"grants", "--json"}} {
			r := phantom(t, env, args...)
			if r.code == 0 || !strings.Contains(r.stderr, "inside Phantom") {
				t.Errorf("with a fake authz on its socket, `phantom %s` (outside Phantom) gave %v; want it to refuse the socket as served from inside Phantom",
					strings.Join(args, " "), r)
			}
		}
	})

	// denyReal denies, at the real authz, any sheet the call raised: a
	// call that reaches the real authz rightly asks the human.
	denyReal := func(t *testing.T) {
		for _, s := range sheetsJSON(t, realAuthz) {
			deny(t, realAuthz, s)
		}
	}
	t.Run("phantom read from a tab", func(t *testing.T) {
		j := a.start(shellCmd(phantomBin, "read", target))
		eventually(t, "the read to end", func() (bool, string) {
			denyReal(t)
			_, ok := j.done()
			return ok, j.output()
		})
		if r := j.wait(); r.code == 0 || strings.Contains(r.out, marker) {
			t.Errorf("with a fake authz that allows everything, `phantom read %s` from a tab gave %v", target, r)
		}
	})

	t.Run("an agent's read_output", func(t *testing.T) {
		run := a.agent("swapper", permRead(target))
		var l agentLine
		eventually(t, "the agent's read to end", func() (bool, string) {
			denyReal(t)
			for _, x := range run.read() {
				if x.Step == 0 || x.Op == "fatal" {
					l = x
					return true, ""
				}
			}
			return false, fmt.Sprint(run.read())
		})
		if l.Op == "fatal" {
			t.Fatalf("the agent failed: %s", l.Error)
		}
		if r := resultOf(t, l); !r.IsError || strings.Contains(r.text(), marker) {
			t.Errorf("with a fake authz that allows everything, an agent's read_output of %s gave %+v", target, r)
		}
	})
}
