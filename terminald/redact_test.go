package terminald

import (
	"context"
	"slices"
	"testing"

	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// TestRedact checks what is left of a tab for a caller who may not read
// it: no program title, no OSC 7 directory, a worktree only where the
// kernel's directory is; names, numbers and the rest kept.
func TestRedact(t *testing.T) {
	base := workspace.Terminal{ID: "t2", ForegroundName: "bash", ForegroundPID: 7, Idle: true, DevServerPorts: []uint16{3000},
		GroupID: "g1", WindowID: "w1", AgentClient: "claude", Icon: "🐘", Color: "blue", Project: "/src/app", OpenedBy: "t9",
		KernelDirectory: "/src/app/sub", Cols: 80, Rows: 24}
	with := func(f func(*workspace.Terminal)) workspace.Terminal {
		t := base
		f(&t)
		return t
	}
	// seen is base as redact leaves it, changed by f.
	seen := func(f func(*workspace.Terminal)) workspace.Terminal {
		t := base
		t.Title, t.Directory = "bash", "/src/app/sub"
		f(&t)
		return t
	}
	tests := []struct {
		name string
		in   workspace.Terminal
		want workspace.Terminal
	}{
		{"program title cut to the foreground program",
			with(func(t *workspace.Terminal) { t.Title = "export API_TOKEN=sk-live-1" }),
			seen(func(t *workspace.Terminal) { t.Title = "bash" })},
		{"a given name stays the title",
			with(func(t *workspace.Terminal) { t.Name, t.Title = "db", "db" }),
			seen(func(t *workspace.Terminal) { t.Name, t.Title = "db", "db" })},
		{"no foreground program: no title",
			with(func(t *workspace.Terminal) { t.Title, t.ForegroundName = "sk-live-2", "" }),
			seen(func(t *workspace.Terminal) { t.Title, t.ForegroundName = "", "" })},
		{"OSC 7 directory becomes the kernel's",
			with(func(t *workspace.Terminal) { t.Directory = "/sk-live-3" }),
			seen(func(t *workspace.Terminal) { t.Directory = "/src/app/sub" })},
		{"no kernel directory: none",
			with(func(t *workspace.Terminal) { t.Directory, t.KernelDirectory = "/sk-live-4", "" }),
			seen(func(t *workspace.Terminal) { t.Directory, t.KernelDirectory = "", "" })},
		{"worktree holding the kernel's directory stays",
			with(func(t *workspace.Terminal) { t.Directory, t.Worktree = "/src/app/sub", "/src/app" }),
			seen(func(t *workspace.Terminal) { t.Directory, t.Worktree = "/src/app/sub", "/src/app" })},
		{"worktree of the OSC 7 directory goes",
			with(func(t *workspace.Terminal) { t.Directory, t.Worktree = "/home/u/sk-live-5", "/home/u/sk-live-5" }),
			seen(func(t *workspace.Terminal) { t.Directory, t.Worktree = "/src/app/sub", "" })},
		{"a worktree that only shares a prefix goes",
			with(func(t *workspace.Terminal) { t.Worktree = "/src/ap" }),
			seen(func(t *workspace.Terminal) { t.Directory, t.Worktree = "/src/app/sub", "" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redact(tt.in); !got.Equal(tt.want) {
				t.Errorf("redact(%+v)\n= %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

// TestViewer checks which tabs each caller sees in full: the human all;
// an agent its own tab and the tabs opened for it, however deep, and no
// other; an agent outside every tab, or a call no guard placed, none.
func TestViewer(t *testing.T) {
	tabs := []workspace.Terminal{
		{ID: "t1"},                 // the agent's
		{ID: "t2", OpenedBy: "t1"}, // opened for it
		{ID: "t3", OpenedBy: "t2"}, // opened for the agent in t2
		{ID: "t4", OpenedBy: "t3"},
		{ID: "t5"},                 // the human's
		{ID: "t6", OpenedBy: "t5"}, // for an agent in the human's tab
		{ID: "t7", OpenedBy: "t9"}, // its opener is gone
		{ID: "t8", OpenedBy: "t10"},
		{ID: "t10", OpenedBy: "t8"}, // a loop opened_by cannot make
	}
	all := []string{"t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t10"}
	tests := []struct {
		name string
		ctx  context.Context
		full []string
	}{
		{"human", guard.NewContext(context.Background(), guard.Caller{}), all},
		{"agent in t1", guard.NewContext(context.Background(), guard.Caller{Inside: true, ForAgent: true, TabID: "t1"}), []string{"t1", "t2", "t3", "t4"}},
		{"gateway for t3", guard.NewContext(context.Background(), guard.Caller{ForAgent: true, TabID: "t3"}), []string{"t3", "t4"}},
		{"gateway for t5", guard.NewContext(context.Background(), guard.Caller{ForAgent: true, TabID: "t5"}), []string{"t5", "t6"}},
		{"agent outside every tab", guard.NewContext(context.Background(), guard.Caller{ForAgent: true}), nil},
		{"inside, left its tab", guard.NewContext(context.Background(), guard.Caller{Inside: true, ForAgent: true, LeftTab: true}), nil},
		{"agent in t8", guard.NewContext(context.Background(), guard.Caller{ForAgent: true, TabID: "t8"}), []string{"t8", "t10"}},
		{"agent in a closed tab", guard.NewContext(context.Background(), guard.Caller{ForAgent: true, TabID: "t9"}), []string{"t7"}},
		{"no guard", context.Background(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := viewerOf(tt.ctx)
			full := v.sees(tabs)
			var got []string
			for i, tab := range tabs {
				if full.at(i) {
					got = append(got, tab.ID)
				}
				// One tab at a time, as terminalFor judges it.
				if one := v.seesOne(tab, func() []workspace.Terminal { return tabs }); one != full.at(i) {
					t.Errorf("tab %s alone: seen in full %v, in the list %v", tab.ID, one, full.at(i))
				}
			}
			if !slices.Equal(got, tt.full) {
				t.Errorf("sees in full %v, want %v", got, tt.full)
			}
		})
	}
}
