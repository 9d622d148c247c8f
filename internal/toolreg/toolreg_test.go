package toolreg

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

const (
	none      = mcpv1.Capability_CAPABILITY_NONE
	configure = mcpv1.Capability_CAPABILITY_CONFIGURE
	unset     = mcpv1.Capability_CAPABILITY_UNSPECIFIED
	noReach   = mcpv1.ReachKind_REACH_KIND_NONE
	tab       = mcpv1.ReachKind_REACH_KIND_TAB
	directory = mcpv1.ReachKind_REACH_KIND_DIRECTORY
	unstated  = mcpv1.ReachKind_REACH_KIND_UNSPECIFIED
)

// TestEveryToolHasACompleteRule is the check that a proto tool cannot
// reach users without a permission rule: Phantom's own protos load, and
// every tool in them names its daemon, its capability (or none), a reach
// field the request has, and subject fields the request has.
func TestEveryToolHasACompleteRule(t *testing.T) {
	reg, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if len(reg.Tools()) == 0 {
		t.Fatal("no tools loaded")
	}
	for _, tl := range reg.Tools() {
		req := tl.Request.Descriptor()
		switch {
		case tl.Daemon == "":
			t.Errorf("%s: no daemon", tl.Name)
		case tl.Capability == mcpv1.Capability_CAPABILITY_UNSPECIFIED:
			t.Errorf("%s: capability unset", tl.Name)
		case tl.Reach.Kind == unstated:
			t.Errorf("%s: reach unset", tl.Name)
		case tl.Reach.Kind != noReach && (tl.Reach.Field == nil || req.Fields().ByName(tl.Reach.Field.Name()) != tl.Reach.Field):
			t.Errorf("%s: reach field %v is not a field of %s", tl.Name, tl.Reach.Field, req.FullName())
		}
		for _, f := range tl.Subject {
			if req.Fields().ByName(f.Name()) != f {
				t.Errorf("%s: subject field %s is not a field of %s", tl.Name, f.Name(), req.FullName())
			}
		}
		if got, ok := reg.ByMethod(tl.Method); !ok || got != tl {
			t.Errorf("%s: ByMethod(%s) does not find it", tl.Name, tl.Method)
		}
	}
}

// TestKnownRules pins the rules of the tools that need a capability, as
// the design's table states them.
func TestKnownRules(t *testing.T) {
	reg, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool, daemon string
		cap          mcpv1.Capability
		kind         mcpv1.ReachKind
		field        protoreflect.Name
		subject      []protoreflect.Name
	}{
		{"list_terminals", "terminald", none, noReach, "", nil},
		{"read_output", "terminald", mcpv1.Capability_CAPABILITY_READ, tab, "terminal_id", nil},
		{"run_command", "terminald", mcpv1.Capability_CAPABILITY_RUN, tab, "terminal_id", []protoreflect.Name{"command"}},
		{"send_keys", "terminald", mcpv1.Capability_CAPABILITY_RUN, tab, "terminal_id", []protoreflect.Name{"keys", "literal"}},
		{"close_terminal", "terminald", mcpv1.Capability_CAPABILITY_RUN, tab, "terminal_id", nil},
		{"list_worktrees", "gitd", mcpv1.Capability_CAPABILITY_WORKTREE, directory, "repository", nil},
		{"add_worktree", "gitd", mcpv1.Capability_CAPABILITY_WORKTREE, directory, "repository", []protoreflect.Name{"path", "branch"}},
		{"remove_worktree", "gitd", mcpv1.Capability_CAPABILITY_WORKTREE, directory, "repository", []protoreflect.Name{"path"}},
		{"tidy_worktrees", "gitd", mcpv1.Capability_CAPABILITY_WORKTREE, directory, "repository", nil},
	}
	for _, tt := range tests {
		tl, ok := reg.ByName(tt.tool)
		if !ok {
			t.Errorf("no tool %s", tt.tool)
			continue
		}
		var field protoreflect.Name
		if tl.Reach.Field != nil {
			field = tl.Reach.Field.Name()
		}
		var subject []protoreflect.Name
		for _, f := range tl.Subject {
			subject = append(subject, f.Name())
		}
		if tl.Daemon != tt.daemon || tl.Capability != tt.cap || tl.Reach.Kind != tt.kind || field != tt.field ||
			strings.Join(names(subject), ",") != strings.Join(names(tt.subject), ",") {
			t.Errorf("%s = %s %s %s(%s) subject %v; want %s %s %s(%s) subject %v", tt.tool, tl.Daemon, tl.Capability, tl.Reach.Kind, field,
				subject, tt.daemon, tt.cap, tt.kind, tt.field, tt.subject)
		}
	}
}

func names(ns []protoreflect.Name) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = string(n)
	}
	return out
}

