package policy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/toolreg"
)

type fakeTabs []TabInfo

func (f fakeTabs) Tabs(context.Context) ([]TabInfo, error) { return f, nil }

// workspace: t1, t2 and t5 in group g1 (t2 in another directory of t1's
// repository, t5 in another repository), t3 in group g2, t4 in no group.
// Then the tabs agents touched: t6 named by an agent; t7, the human's tab
// an agent pulled into g1; t8, an agent's tab it moved into the human's g2.
// t9 is busy, t10 has exited.
var workspace = fakeTabs{
	{ID: "t1", Title: "agent", Directory: "/src/app", GroupID: "g1", Idle: true},
	{ID: "t2", Title: "server", Directory: "/src/app/cmd", GroupID: "g1", Idle: true},
	{ID: "t3", Title: "lib", Directory: "/src/lib", GroupID: "g2", Idle: true},
	{ID: "t4", Title: "misc\x1b]0;evil\a", Directory: "/tmp/x", Idle: true},
	{ID: "t5", Title: "web", Directory: "/src/web/ui", GroupID: "g1", Idle: true},
	{ID: "t6", Title: "prod", Directory: "/tmp/p", Idle: true, NameSetByAgent: true},
	{ID: "t7", Title: "secrets", Directory: "/src/secret", GroupID: "g1", Idle: true, GroupSetByAgent: true},
	{ID: "t8", Title: "agent2", Directory: "/src/agent2", GroupID: "g2", Idle: true, GroupSetByAgent: true},
	{ID: "t9", Title: "editor", Directory: "/tmp/y", Foreground: "vim"},
	{ID: "t10", Title: "done", Directory: "/tmp/z", Exited: true},
	{ID: "t11", Title: "sandboxed", Directory: "/src/app", Sandboxed: true, Idle: true},
}

func init() {
	for i, t := range workspace {
		workspace[i].Project = repoOf(context.Background(), t.Directory)
	}
}

// repoOf treats /src/<name>/... as the repository /src/<name>.
func repoOf(_ context.Context, dir string) string {
	if rest, ok := strings.CutPrefix(dir, "/src/"); ok {
		name, _, _ := strings.Cut(rest, "/")
		return "/src/" + name
	}
	return dir
}

