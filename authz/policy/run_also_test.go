package policy

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestEvaluateAlso: run_command with wait_seconds returns the command's
// output, so it needs read as well as run (the proto option's `also`),
// with the same reach, and the sheet's subject says so; without it, run
// alone.
func TestEvaluateAlso(t *testing.T) {
	p := New(workspace, repoOf)
	in := Caller{Client: "claude", ConnectionID: "c1", TabID: "t1"}
	tests := []struct {
		name    string
		tool    string
		args    string
		cap     Capability
		also    []Capability
		reach   Scope
		subject string
	}{
		{"run without a wait", "run_command", `{"terminal_id":"t2","command":"make"}`, Run, nil, Group, `"make" typed into tab t2`},
		{"run with wait 0", "run_command", `{"terminal_id":"t2","command":"make","wait_seconds":0}`, Run, nil, Group, `"make" typed into tab t2`},
		{"run and wait", "run_command", `{"terminal_id":"t2","command":"make","wait_seconds":30}`, Run, []Capability{Read}, Group, "and read: it returns the output (wait_seconds)"},
		{"run and wait, other group", "run_command", `{"terminal_id":"t3","command":"make","wait_seconds":5}`, Run, []Capability{Read}, All, `"make" typed into tab t3`},
		{"read stays read", "read_output", `{"terminal_id":"t2","last_command":true}`, Read, nil, Group, "tab t2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			need, err := p.Evaluate(context.Background(), in, tt.tool, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if need.Capability != tt.cap || !slices.Equal(need.Also, tt.also) || need.Reach != tt.reach || !strings.Contains(need.Subject, tt.subject) {
				t.Errorf("need = %s also %v reach %s subject %q; want %s also %v reach %s subject containing %q",
					need.Capability, need.Also, need.Reach, need.Subject, tt.cap, tt.also, tt.reach, tt.subject)
			}
			if tt.also == nil && strings.Contains(need.Subject, "returns the output") {
				t.Errorf("subject %q mentions reading back without a wait", need.Subject)
			}
		})
	}
}
