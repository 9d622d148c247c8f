package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/authz"
	"github.com/phantom-dev/phantom/authz/audit"
)

// auditJSON is `phantom audit --json` with extra arguments.
func auditJSON(t *testing.T, run func(args ...string) string, args ...string) []audit.Entry {
	t.Helper()
	out := run(append([]string{"audit", "--json"}, args...)...)
	var l struct {
		Entries []audit.Entry `json:"entries"`
		Skipped []any         `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("audit --json: %v\n%s", err, out)
	}
	if len(l.Skipped) > 0 {
		t.Errorf("audit --json skipped lines: %v", l.Skipped)
	}
	return l.Entries
}

// TestAuditLogSession scripts a session — a sheet answered once, one
// answered always for run_command, a call allowed by the standing grant,
// a denial and the turn-away after it, a time-out, a withdrawal, a
// revocation — and reads it back with `phantom audit --json`.
func TestAuditLogSession(t *testing.T) {
	env := permUp(t, authz.SheetTimeoutEnv+"=15s")
	a := newAuthzCaller(t, env)
	run := func(args ...string) string { return mustPhantom(t, env, args...) }
	// run_command into a tab that is not at its prompt yet fails before
	// any sheet: start once the shell has settled.
	first, _ := settledShell(t, env)
	read := `{"terminal_id":"` + first + `"}`
	cmd := `printf '%s\n' "audited; $HOME"`
	runArgs, _ := json.Marshal(map[string]string{"terminal_id": first, "command": cmd})

	// Once.
	ch := a.ask("e2e", "c1", "read_output", read)
	id := waitSheet(t, env, "read_output")
	mustPhantom(t, env, "sheet", "answer", id, "--once")
	once := a.wait(ch)
	// Always, for the command; then the standing grant covers another.
	always := a.grantAlways(env, "e2e", "c2", "run_command", string(runArgs))
	if r := a.wait(a.ask("e2e", "c3", "run_command", `{"terminal_id":"`+first+`","command":"ls"}`)); !r.GetAllowed() {
		t.Fatalf("standing grant: %v", r)
	}
	// A denial and a turn-away.
	ch = a.ask("denied", "c4", "read_output", read)
	id = waitSheet(t, env, "read_output")
	mustPhantom(t, env, "sheet", "answer", id, "--deny")
	a.wait(ch)
	a.wait(a.ask("denied", "c4", "read_output", read))
	// A withdrawal.
	ch = a.ask("gone", "c5", "read_output", read)
	waitSheet(t, env, "read_output")
	a.end("c5")
	a.wait(ch)
	// A time-out: nobody answers.
	if r := a.wait(a.ask("slow", "c6", "read_output", read)); r.GetAllowed() || !strings.Contains(r.GetReason(), "nobody answered") {
		t.Fatalf("time-out: %v", r)
	}
	// A revocation.
	mustPhantom(t, env, "grants", "revoke", always)

	var entries []audit.Entry
	eventually(t, "the revocation in the audit log", func() (bool, string) {
		entries = auditJSON(t, run)
		for _, e := range entries {
			if e.Event == audit.GrantRevoked {
				return true, ""
			}
		}
		b, _ := json.MarshalIndent(entries, "", " ")
		return false, string(b)
	})
	find := func(what string, ok func(audit.Entry) bool) audit.Entry {
		t.Helper()
		for _, e := range entries {
			if ok(e) {
				return e
			}
		}
		b, _ := json.MarshalIndent(entries, "", " ")
		t.Errorf("no audit entry for %s in:\n%s", what, b)
		return audit.Entry{}
	}
	find("authz started", func(e audit.Entry) bool { return e.Event == audit.AuthzStarted })
	find("the first sheet raised", func(e audit.Entry) bool {
		return e.Event == audit.SheetRaised && e.Client == "e2e" && e.Tool == "read_output" && e.Capability == "read" && e.Reach == "all"
	})
	ans := find("the once answer", func(e audit.Entry) bool {
		return e.Event == audit.SheetAnswered && e.Decision == "once" && e.Grant == once.GetGrantId()
	})
	if ans.By == nil || ans.By.PID == 0 || !strings.Contains(ans.By.Command, "sheet answer") || ans.By.UID != os.Getuid() {
		t.Errorf("the once answer does not say who answered: %+v", ans.By)
	}
	find("the call allowed once", func(e audit.Entry) bool {
		return e.Event == audit.Allowed && e.GrantKind == "once" && e.Grant == once.GetGrantId() && e.Target == first
	})
	find("the always answer", func(e audit.Entry) bool {
		return e.Event == audit.SheetAnswered && e.Decision == "always" && e.Scope == "all" && e.Grant == always
	})
	find("the command typed, exactly", func(e audit.Entry) bool {
		return e.Event == audit.Allowed && e.Command == cmd && e.Target == first && e.Grant == always
	})
	find("the call allowed by the standing grant", func(e audit.Entry) bool {
		return e.Event == audit.Allowed && e.Command == "ls" && e.Grant == always && e.Sheet == ""
	})
	find("the denial answer", func(e audit.Entry) bool { return e.Event == audit.SheetAnswered && e.Decision == "deny" })
	find("the denied call", func(e audit.Entry) bool { return e.Event == audit.Denied && e.Client == "denied" })
	find("the turn-away", func(e audit.Entry) bool { return e.Event == audit.TurnedAway && e.Client == "denied" })
	find("the withdrawal", func(e audit.Entry) bool { return e.Event == audit.Withdrawn && e.Client == "gone" })
	find("the time-out", func(e audit.Entry) bool { return e.Event == audit.TimedOut && e.Client == "slow" && e.Sheet != "" })
	rev := find("the revocation", func(e audit.Entry) bool { return e.Event == audit.GrantRevoked && e.Grant == always })
	if rev.By == nil || !strings.Contains(rev.By.Command, "grants revoke") {
		t.Errorf("the revocation does not say who revoked: %+v", rev.By)
	}

	// The table shows the typed command; --since narrows.
	table := mustPhantom(t, env, "audit")
	if !strings.Contains(table, "typed ") || !strings.Contains(table, "grant_revoked") || !strings.Contains(table, "sheet_answered") {
		t.Errorf("phantom audit table:\n%s", table)
	}
	if got := auditJSON(t, run, "--since", "1h"); len(got) != len(entries) {
		t.Errorf("--since 1h kept %d of %d entries", len(got), len(entries))
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if got := auditJSON(t, run, "--since", future); len(got) != 0 {
		t.Errorf("--since %s kept %d entries", future, len(got))
	}
	if r := phantom(t, env, "audit", "--since", "yesterday-ish"); r.code == 0 || !strings.Contains(r.stderr, "want a duration") {
		t.Errorf("a bad --since:\n%v", r)
	}
	fi, err := os.Stat(env.Layout.State + "/" + audit.FileName)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("audit log: %v %v, want mode 0600", fi, err)
	}
}

// TestParseSince covers the --since forms.
func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 30, 13, 0, 0, 0, time.Local)
	tests := []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{"", time.Time{}, false},
		{"90m", now.Add(-90 * time.Minute), false},
		{" 2h ", now.Add(-2 * time.Hour), false},
		{"3d", now.AddDate(0, 0, -3), false},
		{"2026-11-29", time.Date(2026, 11, 29, 0, 0, 0, 0, time.Local), false},
		{"2026-11-29 14:05", time.Date(2026, 11, 29, 14, 5, 0, 0, time.Local), false},
		{"2026-11-29T14:05:06", time.Date(2026, 11, 29, 14, 5, 6, 0, time.Local), false},
		{"2026-11-29T14:05:06Z", time.Date(2026, 11, 29, 14, 5, 6, 0, time.UTC), false},
		{"09:30", time.Date(2026, 11, 30, 9, 30, 0, 0, time.Local), false},
		{"-5m", time.Time{}, true},
		{"0s", time.Time{}, true},
		{"0d", time.Time{}, true},
		{"d", time.Time{}, true},
		{"1.5d", time.Time{}, true},
		{"99999999999d", time.Time{}, true},
		{"yesterday", time.Time{}, true},
		{"25:00", time.Time{}, true},
	}
	for _, tt := range tests {
		got, err := parseSince(tt.in, now)
		if (err != nil) != tt.wantErr || !got.Equal(tt.want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), tt.in) {
			t.Errorf("parseSince(%q): error %q does not name the input", tt.in, err)
		}
	}
}

// FuzzParseSince: any input parses or fails without panicking; a duration
// or a number of days is never in the future.
func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"90m", "3d", "2026-11-29 14:05", "09:30", "2026-11-29T14:05:06Z", "1e9d", "-0d", "9223372036854775807ns"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 30, 13, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseSince(s, now)
		if err != nil {
			return
		}
		if _, derr := time.ParseDuration(strings.TrimSpace(s)); derr == nil && got.After(now) {
			t.Fatalf("parseSince(%q) = %v, after now", s, got)
		}
	})
}

// TestDescribeEntry: the table's text escapes what an agent chose.
func TestDescribeEntry(t *testing.T) {
	tests := []struct {
		e    audit.Entry
		want []string
	}{
		{audit.Entry{Event: audit.Allowed, Command: "echo \x1b[2J hi", Target: "t1", Grant: "g1", GrantKind: "always", Scope: "tab"},
			[]string{`typed "echo \x1b[2J hi" into tab t1`, "grant g1 (always, scope tab)"}},
		{audit.Entry{Event: audit.SheetAnswered, Sheet: "s1", Tool: "read_output", Capability: "read", Reach: "all", Decision: "deny",
			By: &audit.Actor{PID: 7, Command: "phantom sheet answer s1 --deny", Terminal: "/dev/pts/3"}},
			[]string{"sheet s1", "read_output (read, reach all)", "answer deny", "by pid 7 (phantom sheet answer s1 --deny) on /dev/pts/3"}},
		{audit.Entry{Event: audit.GrantRevoked, Grant: "g2", By: &audit.Actor{Via: "edit of the grants file"}},
			[]string{"grant g2", "by edit of the grants file"}},
		{audit.Entry{Event: audit.Allowed, Tool: "read_output", Capability: "read", Reach: "tab", Repeated: 41},
			[]string{"read_output (read, reach tab)", "41 more like it"}},
		{audit.Entry{Event: audit.Refused, Tool: "x\x1b]0;pwn\x07", Reason: "no\x1b[31m"},
			[]string{`x\x1b]0;pwn\x07`, `no\x1b[31m`}},
		{audit.Entry{Event: audit.Allowed, CommandSHA256: "ab12", Target: "t1"},
			[]string{"typed the command of SHA-256 ab12 into tab t1", "not in this file"}},
		{audit.Entry{Event: audit.Summary, Since: time.Date(2026, 11, 30, 12, 0, 0, 0, time.Local), Counts: []audit.Count{
			{Client: "fl\x1b[2Jood", Tab: "t3", Event: audit.TurnedAway, Tool: "run_command", N: 3000},
			{Client: "flood", Tab: "t4", Event: audit.SheetRaised, Tool: "run_command", N: 2}, {Others: true, N: 5}}},
			[]string{"3007 lines left out since 2026-11-30 12:00:00", `3000 turned_away run_command from client fl\x1b[2Jood in tab t3`,
				"2 sheet_raised run_command from client flood in tab t4", "5 of other callers"}},
	}
	for _, tt := range tests {
		got := describeEntry(tt.e)
		if strings.ContainsAny(got, "\x1b\x07") {
			t.Errorf("describeEntry(%+v) = %q holds raw control characters", tt.e, got)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("describeEntry(%+v) = %q, want it to hold %q", tt.e, got, w)
			}
		}
	}
}
