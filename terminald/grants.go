package terminald

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"google.golang.org/grpc/status"

	"github.com/phantom-dev/phantom/authz/audit"
	"github.com/phantom-dev/phantom/internal/toolreg"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	"github.com/phantom-dev/phantom/terminald/attach"
)

// grantsRelay serves attach's grants view (attach.Grants): it lists and
// revokes grants over the sheet watcher's connection to authz, and reads
// the audit log's last decisions from the file authz writes in the state
// directory, as `phantom audit` does. terminald runs outside every tab and
// attach is refused to processes inside one, so authz takes these
// revocations as the human's; each names the attach client it was relayed
// for, for the audit log.
type grantsRelay struct {
	az        authzv1.AuthzServiceClient
	auditPath string
	tail      int64 // how much of a log file's end to read; auditTail if 0
}

// List lists the standing grants and the once grants of live connections.
func (g grantsRelay) List(ctx context.Context) ([]attach.GrantInfo, error) {
	resp, err := g.az.ListGrants(ctx, &authzv1.ListGrantsRequest{})
	if err != nil {
		return nil, plainError(err)
	}
	var out []attach.GrantInfo
	for _, gr := range resp.GetGrants() {
		out = append(out, attach.GrantInfo{
			ID: gr.GetId(), Client: gr.GetClient(), Program: gr.GetProgram(),
			Capability: toolreg.CapabilityName(gr.GetCapability()), Scope: fromScope(gr.GetScope()),
			Project: gr.GetProject(), Always: gr.GetAlways(), Pending: gr.GetPending(), Call: gr.GetCall(),
		})
	}
	return out, nil
}

// Revoke revokes grant id for the attach client attach.ClientPID names.
func (g grantsRelay) Revoke(ctx context.Context, id string) (string, error) {
	resp, err := g.az.RevokeGrant(ctx, &authzv1.RevokeGrantRequest{GrantId: id, RelayedForPid: int32(attach.ClientPID(ctx))})
	if err != nil {
		return "", plainError(err)
	}
	if fe := resp.GetFileError(); fe != "" {
		return "the grants file could not be updated (" + fe + "): a restart of authz would bring it back until it is; phantom status", nil
	}
	return "", nil
}

// decisionEvents are the audit log's events the view lists, in words.
var decisionEvents = map[string]string{
	audit.Allowed:      "allowed",
	audit.Denied:       "denied",
	audit.TimedOut:     "timed out",
	audit.TurnedAway:   "turned away",
	audit.Refused:      "refused",
	audit.Withdrawn:    "withdrawn",
	audit.GrantRevoked: "revoked",
}

// auditTail is how much of the end of a log file the view reads: the
// view reloads whenever a sheet or a grant changes, and a whole file (up
// to audit.DefaultMaxSize) would cost terminald a parse of megabytes each
// time. phantom audit reads it all.
const auditTail = 1 << 20

// Decisions reads the last n decisions from the end of the audit log,
// newest first, going on to the rotated file before it only when the
// newer one was read whole and held fewer than n.
func (g grantsRelay) Decisions(ctx context.Context, n int) ([]attach.AuditDecision, error) {
	files := audit.Files(g.auditPath)
	tail := g.tail
	if tail <= 0 {
		tail = auditTail
	}
	var out []attach.AuditDecision
	for _, name := range slices.Backward(files) {
		if len(out) >= n || ctx.Err() != nil {
			break
		}
		entries, whole, err := readAuditTail(name, tail)
		if err != nil {
			return out, err
		}
		for _, e := range slices.Backward(entries) {
			if len(out) >= n {
				break
			}
			if d, ok := toDecisionLine(e); ok {
				out = append(out, d)
			}
		}
		if !whole {
			break // an older file would leave a gap
		}
	}
	return out, nil
}

// readAuditTail reads the entries of the last max bytes of one file of
// the log (from the first whole line), and whether that was the whole
// file; a file rotated away meanwhile holds nothing. A long text written
// by reference to a line before the tail stays empty (see audit.Read).
func readAuditTail(name string, max int64) ([]audit.Entry, bool, error) {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read the audit log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("read the audit log %s: %w", name, err)
	}
	off := st.Size() - max
	if off < 0 {
		off = 0
	}
	r := bufio.NewReader(io.NewSectionReader(f, off, st.Size()-off))
	// The tail starts inside a line: skip to the end of it, however long.
	for off > 0 {
		_, err := r.ReadSlice('\n')
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, false, nil // no whole line in the tail
		}
	}
	entries, _, err := audit.Read(r, time.Time{})
	if err != nil {
		return nil, false, fmt.Errorf("read the audit log %s: %w", name, err)
	}
	return entries, off == 0, nil
}

// toDecisionLine is e as the view lists it, if it is a decision.
func toDecisionLine(e audit.Entry) (attach.AuditDecision, bool) {
	outcome, ok := decisionEvents[e.Event]
	if !ok {
		return attach.AuditDecision{}, false
	}
	d := attach.AuditDecision{Time: e.Time, Outcome: outcome, Client: e.Client, Tab: e.Tab, Tool: e.Tool,
		Target: e.Target, Repeated: e.Repeated}
	switch {
	case e.Event == audit.GrantRevoked:
		d.What = "grant " + e.Grant
		if e.Capability != "" {
			d.What += " (" + e.Capability + ", scope " + e.Scope + ")"
		}
	case e.Command != "":
		d.What = e.Command
	case e.CommandSHA256 != "":
		d.What = "(a long command: phantom audit shows it)"
	case e.Subject != "":
		d.What = e.Subject
	case e.SubjectSHA256 != "":
		d.What = "(a long text: phantom audit shows it)"
	case e.Reason != "":
		d.What = e.Reason
	}
	return d, true
}

// plainError is err's message without gRPC's "rpc error: code = …".
func plainError(err error) error {
	if st, ok := status.FromError(err); ok {
		return errors.New(st.Message())
	}
	return err
}
