package policy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// opened: a1 is the agent's tab; o1 it opened, o2 o1 opened (so a1's
// too), o3 it opened and runs sleep, o4 it opened and has exited. h1 is
// the human's, b1 another agent's tab and ob what b1 opened; og names a
// tab that is gone as its opener, ol and om open each other (a loop, which
// terminald cannot make, and which must not count).
var opened = fakeTabs{
	{ID: "a1", Title: "agent", Directory: "/src/app", Idle: true, Project: "/src/app"},
	{ID: "o1", Title: "tests", Directory: "/src/app", Idle: true, OpenedBy: "a1", Project: "/src/app"},
	{ID: "o2", Title: "deeper", Directory: "/src/app", Idle: true, OpenedBy: "o1", Project: "/src/app"},
	{ID: "o3", Title: "busy", Directory: "/src/app", Foreground: "sleep", OpenedBy: "a1", Project: "/src/app"},
	{ID: "o4", Title: "done", Directory: "/src/app", Exited: true, OpenedBy: "a1", Project: "/src/app"},
	{ID: "h1", Title: "human", Directory: "/src/app", Foreground: "vim", Project: "/src/app"},
	{ID: "b1", Title: "other agent", Directory: "/src/b", Idle: true, Project: "/src/b"},
	{ID: "ob", Title: "theirs", Directory: "/src/b", Idle: true, OpenedBy: "b1", Project: "/src/b"},
	{ID: "og", Title: "orphan", Directory: "/src/app", Idle: true, OpenedBy: "t999", Project: "/src/app"},
	{ID: "ol", Title: "loop", Directory: "/src/app", Idle: true, OpenedBy: "om", Project: "/src/app"},
	{ID: "om", Title: "loop2", Directory: "/src/app", Idle: true, OpenedBy: "ol", Project: "/src/app"},
}