// TestLoad: a complete option loads; a bad one is a load error naming the
// tool and the field, so renaming a reach or subject field in a proto
// breaks loudly instead of silently widening a permission check.
func TestLoad(t *testing.T) {
	good := rule("configure_thing", configure, directory, "target", "args", "count")
	tests := []struct {
		name string
		fix  fixture
		err  string // substrings, "|"-separated; "" for success
	}{
		{"complete", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{good, rule("list_things", none, noReach, "")}}, ""},
		{"renamed reach field", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{rule("t", configure, directory, "workspace")}},
			`tool "t" (fixture.v1.FixtureService.DoA)|reach field "workspace" is not a field of fixture.v1.DoRequest`},
		{"reach field not a string", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{rule("t", configure, tab, "count")}},
			`tool "t"|reach field "count"|int32`},
		{"reach field repeated", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{rule("t", configure, tab, "args")}},
			`reach field "args"|repeated string`},
		{"renamed subject field", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{rule("t", configure, tab, "target", "argv")}},
			`tool "t"|subject field "argv" is not a field`},
		{"message subject field", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{rule("t", configure, tab, "target", "inner")}},
			`subject field "inner"|message`},
		{"hidden field missing", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{{Name: "t", Title: "T", Capability: none,
			Reach: &mcpv1.Reach{Kind: noReach}, HiddenFields: []string{"secret"}}}}, `tool "t"|hidden field "secret"`},
		{"capability unset", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{rule("t", unset, noReach, "")}},
			`tool "t"|capability is not set`},
		{"capability undeclared", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{rule("t", mcpv1.Capability(42), directory, "target")}},
			`tool "t"|capability 42 is not one phantom.mcp.v1.Capability declares`},
		{"reach unset", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{{Name: "t", Title: "T", Capability: configure}}},
			`tool "t"|reach is not set`},
		{"capability without reach", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{rule("t", configure, noReach, "")}},
			`tool "t"|CAPABILITY_CONFIGURE with reach REACH_KIND_NONE`},
		{"reach without capability", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{rule("t", none, tab, "target")}},
			`tool "t"|CAPABILITY_NONE with reach REACH_KIND_TAB`},
		{"reach without field", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{rule("t", configure, tab, "")}},
			`tool "t"|names no field`},
		{"free tool with subject", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{rule("t", none, noReach, "", "target")}},
			`tool "t"|a free tool shows no sheet`},
		{"free for opened tabs, reach a directory", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{freeOpened(rule("t", configure, directory, "target"))}},
			`tool "t"|free_for_opened_tabs with reach REACH_KIND_DIRECTORY`},
		{"free for opened tabs, free tool", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{freeOpened(rule("t", none, noReach, ""))}},
			`tool "t"|free_for_opened_tabs with reach REACH_KIND_NONE`},
		{"no daemon", fixture{tools: []*mcpv1.Tool{good}},
			`tool "configure_thing"|service fixture.v1.FixtureService has no (phantom.mcp.v1.daemon) option`},
		{"name used twice", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{good, good}},
			`tool "configure_thing" (fixture.v1.FixtureService.DoB)|already used by fixture.v1.FixtureService.DoA`},
		{"title missing", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{{Name: "t", Title: " ", Capability: none,
			Reach: &mcpv1.Reach{Kind: noReach}}}}, `tool "t"|title is not set`},
		{"streaming", fixture{daemon: "fixtured", tools: []*mcpv1.Tool{good}, streaming: true}, `tool "configure_thing"|streaming`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := Load(tt.fix.files(t))
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				tl, ok := reg.ByName(good.Name)
				if !ok || tl.Daemon != "fixtured" || tl.Method != "/fixture.v1.FixtureService/DoA" || tl.Reach.Field.Name() != "target" ||
					len(tl.Subject) != 2 || tl.Request.New().Descriptor().FullName() != "fixture.v1.DoRequest" {
					t.Fatalf("configure_thing loaded as %+v", tl)
				}
				if got, _ := reg.ByMethod("/fixture.v1.FixtureService/DoB"); got == nil || got.Name != "list_things" {
					t.Fatalf("ByMethod(DoB) = %+v", got)
				}
				return
			}
			wantLoadError(t, err, tt.err)
		})
	}
}

// freeOpened sets free_for_opened_tabs on r.
func freeOpened(r *mcpv1.Tool) *mcpv1.Tool {
	r.FreeForOpenedTabs = true
	return r
}

// TestFreeForOpenedTabs: exactly the tools whose option says so are free
// for the tabs the caller opened, and the registry carries it.
func TestFreeForOpenedTabs(t *testing.T) {
	reg, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	var free []string
	for _, tl := range reg.Tools() {
		if tl.FreeForOpenedTabs {
			free = append(free, tl.Name)
		}
	}
	if strings.Join(free, ",") != "close_terminal,send_keys" {
		t.Errorf("tools free for opened tabs = %v, want close_terminal and send_keys", free)
	}
	fix := fixture{daemon: "fixtured", tools: []*mcpv1.Tool{freeOpened(rule("t", configure, tab, "target"))}}
	r, err := Load(fix.files(t))
	if err != nil {
		t.Fatal(err)
	}
	if tl, _ := r.ByName("t"); tl == nil || !tl.FreeForOpenedTabs {
		t.Errorf("loaded %+v, want FreeForOpenedTabs", tl)
	}
}

// TestForFile: a daemon's guard finds its tools by file, and a file whose
// tools the registry lacks is an error rather than a daemon with no tools.
func TestForFile(t *testing.T) {
	reg, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	tools, err := reg.ForFile(terminalv1.File_phantom_terminal_v1_terminal_proto)
	if err != nil || len(tools) == 0 {
		t.Fatalf("ForFile(terminal.proto) = %d tools, %v", len(tools), err)
	}
	for _, tl := range tools {
		if tl.Daemon != "terminald" {
			t.Errorf("%s: daemon %s, want terminald", tl.Name, tl.Daemon)
		}
	}
	fd, _ := fixture{daemon: "fixtured", tools: []*mcpv1.Tool{rule("list_things", none, noReach, "")}}.files(t).
		FindFileByPath("fixture/v1/fixture.proto")
	if _, err := reg.ForFile(fd); err == nil || !strings.Contains(err.Error(), `tool "list_things"`) {
		t.Errorf("ForFile(unregistered fixture) = %v, want an error naming list_things", err)
	}
}

// wantLoadError checks that err says each "|"-separated part of want.
func wantLoadError(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("loaded; want an error saying %q", want)
	}
	for _, w := range strings.Split(want, "|") {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}
