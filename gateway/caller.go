package gateway

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// Request fields that carry the verified caller to a daemon. They are
// hidden from agents (the tool option's hidden_fields), so only the gateway
// sets them, from what the handshake proved — never from what an agent
// claimed.
const (
	callerTabField = "caller_tab_id"
	callerDirField = "caller_directory"
)

// fillCaller sets the caller fields msg has. The directory is the caller
// tab's current one, asked of terminald; outside any tab both stay empty.
func (c *conn) fillCaller(ctx context.Context, msg protoreflect.ProtoMessage) error {
	fields := msg.ProtoReflect().Descriptor().Fields()
	tabF, dirF := fields.ByName(callerTabField), fields.ByName(callerDirField)
	if (tabF == nil && dirF == nil) || c.peer.tabID() == "" {
		return nil
	}
	m := msg.ProtoReflect()
	if tabF != nil {
		m.Set(tabF, protoreflect.ValueOfString(c.peer.tabID()))
	}
	if dirF == nil {
		return nil
	}
	b, err := c.s.backends.get("terminald")
	if err != nil {
		return fmt.Errorf("find the caller's directory: %w", err)
	}
	// Only the caller's tab, computed now: the call costs the same however
	// many tabs there are, and the directory is the current one.
	list := &terminalv1.ListTerminalsResponse{}
	err = b.cc.Invoke(ctx, terminalv1.TerminalService_ListTerminals_FullMethodName,
		&terminalv1.ListTerminalsRequest{TerminalId: c.peer.tabID()}, list)
	switch {
	case status.Code(err) == codes.NotFound:
		return fmt.Errorf("the caller's tab %s is gone", c.peer.tabID())
	case err != nil:
		return fmt.Errorf("find the caller's directory: terminald: %w", err)
	}
	for _, t := range list.GetTerminals() {
		if t.GetId() == c.peer.tabID() {
			m.Set(dirF, protoreflect.ValueOfString(t.GetDirectory()))
			return nil
		}
	}
	return fmt.Errorf("the caller's tab %s is gone", c.peer.tabID())
}