func TestEvaluate(t *testing.T) {
	p := New(workspace, repoOf)
	in := func(tab string) Caller { return Caller{Client: "claude", ConnectionID: "c1", TabID: tab} }
	escaped := func(tab string) Caller {
		return Caller{Client: "claude", ConnectionID: "c1", TabID: tab, InsideWithoutTab: true}
	}
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
		{"worktree subject shows path", in("t1"), "remove_worktree", `{"repository":"/src/app","path":"/src/app.worktrees/x"}`, Worktree, Tab,
			`repository /src/app, path "/src/app.worktrees/x"; the caller tab's own project`, "/src/app", nil},
		{"worktree relative repository", in("t3"), "list_worktrees", `{"repository":"sub"}`, Worktree, Tab, "repository /src/lib/sub", "/src/lib", nil},
		{"worktree hidden caller directory is ignored", in("t1"), "list_worktrees", `{"caller_directory":"/src/lib"}`, Worktree, Tab, "repository /src/app;", "/src/app", nil},
		{"unknown argument", in("t1"), "read_output", `{"terminal_id":"t1","tab":"t3"}`, 0, 0, "tab", "", errdefs.ErrInvalidArgument},
		{"worktree outside tab needs repository", Caller{Client: "x", ConnectionID: "c"}, "list_worktrees", `{}`, 0, 0, "", "", errdefs.ErrInvalidArgument},
		{"configure language server", in("t1"), "configure_language_server", `{"language":"go","command":"gopls","args":["serve"]}`, Configure, Tab,
			`configure language "go", command "gopls", args "serve" for the language server of workspace /src/app only`, "/src/app", nil},
		{"configure language server elsewhere", in("t1"), "configure_language_server", `{"workspace":"/src/lib","language":"go"}`, Configure, All,
			"workspace /src/lib only", "/src/app", nil},
		{"unknown tool fails closed", in("t1"), "format_disk", `{}`, 0, 0, "", "", errdefs.ErrInvalidArgument},
		{"missing tab", in("t1"), "read_output", `{"terminal_id":"t99"}`, 0, 0, "", "", errdefs.ErrNotFound},
		{"missing terminal_id", in("t1"), "read_output", `{}`, 0, 0, "", "", errdefs.ErrInvalidArgument},
		{"bad arguments", in("t1"), "read_output", `[1]`, 0, 0, "", "", errdefs.ErrInvalidArgument},
		{"wrong argument type", in("t1"), "read_output", `{"terminal_id":3}`, 0, 0, "", "", errdefs.ErrInvalidArgument},
		{"caller tab gone", in("t99"), "read_output", `{"terminal_id":"t1"}`, 0, 0, "", "", errdefs.ErrFailedPrecondition},

		// Requests that would fail anyway fail before any sheet.
		{"run into unknown tab", in("t1"), "run_command", `{"terminal_id":"t99","command":"ls"}`, 0, 0, "", "", errdefs.ErrNotFound},
		{"run into busy tab", in("t1"), "run_command", `{"terminal_id":"t9","command":"ls"}`, 0, 0, `"vim" is running`, "", errdefs.ErrFailedPrecondition},
		{"run into exited tab", in("t1"), "run_command", `{"terminal_id":"t10","command":"ls"}`, 0, 0, "has exited", "", errdefs.ErrFailedPrecondition},
		{"run empty command", in("t1"), "run_command", `{"terminal_id":"t2","command":" "}`, 0, 0, "empty", "", errdefs.ErrInvalidArgument},
		{"run missing command", in("t1"), "run_command", `{"terminal_id":"t2"}`, 0, 0, "empty", "", errdefs.ErrInvalidArgument},
		{"run newline", in("t1"), "run_command", `{"terminal_id":"t2","command":"ls\nrm -rf ~"}`, 0, 0, `\n at byte 2`, "", errdefs.ErrInvalidArgument},
		{"run carriage return", in("t1"), "run_command", `{"terminal_id":"t2","command":"ls\r"}`, 0, 0, `\r at byte 2`, "", errdefs.ErrInvalidArgument},
		{"run tab character", in("t1"), "run_command", `{"terminal_id":"t2","command":"ls\t-l"}`, 0, 0, `\t at byte 2`, "", errdefs.ErrInvalidArgument},
		{"run escape sequence", in("t1"), "run_command", `{"terminal_id":"t2","command":"ls \u001b[2J"}`, 0, 0, `\x1b at byte 3`, "", errdefs.ErrInvalidArgument},
		{"run C1 control", in("t1"), "run_command", `{"terminal_id":"t2","command":"ls \u009b2J"}`, 0, 0, `\u009b`, "", errdefs.ErrInvalidArgument},
		{"run Ctrl-C", in("t1"), "run_command", `{"terminal_id":"t2","command":"\u0003"}`, 0, 0, `\x03`, "", errdefs.ErrInvalidArgument},
		{"read exited tab", in("t1"), "read_output", `{"terminal_id":"t10"}`, Read, All, "tab t10 (done)", "/src/app", nil},

		// The sheet shows what will happen: the whole command, made visible.
		{"run shows spaces counted", in("t1"), "run_command", `{"terminal_id":"t2","command":"make test` + strings.Repeat(" ", 3000) + `; echo PWNED"}`,
			Run, Group, `"make test" + 3000 spaces + "; echo PWNED" typed into tab t2 (server), a tab of the caller's group`, "/src/app", nil},
		{"run shows a long command whole", in("t1"), "run_command", `{"terminal_id":"t2","command":"echo ` + strings.Repeat("x", 5000) + ` end"}`,
			Run, Group, strings.Repeat("x", 5000) + ` end"`, "/src/app", nil},
		{"run shows bidi overrides", in("t1"), "run_command", `{"terminal_id":"t2","command":"ls \u202e\u2066\u200f\u061c"}`,
			Run, Group, `"ls \u202e\u2066\u200f\u061c"`, "/src/app", nil},
		{"run shows zero-width and blank characters", in("t1"), "run_command", `{"terminal_id":"t2","command":"rm\u200b \ufeff\u2800\u00a0x"}`,
			Run, Group, `"rm\u200b \ufeff\u2800\u00a0x"`, "/src/app", nil},
		{"run quotes quotes", in("t1"), "run_command", `{"terminal_id":"t2","command":"echo \" + 3000 spaces + \""}`,
			Run, Group, `"echo \" + 3000 spaces + \""`, "/src/app", nil},
		{"name set by an agent is marked", in("t1"), "run_command", `{"terminal_id":"t6","command":"deploy"}`,
			Run, All, `typed into tab t6 ("prod", named by an agent)`, "/src/app", nil},
		{"reach in words, own tab", in("t1"), "read_output", `{"terminal_id":"t1"}`, Read, Tab, "tab t1 (agent), the caller's own tab", "/src/app", nil},
		{"reach in words, other group", in("t1"), "read_output", `{"terminal_id":"t3"}`, Read, All, "a tab outside the caller's group", "/src/app", nil},

		// Group membership an agent set never widens reach.
		{"human's tab pulled into the agent's group", in("t1"), "read_output", `{"terminal_id":"t7"}`, Read, All, "an agent, not the human, grouped", "/src/app", nil},
		{"agent's tab moved into the human's group", in("t8"), "read_output", `{"terminal_id":"t3"}`, Read, All, "tab t3 (lib)", "/src/agent2", nil},
		{"agent's moved tab still reaches itself", in("t8"), "read_output", `{"terminal_id":"t8"}`, Read, Tab, "own tab", "/src/agent2", nil},
		{"human's grouping still counts for the human's tabs", in("t3"), "read_output", `{"terminal_id":"t8"}`, Read, All, "an agent, not the human, grouped", "/src/lib", nil},
		{"repository of a pulled-in tab", in("t1"), "add_worktree", `{"repository":"/src/secret"}`, Worktree, All, "a project no tab of the caller's group", "/src/app", nil},
		{"repository seen from a moved tab", in("t8"), "add_worktree", `{"repository":"/src/lib"}`, Worktree, All, "repository /src/lib", "/src/agent2", nil},

		// A caller inside Phantom but in no tab reaches all, whatever tab it names.
		{"inside without a tab reads all", escaped("t1"), "read_output", `{"terminal_id":"t1"}`, Read, All, "left its tab", "", nil},
		{"inside without a tab runs all", escaped(""), "run_command", `{"terminal_id":"t2","command":"ls"}`, Run, All, "left its tab", "", nil},
		{"inside without a tab, worktrees all", escaped("t1"), "list_worktrees", `{"repository":"/src/app"}`, Worktree, All, "repository /src/app", "", nil},
		{"inside without a tab needs a repository", escaped("t1"), "list_worktrees", `{}`, 0, 0, "", "", errdefs.ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			need, err := p.Evaluate(context.Background(), tt.caller, tt.tool, tt.args)
			if tt.err != nil {
				if !errdefs.Is(err, tt.err) || !strings.Contains(err.Error(), tt.subject) {
					t.Fatalf("err = %v, want kind %v saying %q", err, tt.err, tt.subject)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if need.Capability != tt.cap || need.Reach != tt.reach || need.Project != tt.project || !strings.Contains(need.Subject, tt.subject) {
				t.Errorf("need = %+v\nwant capability %s reach %s project %q subject containing %q", need, tt.cap, tt.reach, tt.project, tt.subject)
			}
			if i := strings.IndexFunc(need.Subject, hidden); i >= 0 {
				t.Errorf("subject %+q carries a hidden or acting character at byte %d", need.Subject, i)
			}
		})
	}
}

