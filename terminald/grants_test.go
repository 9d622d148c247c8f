package terminald

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
)

// writeAudit writes entries as lines of an audit log file.
func writeAudit(t *testing.T, path string, entries ...audit.Entry) {
	t.Helper()
	var b []byte
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestGrantsRelayDecisions: the last decisions come newest first, from
// the rotated file only when the current one has too few, and only the
// events that decide something, in words.
func TestGrantsRelayDecisions(t *testing.T) {
	at := func(min int) time.Time { return time.Date(2026, 12, 1, 10, min, 0, 0, time.UTC) }
	tests := []struct {
		name    string
		current []audit.Entry
		rotated []audit.Entry
		n       int
		tail    int64
		want    []string // "outcome client tool what"
	}{
		{"newest first, decisions only", []audit.Entry{
			{Time: at(1), Event: audit.AuthzStarted},
			{Time: at(2), Event: audit.SheetRaised, Client: "claude", Tool: "run_command"},
			{Time: at(3), Event: audit.Allowed, Client: "claude", Tool: "run_command", Command: "make"},
			{Time: at(4), Event: audit.Denied, Client: "codex", Tool: "read_output", Subject: "tab t2"},
			{Time: at(5), Event: audit.GrantRevoked, Client: "claude", Grant: "g1", Capability: "run", Scope: "all"},
		}, nil, 20, 0, []string{"revoked claude  grant g1 (run, scope all)", "denied codex read_output tab t2", "allowed claude run_command make"}},
		{"n bounds", []audit.Entry{
			{Time: at(1), Event: audit.TimedOut, Client: "a"},
			{Time: at(2), Event: audit.TurnedAway, Client: "b"},
			{Time: at(3), Event: audit.Refused, Client: "c", Reason: "busy"},
		}, nil, 2, 0, []string{"refused c  busy", "turned away b  "}},
		{"the rotated file fills up", []audit.Entry{{Time: at(9), Event: audit.Withdrawn, Client: "new"}},
			[]audit.Entry{{Time: at(1), Event: audit.Allowed, Client: "old1"}, {Time: at(2), Event: audit.Allowed, Client: "old2"}},
			2, 0, []string{"withdrawn new  ", "allowed old2  "}},
		{"no log yet", nil, nil, 20, 0, nil},
		{"only the tail of a big file, and not the file before it", []audit.Entry{
			{Time: at(1), Event: audit.Allowed, Client: "early", Command: strings.Repeat("x", 300)},
			{Time: at(2), Event: audit.Allowed, Client: "mid"},
			{Time: at(3), Event: audit.Denied, Client: "late"},
		}, []audit.Entry{{Time: at(0), Event: audit.Allowed, Client: "older"}}, 20, 200,
			[]string{"denied late  ", "allowed mid  "}},
		{"a long text by reference before the tail", []audit.Entry{
			{Time: at(1), Event: audit.Allowed, Client: "c", CommandSHA256: "abc"},
		}, nil, 20, 0, []string{"allowed c  (a long command: phantom audit shows it)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), audit.FileName)
			if tt.current != nil {
				writeAudit(t, path, tt.current...)
			}
			if tt.rotated != nil {
				writeAudit(t, path+".1", tt.rotated...)
			}
			got, err := grantsRelay{auditPath: path, tail: tt.tail}.Decisions(context.Background(), tt.n)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, d := range got {
				lines = append(lines, fmt.Sprintf("%s %s %s %s", d.Outcome, d.Client, d.Tool, d.What))
			}
			if fmt.Sprint(lines) != fmt.Sprint(tt.want) {
				t.Errorf("decisions\n%q\nwant\n%q", lines, tt.want)
			}
		})
	}
}
