package authz

import (
	"context"
	"time"

	"github.com/phantom-dev/phantom/authz/policy"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// terminals lists tabs through terminald.
type terminals struct {
	c terminalv1.TerminalServiceClient
}

// Tabs asks terminald for every tab.
func (t terminals) Tabs(ctx context.Context) ([]policy.TabInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := t.c.ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
	if err != nil {
		return nil, err
	}
	out := make([]policy.TabInfo, 0, len(resp.GetTerminals()))
	for _, tm := range resp.GetTerminals() {
		out = append(out, tabInfo(tm))
	}
	return out, nil
}

// tabInfo is what the policy needs of one of terminald's tabs.
func tabInfo(tm *terminalv1.Terminal) policy.TabInfo {
	return policy.TabInfo{
		ID:              tm.GetId(),
		Title:           tm.GetTitle(),
		Directory:       tm.GetDirectory(),
		GroupID:         tm.GetGroupId(),
		Idle:            tm.GetIdle(),
		Exited:          tm.GetExited(),
		Foreground:      tm.GetForegroundProcess().GetName(),
		GroupSetByAgent: tm.GetGroupSetByAgent(),
		NameSetByAgent:  tm.GetNameSetByAgent(),
		Sandboxed:       tm.GetSandboxed(),
		OpenedBy:        tm.GetOpenedBy(),
		Project:         tm.GetProject(),
	}
}
