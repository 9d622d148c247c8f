package main

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// fakeLists is a terminald that only lists: two windows (main: t1 "shell",
// t2 "build", t4 titled "vim"; ci: t3 "build" and t5), one group. On
// main's status line, entry 1 is t1 and t4 split, t4 focused, entry 2 t2;
// on ci's, t3 and t5 are an entry each.
type fakeLists struct {
	terminalv1.TerminalServiceClient // the other methods are not called
}

func (fakeLists) ListTerminals(context.Context, *terminalv1.ListTerminalsRequest, ...grpc.CallOption) (*terminalv1.ListTerminalsResponse, error) {
	return &terminalv1.ListTerminalsResponse{Terminals: []*terminalv1.Terminal{
		{Id: "t1", Name: "shell", Title: "shell", WindowId: "w1"},
		{Id: "t2", Name: "build", Title: "build", WindowId: "w1"},
		{Id: "t4", Title: "vim", WindowId: "w1"},
		{Id: "t3", Name: "build", Title: "build", WindowId: "w2"},
		{Id: "t5", Title: "bash", WindowId: "w2"},
	}}, nil
}

func (fakeLists) ListWindows(context.Context, *terminalv1.ListWindowsRequest, ...grpc.CallOption) (*terminalv1.ListWindowsResponse, error) {
	return &terminalv1.ListWindowsResponse{Windows: []*terminalv1.Window{
		{Id: "w1", Name: "main", FocusedTerminalId: "t2"},
		{Id: "w2", Name: "ci", FocusedTerminalId: "t5"},
	}}, nil
}

func (fakeLists) ListEntries(context.Context, *terminalv1.ListEntriesRequest, ...grpc.CallOption) (*terminalv1.ListEntriesResponse, error) {
	one := func(id string) *terminalv1.StatusEntry {
		return &terminalv1.StatusEntry{TerminalIds: []string{id}, FocusedTerminalId: id}
	}
	return &terminalv1.ListEntriesResponse{Windows: []*terminalv1.WindowEntries{
		{WindowId: "w1", Entries: []*terminalv1.StatusEntry{{TerminalIds: []string{"t1", "t4"}, FocusedTerminalId: "t4"}, one("t2")}},
		{WindowId: "w2", Entries: []*terminalv1.StatusEntry{one("t3"), one("t5")}},
	}}, nil
}

func (fakeLists) ListGroups(context.Context, *terminalv1.ListGroupsRequest, ...grpc.CallOption) (*terminalv1.ListGroupsResponse, error) {
	return &terminalv1.ListGroupsResponse{Groups: []*terminalv1.Group{{Id: "g1", Name: "api"}}}, nil
}

func TestTargets(t *testing.T) {
	tests := []struct {
		arg, inTab string // inTab: PHANTOM_TAB_ID
		tab        string // want; "" for an error
		code       int    // the error's exit status
		says       string
	}{
		{arg: "t9", tab: "t9"}, // ids go to terminald as they are
		{arg: "shell", tab: "t1"},
		{arg: "vim", tab: "t4"},    // a title, when no name fits
		{arg: "main:1", tab: "t4"}, // an entry: its focused pane's tab
		{arg: "main:1.1", tab: "t1"},
		{arg: "main:2", tab: "t2"},
		{arg: "w2:1", tab: "t3"},
		{arg: "ci:build", tab: "t3"},
		{arg: "ci", tab: "t5"}, // a window: its focused tab
		{arg: "2", inTab: "t5", tab: "t5"},
		{arg: "1", inTab: "t1", tab: "t4"},
		{arg: "1.1", inTab: "t4", tab: "t1"},
		{arg: "build", code: exitUsage, says: `"build" names 2 tabs: t2 (main:2), t3 (ci:1)`},
		{arg: "2", code: exitUsage, says: "tab 2 is ambiguous: 2 windows have one — say which: main:2 or ci:2"},
		{arg: "7", code: exitNotFound, says: "no window has a tab 7"},
		{arg: "main:3", code: exitNotFound, says: "window main shows 2 entries on its status line, so no 3"},
		{arg: "main:1.3", code: exitNotFound, says: "entry 1 of window main has 2 panes, so no pane 3"},
		{arg: "main:2.2", code: exitNotFound, says: "entry 2 of window main has 1 pane, so no pane 2"},
		{arg: "main:0.1", code: exitNotFound, says: "so no 0"},
		{arg: "nope:1", code: exitNotFound, says: `window "nope" not found`},
		{arg: "nope", code: exitNotFound, says: `no tab or window is called "nope"`},
		{arg: "", code: exitUsage, says: "no tab given"},
	}
	for _, tc := range tests {
		t.Run(tc.arg+"_in_"+tc.inTab, func(t *testing.T) {
			t.Setenv("PHANTOM_TAB_ID", tc.inTab)
			got, err := newTargets(context.Background(), fakeLists{}).Tab(tc.arg)
			var ce *cliError
			switch {
			case tc.tab != "" && (err != nil || got != tc.tab):
				t.Errorf("Tab(%q) = %q, %v; want %s", tc.arg, got, err, tc.tab)
			case tc.tab == "" && (!errors.As(err, &ce) || ce.code != tc.code || !strings.Contains(ce.Error(), tc.says)):
				t.Errorf("Tab(%q) = %q, %v; want exit %d saying %q", tc.arg, got, err, tc.code, tc.says)
			}
		})
	}
	r := newTargets(context.Background(), fakeLists{})
	for arg, want := range map[string]string{"main": "w1", "ci": "w2", "w7": "w7", "shell": "t1", "ci:2": "t5"} {
		if got, err := r.TabOrWindow(arg); err != nil || got != want {
			t.Errorf("TabOrWindow(%q) = %q, %v; want %s", arg, got, err, want)
		}
	}
	places, err := r.Places()
	if want := map[string]string{"t1": "main:1.1", "t4": "main:1.2", "t2": "main:2", "t3": "ci:1", "t5": "ci:2"}; err != nil || !maps.Equal(places, want) {
		t.Errorf("Places() = %v, %v; want %v", places, err, want)
	}
	if got := r.GroupLabels(); !maps.Equal(got, map[string]string{"g1": "api"}) {
		t.Errorf("GroupLabels() = %v, want g1: api", got)
	}
	for arg, want := range map[string]string{"api": "g1", "g9": "g9"} {
		if got, err := r.Group(arg); err != nil || got != want {
			t.Errorf("Group(%q) = %q, %v; want %s", arg, got, err, want)
		}
	}
}

