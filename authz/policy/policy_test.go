package policy

import (
	"context"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

type fakeTabs []TabInfo

func (f fakeTabs) Tabs(context.Context) ([]TabInfo, error) { return f, nil }

// workspace: t1, t2 and t5 in group g1 (t2 in another directory of t1's
// repository, t5 in another repository), t3 in group g2, t4 in no group.
var workspace = fakeTabs{
	{ID: "t1", Title: "agent", Directory: "/src/app", GroupID: "g1"},
	{ID: "t2", Title: "server", Directory: "/src/app/cmd", GroupID: "g1"},
	{ID: "t3", Title: "lib", Directory: "/src/lib", GroupID: "g2"},
	{ID: "t4", Title: "misc\x1b]0;evil\a", Directory: "/tmp/x"},
	{ID: "t5", Title: "web", Directory: "/src/web/ui", GroupID: "g1"},
}

// project treats /src/<name>/... as the repository /src/<name>.
func project(_ context.Context, dir string) string {
	if rest, ok := strings.CutPrefix(dir, "/src/"); ok {
		name, _, _ := strings.Cut(rest, "/")
		return "/src/" + name
	}
	return dir
}

func TestEvaluate(t *testing.T) {
	p := New(workspace, project)
	in := func(tab string) Caller { return Caller{Client: "claude", ConnectionID: "c1", TabID: tab} }
	tests := []struct {
		name    string
		caller  Caller
		tool    string
		args    string
		cap     Capability
		reach   Scope
		subject string // substring
		project string
		err     error
	}{
		{"free tool needs nothing", in("t1"), "list_terminals", "", None, ScopeUnspecified, "", "", nil},
		{"create_terminal needs nothing", in("t1"), "create_terminal", `{"directory":"/"}`, None, ScopeUnspecified, "", "", nil},
		{"read own tab", in("t1"), "read_output", `{"terminal_id":"t1"}`, Read, Tab, "tab t1 (agent)", "/src/app", nil},
		{"read group tab", in("t1"), "read_output", `{"terminal_id":"t2","lines":5}`, Read, Group, "tab t2 (server)", "/src/app", nil},
		{"read other group", in("t1"), "read_output", `{"terminal_id":"t3"}`, Read, All, "tab t3 (lib)", "/src/app", nil},
		{"read from ungrouped tab", in("t4"), "read_output", `{"terminal_id":"t3"}`, Read, All, "tab t3", "/tmp/x", nil},
		{"outside any tab reaches all", Caller{Client: "x", ConnectionID: "c"}, "read_output", `{"terminal_id":"t1"}`, Read, All, "tab t1", "", nil},
		{"title escapes are quoted", in("t1"), "read_output", `{"terminal_id":"t4"}`, Read, All, `misc\x1b]0;evil\a`, "/src/app", nil},
		{"run shows the command", in("t1"), "run_command", `{"terminal_id":"t2","command":"rm -rf build"}`, Run, Group, `"rm -rf build" typed into tab t2 (server)`, "/src/app", nil},
		{"worktree default own repository", in("t2"), "list_worktrees", `{}`, Worktree, Tab, "repository /src/app/cmd", "/src/app", nil},
		{"worktree same repository elsewhere", in("t1"), "add_worktree", `{"repository":"/src/app/x","branch":"b"}`, Worktree, Tab, `branch "b"`, "/src/app", nil},
		{"worktree of own repository", in("t3"), "remove_worktree", `{"repository":"/src/lib"}`, Worktree, Tab, "", "/src/lib", nil},
		{"worktree of group tab's repository", in("t1"), "add_worktree", `{"repository":"/src/web"}`, Worktree, Group, "repository /src/web", "/src/app", nil},
		{"worktree of other repository", in("t1"), "tidy_worktrees", `{"repository":"/src/lib"}`, Worktree, All, "", "/src/app", nil},
		{"worktree outside tab needs repository", Caller{Client: "x", ConnectionID: "c"}, "list_worktrees", `{}`, 0, 0, "", "", errdefs.ErrInvalidArgument},
		{"configure language server", in("t1"), "configure_language_server", `{"language":"go","command":"gopls","args":["serve"]}`, Configure, Tab, `start go as "gopls" "serve"`, "/src/app", nil},
		{"unknown tool fails closed", in("t1"), "format_disk", `{}`, 0, 0, "", "", errdefs.ErrInvalidArgument},
		{"missing tab", in("t1"), "read_output", `{"terminal_id":"t99"}`, 0, 0, "", "", errdefs.ErrNotFound},
		{"missing terminal_id", in("t1"), "read_output", `{}`, 0, 0, "", "", errdefs.ErrInvalidArgument},
		{"bad arguments", in("t1"), "read_output", `[1]`, 0, 0, "", "", errdefs.ErrInvalidArgument},
		{"wrong argument type", in("t1"), "read_output", `{"terminal_id":3}`, 0, 0, "", "", errdefs.ErrInvalidArgument},
		{"caller tab gone", in("t9"), "read_output", `{"terminal_id":"t1"}`, 0, 0, "", "", errdefs.ErrFailedPrecondition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			need, err := p.Evaluate(context.Background(), tt.caller, tt.tool, tt.args)
			if tt.err != nil {
				if !errdefs.Is(err, tt.err) {
					t.Fatalf("err = %v, want kind %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if need.Capability != tt.cap || need.Reach != tt.reach || need.Project != tt.project || !strings.Contains(need.Subject, tt.subject) {
				t.Errorf("need = %+v\nwant capability %s reach %s project %q subject containing %q", need, tt.cap, tt.reach, tt.project, tt.subject)
			}
			if strings.ContainsAny(need.Subject, "\x1b\a") {
				t.Errorf("subject %q carries control characters", need.Subject)
			}
		})
	}
}

func TestCovers(t *testing.T) {
	tests := []struct {
		grant, reach Scope
		want         bool
	}{
		{Tab, Tab, true}, {Tab, Group, false}, {Tab, All, false},
		{Group, Tab, true}, {Group, Group, true}, {Group, All, false},
		{All, Tab, true}, {All, Group, true}, {All, All, true},
		{ScopeUnspecified, Tab, false}, {All, ScopeUnspecified, false},
	}
	for _, tt := range tests {
		if got := tt.grant.Covers(tt.reach); got != tt.want {
			t.Errorf("%s covers %s = %v, want %v", tt.grant, tt.reach, got, tt.want)
		}
	}
}

// TestTableNamesKnownTools keeps the table in step with the design's tools.
func TestTableNamesKnownTools(t *testing.T) {
	for _, tool := range []string{"list_terminals", "read_output", "create_terminal", "run_command", "focus_terminal",
		"update_terminal", "list_groups", "create_group", "update_group", "move_to_group", "list_theme_colors",
		"list_panes", "open_file", "open_file_in_split", "focus_tab", "close_tab", "reveal_line", "list_diagnostics",
		"list_language_servers", "restart_language_server", "configure_language_server", "list_worktrees",
		"add_worktree", "remove_worktree", "tidy_worktrees"} {
		if !Known(tool) {
			t.Errorf("tool %s is not in the policy table", tool)
		}
	}
}

func TestGitProject(t *testing.T) {
	dir := t.TempDir()
	if got := GitProject(context.Background(), dir); got != dir {
		t.Errorf("GitProject(non-repo %s) = %q, want the directory", dir, got)
	}
}
