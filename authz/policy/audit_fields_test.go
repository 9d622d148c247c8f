package policy

import (
	"context"
	"testing"
)

// TestTargetAndTyped: Evaluate names what a call acts on and, for
// run_command, the exact text it types, unescaped (the audit log records
// them; the sheet shows the escaped subject).
func TestTargetAndTyped(t *testing.T) {
	p := New(workspace, repoOf)
	caller := Caller{Client: "claude", ConnectionID: "c1", TabID: "t1"}
	tests := []struct {
		name, tool, args string
		target, typed    string
	}{
		{"run_command", "run_command", `{"terminal_id":"t2","command":"echo \"a\\tb\" \u202e; ls"}`, "t2", "echo \"a\\tb\" \u202e; ls"},
		{"read_output", "read_output", `{"terminal_id":"t3"}`, "t3", ""},
		{"directory tool", "list_worktrees", `{"repository":"/src/lib"}`, "/src/lib", ""},
		{"directory by default", "list_worktrees", `{}`, "/src/app", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			need, err := p.Evaluate(context.Background(), caller, tt.tool, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if need.Target != tt.target || need.Typed != tt.typed {
				t.Errorf("Target %q, Typed %q; want %q, %q", need.Target, need.Typed, tt.target, tt.typed)
			}
		})
	}
}
