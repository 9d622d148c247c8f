package daemon

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// TestToStatus checks the one table from domain error kinds to gRPC codes:
// a kind wrapped with context maps to its code and keeps its whole message.
func TestToStatus(t *testing.T) {
	tests := []struct {
		kind error
		want codes.Code
	}{
		{errdefs.ErrInvalidArgument, codes.InvalidArgument},
		{errdefs.ErrNotFound, codes.NotFound},
		{errdefs.ErrAlreadyExists, codes.AlreadyExists},
		{errdefs.ErrFailedPrecondition, codes.FailedPrecondition},
		{errdefs.ErrPermissionDenied, codes.PermissionDenied},
		{errdefs.ErrUnavailable, codes.Unavailable},
		{errdefs.ErrResourceExhausted, codes.ResourceExhausted},
		{context.Canceled, codes.Canceled},
		{context.DeadlineExceeded, codes.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.want.String(), func(t *testing.T) {
			for _, err := range []error{
				tt.kind,
				fmt.Errorf("tab %q: %w", "t7", tt.kind),
				fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", tt.kind)),
				errors.Join(errors.New("first"), fmt.Errorf("second: %w", tt.kind)),
			} {
				st, ok := status.FromError(ToStatus(err))
				if !ok {
					t.Fatalf("ToStatus(%v) is not a status", err)
				}
				if st.Code() != tt.want {
					t.Errorf("ToStatus(%q) code = %v, want %v", err, st.Code(), tt.want)
				}
				if st.Message() != err.Error() {
					t.Errorf("ToStatus(%q) message = %q, want it kept", err, st.Message())
				}
			}
		})
	}
}

// TestToStatusOther checks nil, unknown errors and errors that already
// carry a status.
func TestToStatusOther(t *testing.T) {
	if err := ToStatus(nil); err != nil {
		t.Errorf("ToStatus(nil) = %v", err)
	}

	plain := errors.New("disk on fire")
	st, _ := status.FromError(ToStatus(plain))
	if st.Code() != codes.Internal || st.Message() != "disk on fire" {
		t.Errorf("plain error → %v %q, want Internal and the message", st.Code(), st.Message())
	}

	orig := status.Error(codes.Aborted, "try again")
	if got := ToStatus(orig); got != orig {
		t.Errorf("status error changed: %v", got)
	}
	// A status wrapping a domain error keeps its own code.
	wrapped := fmt.Errorf("context: %w", status.Error(codes.Unauthenticated, "who are you"))
	st, _ = status.FromError(ToStatus(wrapped))
	if st.Code() != codes.Unauthenticated {
		t.Errorf("wrapped status → %v, want Unauthenticated", st.Code())
	}
}