// FuzzTargets: whatever the argument, resolving it never panics, and
// yields a listed tab, the argument itself when it is shaped as an id, or
// a worded error with a usage or not-found status.
func FuzzTargets(f *testing.F) {
	for _, s := range []string{"t1", "main:2", "ci:build", "2", ":", "::", "main:", ":1", "-1", "99999999999999999999", "w1:t3", "build", "1.2", "main:1.-1", "1..2", ".1"} {
		f.Add(s)
	}
	listed := map[string]bool{"t1": true, "t2": true, "t3": true, "t4": true, "t5": true}
	f.Fuzz(func(t *testing.T, arg string) {
		got, err := newTargets(context.Background(), fakeLists{}).Tab(arg)
		var ce *cliError
		switch {
		case err != nil && (!errors.As(err, &ce) || (ce.code != exitUsage && ce.code != exitNotFound)):
			t.Fatalf("Tab(%q): %v is not a usage or not-found error", arg, err)
		case err == nil && !listed[got] && !isID(got, 't'):
			t.Fatalf("Tab(%q) = %q, not a tab", arg, got)
		}
	})
}

// fakeInside is fakeLists as a process inside a tab sees it: ListWindows
// is the human's.
type fakeInside struct{ fakeLists }

func (fakeInside) ListWindows(context.Context, *terminalv1.ListWindowsRequest, ...grpc.CallOption) (*terminalv1.ListWindowsResponse, error) {
	return nil, status.Error(codes.PermissionDenied, "ListWindows is for the human")
}

// TestTargetsInsideTab: inside a tab, windows go by id, positions still
// count.
func TestTargetsInsideTab(t *testing.T) {
	t.Setenv("PHANTOM_TAB_ID", "t5")
	r := newTargets(context.Background(), fakeInside{})
	for arg, want := range map[string]string{"w2:1": "t3", "2": "t5", "w1:1.2": "t4", "w1:1": "t4", "shell": "t1"} {
		if got, err := r.Tab(arg); err != nil || got != want {
			t.Errorf("Tab(%q) = %q, %v; want %s", arg, got, err, want)
		}
	}
	if got := r.Describe("t4"); got != "t4 (w1:1.2)" {
		t.Errorf("Describe(t4) = %q, want t4 (w1:1.2)", got)
	}
	var ce *cliError
	if _, err := r.Tab("ci:1"); !errors.As(err, &ce) || ce.code != exitNotFound || !strings.Contains(ce.todo, "windows go by id") {
		t.Errorf("Tab(ci:1) inside a tab: %v, want not found, saying windows go by id", err)
	}
}

// twinGroups lists two groups of one name, one without a name, and one
// whose name holds an escape.
type twinGroups struct{ fakeLists }

func (twinGroups) ListGroups(context.Context, *terminalv1.ListGroupsRequest, ...grpc.CallOption) (*terminalv1.ListGroupsResponse, error) {
	return &terminalv1.ListGroupsResponse{Groups: []*terminalv1.Group{
		{Id: "g1", Name: "api"}, {Id: "g2", Name: "api"}, {Id: "g3"}, {Id: "g4", Name: "x\x1b[2Jy"}}}, nil
}

// TestGroupLabels: ls shows a group by name, with its id when the name is
// shared, by id when it has none, escaped when it holds control
// characters.
func TestGroupLabels(t *testing.T) {
	labels := newTargets(context.Background(), twinGroups{}).GroupLabels()
	for id, want := range map[string]string{"g1": "api (g1)", "g2": "api (g2)", "g3": "g3", "g4": `x\x1b[2Jy`, "g9": "g9"} {
		if got := groupLabel(labels, id); got != want {
			t.Errorf("groupLabel(%s) = %q, want %q", id, got, want)
		}
	}
}

// fakeOld is fakeLists from a terminald before entries: no ListEntries.
type fakeOld struct{ fakeLists }

func (fakeOld) ListEntries(context.Context, *terminalv1.ListEntriesRequest, ...grpc.CallOption) (*terminalv1.ListEntriesResponse, error) {
	return nil, status.Error(codes.Unimplemented, "unknown method ListEntries")
}

// TestTargetsOldTerminald: a terminald without entries shows each tab as
// an entry of its own, and positions count tabs.
func TestTargetsOldTerminald(t *testing.T) {
	t.Setenv("PHANTOM_TAB_ID", "")
	r := newTargets(context.Background(), fakeOld{})
	for arg, want := range map[string]string{"main:3": "t4", "main:1": "t1", "ci:2": "t5", "main:2.1": "t2"} {
		if got, err := r.Tab(arg); err != nil || got != want {
			t.Errorf("Tab(%q) = %q, %v; want %s", arg, got, err, want)
		}
	}
}
