package terminald

import (
	"context"
	"testing"

	"github.com/phantom-dev/phantom/internal/guard"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestCreateTerminalInCallersWindow: a tab opened for an agent (inside
// Phantom, or through the gateway) without a window or group lands in
// the window of the agent's tab; a window or group named wins, and the
// human outside Phantom gets the first window as before.
func TestCreateTerminalInCallersWindow(t *testing.T) {
	in := start(t, "/bin/sh")
	s := NewService(in.ws)
	ci := in.ws.CreateWindow("ci")
	agentTab := in.create(t, &terminalv1.CreateTerminalRequest{WindowId: ci.ID}).GetId()
	g, err := in.ws.CreateGroup("main-group", "", "w1")
	if err != nil {
		t.Fatal(err)
	}
	human := guard.NewContext(context.Background(), guard.Caller{})
	inside := guard.NewContext(context.Background(), guard.Caller{Inside: true, ForAgent: true, TabID: agentTab})
	relayed := guard.NewContext(context.Background(), guard.Caller{ForAgent: true, TabID: agentTab})
	for _, c := range []struct {
		name string
		ctx  context.Context
		req  *terminalv1.CreateTerminalRequest
		want string
	}{
		{"the human", human, &terminalv1.CreateTerminalRequest{}, "w1"},
		{"phantom new inside ci", inside, &terminalv1.CreateTerminalRequest{}, ci.ID},
		{"create_terminal from ci", relayed, &terminalv1.CreateTerminalRequest{}, ci.ID},
		{"a group of main", relayed, &terminalv1.CreateTerminalRequest{GroupId: g.ID}, "w1"},
		{"the human's --window", human, &terminalv1.CreateTerminalRequest{WindowId: ci.ID}, ci.ID},
	} {
		c.req.Directory = in.env.Home
		resp, err := s.CreateTerminal(c.ctx, c.req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := resp.GetTerminal().GetWindowId(); got != c.want {
			t.Errorf("%s: the tab opened in %s, want %s", c.name, got, c.want)
		}
	}
}
