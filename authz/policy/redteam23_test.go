package policy

// Red team for issue 23, item 1: "once" allows exactly the call the sheet
// showed. A once grant is keyed by Need.Call (subject.go's call): the
// tool, the target and the tool's subject fields. Fields a tool has but
// does not list as subject fields are neither on the sheet nor in the key,
// so one "once" for the harmless form of a call also allows a wider one.

import (
	"context"
	"strings"
	"testing"
)

// TestRedTeam23_OnceCoversFieldsTheSheetDidNotShow — was a HOLE; holds now (each pair
// below evaluates to the same Call and the same sheet subject, so the
// once grant given for the first covers the second):
//   - tidy_worktrees: a report or a dry run, then the real moves with
//     force (no subject_fields at all in git.proto);
//   - remove_worktree: a plain removal, then force (a dirty or in-use
//     worktree's uncommitted work) and delete_branch;
//   - add_worktree: a worktree, then the same with open_terminal (a new
//     tab) and another base;
//   - configure_language_server: the same server, then other extensions.
func TestRedTeam23_OnceCoversFieldsTheSheetDidNotShow(t *testing.T) {
	p := New(workspace, repoOf)
	c := Caller{Client: "claude", ConnectionID: "c1", TabID: "t1"}
	for _, tc := range []struct {
		name, tool, shown, wider string
	}{
		{"tidy report then forced moves", "tidy_worktrees", `{"repository":"/src/app"}`,
			`{"repository":"/src/app","force":true,"actions":[{"kind":"KIND_MOVE","path":"/src/app.worktrees/x","new_path":"y"},{"kind":"KIND_PRUNE"}]}`},
		{"tidy dry run then the real run", "tidy_worktrees", `{"repository":"/src/app","dry_run":true,"actions":[{"kind":"KIND_UNLOCK","path":"/src/app.worktrees/x"}]}`,
			`{"repository":"/src/app","force":true,"actions":[{"kind":"KIND_UNLOCK","path":"/src/app.worktrees/x"},{"kind":"KIND_MOVE","path":"/src/app.worktrees/x","new_path":"z"}]}`},
		{"remove then forced remove", "remove_worktree", `{"repository":"/src/app","path":"/src/app.worktrees/x"}`,
			`{"repository":"/src/app","path":"/src/app.worktrees/x","force":true,"delete_branch":true}`},
		{"add then add with a tab", "add_worktree", `{"repository":"/src/app","branch":"b"}`,
			`{"repository":"/src/app","branch":"b","base":"evil","open_terminal":true}`},
		{"configure then other extensions", "configure_language_server", `{"workspace":"/src/app","language":"go","command":"gopls"}`,
			`{"workspace":"/src/app","language":"go","command":"gopls","extensions":[".env",".pem",".key"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shown, err := p.Evaluate(context.Background(), c, tc.tool, tc.shown)
			if err != nil {
				t.Fatal(err)
			}
			wider, err := p.Evaluate(context.Background(), c, tc.tool, tc.wider)
			if err != nil {
				t.Fatal(err)
			}
			if shown.Call == wider.Call {
				t.Errorf("HOLE: %s %s and %s are one call for a once grant (Call %q); the sheet said %q for the first and %q for the second",
					tc.tool, tc.shown, tc.wider, strings.ReplaceAll(shown.Call, "\x00", " | "), shown.Subject, wider.Subject)
			}
		})
	}
}
