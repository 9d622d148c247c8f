package terminald

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/guard"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// Authorizer puts a call that is not itself a tool to authz as the tool
// whose permission it needs (guard.Guard.AuthorizeAs).
type Authorizer func(ctx context.Context, tool string, req proto.Message) error

// SetAuthorizer gives the service the guard's AuthorizeAs, which SendKeys
// needs for callers inside Phantom; without it they are refused.
func (s *Service) SetAuthorizer(a Authorizer) { s.authorizeAs = a }

// SendKeys types keys into a tab as the human's keyboard would. The
// human's own terminal types at once; a caller inside Phantom goes
// through the permission path of run_command (a sheet, unless a grant
// covers it), with the keys quoted as the command, so that the sheet
// shows exactly what would be typed, control keys included.
func (s *Service) SendKeys(ctx context.Context, r *terminalv1.SendKeysRequest) (*terminalv1.SendKeysResponse, error) {
	id := r.GetTerminalId()
	if err := s.authorizeKeys(ctx, id, r.GetKeys()); err != nil {
		return nil, err
	}
	if err := s.ws.Input(id, r.GetKeys()); err != nil {
		return nil, err
	}
	t, err := s.ws.Get(id)
	if err != nil {
		return nil, err
	}
	return &terminalv1.SendKeysResponse{Terminal: s.terminalFor(ctx, t, false)}, nil
}

// authorizeKeys lets the human's own terminal through and puts every
// other caller to authz as run_command. It fails closed: a caller the
// guard did not place, or no authorizer, is refused.
func (s *Service) authorizeKeys(ctx context.Context, tab string, keys []byte) error {
	if c, ok := guard.CallerFrom(ctx); ok && !c.Inside && !c.ForAgent {
		return nil
	}
	if s.authorizeAs == nil {
		return fmt.Errorf("typing keys into tab %s is refused: no permission check is available for callers inside Phantom: %w", tab, errdefs.ErrPermissionDenied)
	}
	return s.authorizeAs(ctx, "run_command", &terminalv1.RunCommandRequest{TerminalId: tab, Command: spellKeys(keys)})
}

// spellKeys writes keys as one line of printable characters, as
// run_command's rules want, that tells exactly what would be typed: each
// control character as its Unicode picture (Enter is ␍, Ctrl-C ␃, Escape
// ␛). Keys that hold such a picture as text, or anything else that is not
// plain text, or that start with a quote, are Go-quoted instead
// ("ls\r"), so that no spelling stands for two different keys.
func spellKeys(keys []byte) string {
	// A plain spelling never starts with a quote, so no plain spelling is
	// also a quoted one.
	if !utf8.Valid(keys) || bytes.HasPrefix(keys, []byte{'"'}) {
		return strconv.Quote(string(keys))
	}
	var b strings.Builder
	for _, r := range string(keys) {
		switch {
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune('\u2421')
		case r >= 0x2400 && r <= 0x243f, !unicode.IsPrint(r) && r != ' ':
			return strconv.Quote(string(keys))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// UpdateWindow renames a window.
func (s *Service) UpdateWindow(_ context.Context, r *terminalv1.UpdateWindowRequest) (*terminalv1.UpdateWindowResponse, error) {
	w, err := s.ws.RenameWindow(r.GetWindowId(), r.GetName())
	if err != nil {
		return nil, err
	}
	return &terminalv1.UpdateWindowResponse{Window: toWindow(w)}, nil
}