// TestSendKeysAndClose: send_keys and close_terminal are free exactly for
// the tabs the caller opened (transitively), by the one rule the tool
// option states; every other tab — its own, the human's, another agent's
// and what that agent opened — needs run, with a sheet that spells the
// keys or says the tab closes.
func TestSendKeysAndClose(t *testing.T) {
	p := New(opened, nil)
	in := func(tab string) Caller { return Caller{Client: "claude", ConnectionID: "c1", TabID: tab} }
	tests := []struct {
		name    string
		caller  Caller
		tool    string
		args    string
		free    bool
		reach   Scope
		subject string // substring; for a free call, "" (no sheet)
		typed   string
		err     error
	}{
		{"keys into an opened tab", in("a1"), "send_keys", `{"terminal_id":"o1","keys":["C-c"]}`, true, Tab, "", "\x03", nil},
		{"keys into a tab an opened tab opened", in("a1"), "send_keys", `{"terminal_id":"o2","keys":["ls","Enter"]}`, true, Tab, "", "ls\r", nil},
		{"keys into a busy opened tab", in("a1"), "send_keys", `{"terminal_id":"o3","keys":["y","Enter"]}`, true, Tab, "", "y\r", nil},
		{"keys into an exited opened tab", in("a1"), "send_keys", `{"terminal_id":"o4","keys":["x"]}`, false, 0, "has exited", "", errdefs.ErrFailedPrecondition},
		{"keys into the caller's own tab ask", in("a1"), "send_keys", `{"terminal_id":"a1","keys":["C-c"]}`, false, Tab,
			`"␃" typed into tab a1 (agent), the caller's own tab`, "\x03", nil},
		{"keys into the human's tab ask", in("a1"), "send_keys", `{"terminal_id":"h1","keys":["make test","Enter"]}`, false, All,
			`"make test␍" typed into tab h1 (human)`, "make test\r", nil},
		{"keys into another agent's tab ask", in("a1"), "send_keys", `{"terminal_id":"b1","keys":["q"]}`, false, All, `"q" typed into tab b1`, "q", nil},
		{"keys into what another agent opened ask", in("a1"), "send_keys", `{"terminal_id":"ob","keys":["q"]}`, false, All, `"q" typed into tab ob`, "q", nil},
		{"keys into a tab whose opener is gone ask", in("a1"), "send_keys", `{"terminal_id":"og","keys":["q"]}`, false, All, `tab og`, "q", nil},
		{"keys into a loop ask", in("a1"), "send_keys", `{"terminal_id":"ol","keys":["q"]}`, false, All, `tab ol`, "q", nil},
		{"the opened tab does not own its opener", in("o1"), "send_keys", `{"terminal_id":"a1","keys":["q"]}`, false, All, `tab a1`, "q", nil},
		{"literal keys are text", in("a1"), "send_keys", `{"terminal_id":"h1","keys":["Enter"],"literal":true}`, false, All,
			`"Enter" typed into tab h1 (human) (literal: every key typed as text)`, "Enter", nil},
		{"a bad key name is refused before a sheet", in("a1"), "send_keys", `{"terminal_id":"h1","keys":["ls","C-Foo"]}`, false, 0,
			`key 2, "C-Foo", is not a key name`, "", errdefs.ErrInvalidArgument},
		{"no keys", in("a1"), "send_keys", `{"terminal_id":"o1","keys":[]}`, false, 0, "nothing to type", "", errdefs.ErrInvalidArgument},
		{"keys outside any tab", Caller{Client: "x", ConnectionID: "c"}, "send_keys", `{"terminal_id":"o1","keys":["q"]}`, false, All, "no Phantom tab", "q", nil},
		{"keys from a caller that left its tab", Caller{Client: "x", ConnectionID: "c", TabID: "a1", InsideWithoutTab: true}, "send_keys",
			`{"terminal_id":"o1","keys":["q"]}`, false, All, "left its tab", "q", nil},
		{"close an opened tab", in("a1"), "close_terminal", `{"terminal_id":"o1"}`, true, Tab, "", "", nil},
		{"close an exited opened tab", in("a1"), "close_terminal", `{"terminal_id":"o4"}`, true, Tab, "", "", nil},
		{"close the human's tab asks", in("a1"), "close_terminal", `{"terminal_id":"h1"}`, false, All,
			`close tab h1 (human) and end what runs in it ("vim")`, "", nil},
		{"close the caller's own tab asks", in("a1"), "close_terminal", `{"terminal_id":"a1"}`, false, Tab,
			"close tab a1 (agent) and end what runs in it, the caller's own tab", "", nil},
		{"close an unknown tab", in("a1"), "close_terminal", `{"terminal_id":"t404"}`, false, 0, "no tab", "", errdefs.ErrNotFound},
		{"run_command is not free for opened tabs", in("a1"), "run_command", `{"terminal_id":"o1","command":"ls"}`, false, Tab, "a tab this agent opened", "ls", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			need, err := p.Evaluate(context.Background(), tc.caller, tc.tool, tc.args)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.subject) {
					t.Fatalf("Evaluate = %+v, %v; want %v saying %q", need, err, tc.err, tc.subject)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if need.Capability != Run || need.Free != tc.free || need.Reach != tc.reach || need.Typed != tc.typed ||
				!strings.Contains(need.Subject, tc.subject) {
				t.Errorf("Evaluate = %+v\nwant run, free %v, reach %s, typed %q, subject containing %q", need, tc.free, tc.reach, tc.typed, tc.subject)
			}
		})
	}
}

// TestSendKeysOnceIsTheCall: the call a "once" answer allows differs for
// other keys, another spelling of the same bytes, literal or not, and
// another tab, so that it covers only the call on the sheet.
func TestSendKeysOnceIsTheCall(t *testing.T) {
	p := New(opened, nil)
	c := Caller{Client: "claude", ConnectionID: "c1", TabID: "a1"}
	calls := map[string]string{}
	for _, args := range []string{
		`{"terminal_id":"h1","keys":["y","Enter"]}`,
		`{"terminal_id":"h1","keys":["y","Enter","Enter"]}`,
		`{"terminal_id":"h1","keys":["y\r"]}`,
		`{"terminal_id":"h1","keys":["y","Enter"],"literal":true}`,
		`{"terminal_id":"b1","keys":["y","Enter"]}`,
		`{"terminal_id":"h1","keys":["y\" \"Enter"]}`,
		`{"terminal_id":"h1","keys":["y Enter"]}`,
	} {
		need, err := p.Evaluate(context.Background(), c, "send_keys", args)
		if err != nil {
			t.Fatal(err)
		}
		if prev, dup := calls[need.Call]; dup {
			t.Errorf("%s and %s are the same call %q", prev, args, need.Call)
		}
		calls[need.Call] = args
	}
	a, _ := p.Evaluate(context.Background(), c, "close_terminal", `{"terminal_id":"h1"}`)
	b, _ := p.Evaluate(context.Background(), c, "close_terminal", `{"terminal_id":"b1"}`)
	if a.Call == b.Call || calls[a.Call] != "" {
		t.Errorf("close_terminal calls %q, %q are not their own", a.Call, b.Call)
	}
}
