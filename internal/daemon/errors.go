package daemon

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// codeOf is the one table from domain error kinds to gRPC codes, shared by
// every daemon (etcd's v3rpc keeps a table like it). An error of no known
// kind is Internal: the daemon did not expect it.
var codeOf = []struct {
	kind error
	code codes.Code
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

// ToStatus translates a domain error into a gRPC status error, keeping its
// message. Errors that already carry a status pass through unchanged.
func ToStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	for _, e := range codeOf {
		if errors.Is(err, e.kind) {
			return status.Error(e.code, err.Error())
		}
	}
	return status.Error(codes.Internal, err.Error())
}

func unaryErrors(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	return resp, ToStatus(err)
}

func streamErrors(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return ToStatus(h(srv, ss))
}
