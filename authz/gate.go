package authz

import (
	"context"
	"fmt"
	"os"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/peercred"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

// TCPAnswersEnv, set to 1, lets callers over TCP answer sheets. TCP peers
// carry no credentials, so by default they may not: in the compose stack
// the human answers with `docker compose exec authz phantom sheet`, over
// authz's Unix socket inside its container.
const TCPAnswersEnv = "PHANTOM_AUTHZ_TCP_ANSWERS"

// insideOpen are authz's methods that processes inside Phantom may call:
// the policy table is no secret, and neither is whether the grants file
// and the audit log work (`phantom status` in a shell tab shows it; the
// files themselves are readable there anyway). Everything else — deciding calls,
// answering or listing sheets, listing or revoking grants, ending
// connections — is the human's or the daemons', and the guard refuses it
// to them.
var insideOpen = []string{authzv1.AuthzService_ListPolicy_FullMethodName, authzv1.AuthzService_GetStatus_FullMethodName}

// insideRefusals word the refusals a process inside Phantom gets.
var insideRefusals = map[string]string{
	authzv1.AuthzService_AnswerSheet_FullMethodName: "answering permission sheets is refused inside Phantom, where an agent could answer for itself; " +
		"answer from a terminal outside Phantom (phantom attach, phantom sheet)",
	authzv1.AuthzService_RevokeGrant_FullMethodName: "revoking grants is the human's: use phantom grants from a terminal outside Phantom",
	authzv1.AuthzService_AcceptGrant_FullMethodName: "accepting grants is the human's: use phantom grants accept from a terminal outside Phantom",
	authzv1.AuthzService_Authorize_FullMethodName:   "Authorize is for Phantom's daemons; an agent's tool calls are checked for it",
	authzv1.AuthzService_RecordEvent_FullMethodName: "RecordEvent is for Phantom's daemons, which report there what they did for agents; " +
		"the audit log is not written from inside Phantom",
}

// HumanGate decides who may answer a sheet: only a process of our user
// outside Phantom, as the guard placed it. Anything it cannot establish is
// refused.
func HumanGate(allowTCP bool) func(context.Context) error {
	return func(ctx context.Context) error {
		creds, unix := peercred.FromContext(ctx)
		if !unix {
			if allowTCP {
				return nil
			}
			return fmt.Errorf("answers over TCP are refused, since a TCP peer cannot be told apart from an agent "+
				"(answer over authz's Unix socket, or set %s=1 on authz): %w", TCPAnswersEnv, errdefs.ErrPermissionDenied)
		}
		c, ok := guard.CallerFrom(ctx)
		switch {
		case !ok:
			return fmt.Errorf("answer refused: the caller could not be placed: %w", errdefs.ErrPermissionDenied)
		case creds.UID != os.Getuid():
			return fmt.Errorf("answer refused: the caller runs as uid %d, not %d: %w", creds.UID, os.Getuid(), errdefs.ErrPermissionDenied)
		case c.Inside:
			return fmt.Errorf("answer refused: process %d runs inside Phantom, where an agent could answer for itself; "+
				"answer from a terminal outside Phantom (phantom sheet): %w", c.PID, errdefs.ErrPermissionDenied)
		}
		return nil
	}
}