// TestCallerTitle: the sheet names the caller's tab as the human would
// recognise it, and marks a name an agent gave it.
func TestCallerTitle(t *testing.T) {
	p := New(workspace, repoOf)
	tests := []struct{ tab, want string }{
		{"t1", "agent"},
		{"t6", `"prod", named by an agent`},
		{"t4", `misc\x1b]0;evil\a`},
	}
	for _, tt := range tests {
		need, err := p.Evaluate(context.Background(), Caller{Client: "claude", ConnectionID: "c", TabID: tt.tab}, "read_output",
			`{"terminal_id":"t1"}`)
		if err != nil || need.CallerTitle != tt.want {
			t.Errorf("caller in %s: title %q, %v; want %q", tt.tab, need.CallerTitle, err, tt.want)
		}
	}
}

// hidden reports characters that must never reach the sheet raw: controls,
// format characters (bidi, zero-width), separators other than the space,
// and characters that look blank.
func hidden(r rune) bool {
	return r != ' ' && (unicode.In(r, unicode.Cc, unicode.Cf, unicode.Z) || r == 0x2800 || r == 0x3164)
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

// TestEveryToolHasARule: every tool of the registry is known to the
// policy, and the special rules agree with the protos' subject fields.
func TestEveryToolHasARule(t *testing.T) {
	p := New(workspace, repoOf)
	if p.err != nil {
		t.Fatal(p.err)
	}
	reg, _ := toolreg.Default()
	caps, err := p.Capabilities()
	if err != nil || len(caps) != len(reg.Tools()) {
		t.Fatalf("Capabilities() = %v, %v; want one per registry tool (%d)", caps, err, len(reg.Tools()))
	}
	for _, tl := range reg.Tools() {
		if !p.Known(tl.Name) {
			t.Errorf("tool %s has no rule", tl.Name)
		}
	}
}

// TestDirProject: the project of a directory argument is decided from
// where .git entries are, never from what the repository's config says:
// core.worktree naming another project moves nothing.
func TestDirProject(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a + "/.git", b + "/.git", b + "/src"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(b+"/.git/config", []byte("[core]\n\tworktree = "+a+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{b: b, b + "/src": b, a: a, root: root} {
		if got := DirProject(context.Background(), dir); got != want {
			t.Errorf("DirProject(%s) = %q, want %q", dir, got, want)
		}
	}
}

// TestConfigureSheet: configure_language_server's sheet says which one
// server the configuration applies to, until when, everything that
// decides what runs, and where it runs for this caller.
func TestConfigureSheet(t *testing.T) {
	p := New(workspace, repoOf)
	in := func(tab string) Caller { return Caller{Client: "claude", ConnectionID: "c1", TabID: tab} }
	tests := []struct {
		name     string
		caller   Caller
		args     string
		kernel   bool // the kernel can sandbox
		want     []string
		wantNone []string
	}{
		{"sandboxed tab", in("t11"), `{"language":"python","command":"/src/app/evil.sh"}`, true,
			[]string{`command "/src/app/evil.sh"`, "workspace /src/app only", "not the language's other workspaces", "until Phantom stops (not saved)",
				"in the sandbox of the caller's tab t11", "the caller tab's own project"},
			[]string{"as you"}},
		{"unsandboxed tab", in("t1"), `{"language":"go"}`, true,
			[]string{"in a read-only sandbox"}, []string{"as you", "tab t1 ("}},
		{"no tab", Caller{Client: "x", ConnectionID: "c"}, `{"language":"go","workspace":"/src/app"}`, true,
			[]string{"in a read-only sandbox", "reaches everything"}, nil},
		{"kernel cannot sandbox", in("t11"), `{"language":"go"}`, false,
			[]string{"as you, outside any sandbox", "Landlock"}, []string{"in the sandbox"}},
		{"env and settings are shown", in("t11"), `{"language":"python","env":{"LD_PRELOAD":"/tmp/x.so","A":"1"},"settings":"{\"pylsp\":{\"plugins\":{\"flake8\":{\"executable\":\"/tmp/evil\"}}}}","initialization_options":"{\"x\":1}"}`, true,
			[]string{`env "A=1" "LD_PRELOAD=/tmp/x.so"`, `settings "{\"pylsp\":{\"plugins\":{\"flake8\":{\"executable\":\"/tmp/evil\"}}}}"`, `initialization_options "{\"x\":1}"`}, nil},
		{"escapes in env are shown", in("t11"), `{"language":"go","env":{"K":"v\u001b[2J"}}`, true,
			[]string{`"K=v\x1b[2J"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			was := kernelSandboxes
			kernelSandboxes = func() bool { return tt.kernel }
			defer func() { kernelSandboxes = was }()
			need, err := p.Evaluate(context.Background(), tt.caller, "configure_language_server", tt.args)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(need.Subject, w) {
					t.Errorf("subject %q\nwant it to say %q", need.Subject, w)
				}
			}
			for _, w := range tt.wantNone {
				if strings.Contains(need.Subject, w) {
					t.Errorf("subject %q\nsays %q", need.Subject, w)
				}
			}
			for i, r := range need.Subject {
				if r != ' ' && !unicode.IsGraphic(r) {
					t.Errorf("subject %+q carries a hidden or acting character at byte %d", need.Subject, i)
				}
			}
		})
	}
}
