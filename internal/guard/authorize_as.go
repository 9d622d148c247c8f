package guard

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// AuthorizeAs puts a call of a method that is not itself a tool, but is as
// sensitive as one, to authz as that tool: req is the tool's own request,
// which decides reach and fills the sheet. The method must be in
// Options.Open, so that the guard lets callers inside Phantom reach its
// handler, and the handler must call AuthorizeAs before acting.
//
// The human's own terminal and Phantom's daemons pass. A call made for
// an agent from outside Phantom is refused: only the method's own tool
// could carry one, and the gateway checks tools itself.
func (g *Guard) AuthorizeAs(ctx context.Context, tool string, req proto.Message) error {
	c, ok := CallerFrom(ctx)
	switch {
	case !ok:
		return status.Errorf(codes.PermissionDenied, "%s refused: the caller was not placed", tool)
	case c.Inside:
		return g.authorize(ctx, c, tool, req)
	case c.ForAgent:
		return status.Errorf(codes.PermissionDenied, "%s refused: this method is the human's, not an agent tool", tool)
	}
	return nil
}
