package guard

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestAuthorizeAs: the human's own terminal passes; everyone else is put
// to authz (here unreachable, so refused) or refused outright; nothing
// unplaced passes.
func TestAuthorizeAs(t *testing.T) {
	g := New(terminalv1.File_phantom_terminal_v1_terminal_proto, Options{
		AuthzAddr: "unix://" + filepath.Join(t.TempDir(), "no-authz.sock"),
	})
	t.Cleanup(g.Close)
	req := &terminalv1.RunCommandRequest{TerminalId: "t1", Command: "ls␍"}
	tests := []struct {
		name   string
		caller *Caller
		want   codes.Code
	}{
		{"not placed", nil, codes.PermissionDenied},
		{"the human's terminal", &Caller{PID: 10}, codes.OK},
		{"for an agent, from outside", &Caller{PID: 10, ForAgent: true}, codes.PermissionDenied},
		{"inside a tab, authz unreachable", &Caller{Inside: true, ForAgent: true, PID: 11, TabID: "t2"}, codes.Unavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if tc.caller != nil {
				ctx = NewContext(ctx, *tc.caller)
			}
			if got := status.Code(g.AuthorizeAs(ctx, "run_command", req)); got != tc.want {
				t.Errorf("AuthorizeAs: %v, want %v", got, tc.want)
			}
		})
	}
}
