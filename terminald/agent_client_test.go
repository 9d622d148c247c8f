package terminald

import (
	"context"
	"testing"

	"github.com/phantom-dev/phantom/internal/guard"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// A tab opened for an agent (create_terminal through the gateway, the tab
// gitd or editord opens for it) carries the client name its tab records.
func TestCreateTerminalCarriesTheAgentsClient(t *testing.T) {
	in := start(t, "sh")
	withClient := in.create(t, &terminalv1.CreateTerminalRequest{Name: "agent"})
	if _, err := in.c.SetAgentState(ctx(t), &terminalv1.SetAgentStateRequest{
		TerminalId: withClient.GetId(), Client: "claude", State: terminalv1.AgentState_AGENT_STATE_IDLE,
	}); err != nil {
		t.Fatal(err)
	}
	without := in.create(t, &terminalv1.CreateTerminalRequest{Name: "plain"})
	tests := []struct {
		name string
		ctx  func(context.Context) context.Context
		want string
	}{
		{"for the agent of a tab with a client", func(c context.Context) context.Context { return guard.ForAgent(c, withClient.GetId()) }, "claude"},
		{"for an agent whose tab records none", func(c context.Context) context.Context { return guard.ForAgent(c, without.GetId()) }, ""},
		{"for an agent that left its tab", func(c context.Context) context.Context { return guard.ForAgent(c, "") }, ""},
		{"for the human", func(c context.Context) context.Context { return c }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := in.c.CreateTerminal(tt.ctx(ctx(t)), &terminalv1.CreateTerminalRequest{Directory: in.env.Home})
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.GetTerminal().GetAgentClient(); got != tt.want {
				t.Fatalf("agent_client = %q, want %q", got, tt.want)
			}
			if got := in.get(t, resp.GetTerminal().GetId()).GetAgentClient(); got != tt.want {
				t.Fatalf("listed agent_client = %q, want %q", got, tt.want)
			}
		})
	}
}
