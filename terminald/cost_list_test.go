package terminald

import (
	"testing"

	"google.golang.org/protobuf/proto"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// TestListCachesDecodeAsTheList checks that a list built from the caches
// (messages reused while a tab is unchanged, their encodings reused by
// message) reaches a gRPC client as the same list encoded afresh, before
// and after a tab changes.
func TestListCachesDecodeAsTheList(t *testing.T) {
	var terms termCache
	var wire wireCache
	tabs := []workspace.Terminal{
		{ID: "t1", Title: "bash", Directory: "/src", ForegroundName: "bash", ForegroundPID: 10, Idle: true, DevServerPorts: []uint16{3000}},
		{ID: "t2", Title: "vim é \"x\"", Directory: "/", ForegroundName: "vim", ForegroundPID: 11, Exited: true, ExitCode: 1},
	}
	check := func(what string) {
		t.Helper()
		b, err := proto.Marshal(wire.response(terms.convert(tabs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		var got terminalv1.ListTerminalsResponse
		if err := proto.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		want := &terminalv1.ListTerminalsResponse{}
		for _, tab := range tabs {
			want.Terminals = append(want.Terminals, toTerminal(tab))
		}
		if !proto.Equal(&got, want) {
			t.Errorf("%s: decoded\n%v\nwant\n%v", what, &got, want)
		}
	}
	check("first list")
	first := terms.convert(tabs, nil)[0]
	check("same tabs again")
	if terms.convert(tabs, nil)[0] != first {
		t.Error("an unchanged tab's message was not reused")
	}
	tabs[0].Directory, tabs[0].Idle = "/tmp", false
	check("after t1 changed")
	if terms.convert(tabs, nil)[0] == first {
		t.Error("a changed tab's message was reused")
	}
	tabs = tabs[1:]
	check("after t1 closed")
}
