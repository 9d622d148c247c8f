package authz

import (
	"context"
	"fmt"
	"os"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/peercred"
	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/tabident"
)

// TCPAnswersEnv, set to 1, lets callers over TCP answer sheets. TCP peers
// carry no credentials, so by default they may not: in the compose stack
// the human answers with `docker compose exec authz phantom sheet`, over
// authz's Unix socket inside its container.
const TCPAnswersEnv = "PHANTOM_AUTHZ_TCP_ANSWERS"

// placement is where a connection's peer runs, worked out once when it
// connects (while its pidfd guards against pid reuse).
type placement struct {
	pid   int
	uid   int
	tabID string // the tab it runs in; "" outside every tab
	err   error  // why it could not be told
}

// Identify returns the peercred identify function: it finds which tab, if
// any, a connecting process runs in, from the tab-state files in tabStates.
func Identify(fs procfs.FS, tabStates string) func(peercred.Creds) any {
	return func(c peercred.Creds) any {
		p := placement{pid: c.PID, uid: c.UID}
		if c.PID <= 0 {
			return p
		}
		st, in, err := tabident.Find(fs, tabStates, c.PID)
		p.err = err
		if in {
			p.tabID = st.TabID
		}
		return p
	}
}

// HumanGate decides who may answer a sheet: only a process of our user
// outside every Phantom tab, as Identify placed it. Anything it cannot
// establish is refused.
func HumanGate(allowTCP bool) func(context.Context) error {
	return func(ctx context.Context) error {
		id, unix := peercred.IdentityFromContext(ctx)
		if !unix {
			if allowTCP {
				return nil
			}
			return fmt.Errorf("answers over TCP are refused, since a TCP peer cannot be told apart from an agent "+
				"(answer over authz's Unix socket, or set %s=1 on authz): %w", TCPAnswersEnv, errdefs.ErrPermissionDenied)
		}
		p, ok := id.(placement)
		switch {
		case !ok:
			return fmt.Errorf("answer refused: the caller could not be identified: %w", errdefs.ErrPermissionDenied)
		case p.pid <= 0:
			return fmt.Errorf("answer refused: the caller runs in another pid namespace: %w", errdefs.ErrPermissionDenied)
		case p.uid != os.Getuid():
			return fmt.Errorf("answer refused: the caller runs as uid %d, not %d: %w", p.uid, os.Getuid(), errdefs.ErrPermissionDenied)
		case p.err != nil:
			return fmt.Errorf("answer refused: cannot tell whether process %d runs inside a Phantom tab: %v: %w", p.pid, p.err, errdefs.ErrPermissionDenied)
		case p.tabID != "":
			return fmt.Errorf("answer refused: process %d runs inside a Phantom tab (%s), where an agent could answer for itself; "+
				"answer from a terminal outside Phantom (phantom sheet): %w", p.pid, p.tabID, errdefs.ErrPermissionDenied)
		}
		return nil
	}
}
