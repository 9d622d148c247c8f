// Package errdefs defines the kinds of domain error every Phantom daemon
// returns, so that the work beside each gRPC service can say what went wrong
// without knowing about gRPC, and the server chain can translate the kind to
// a status code in one place (see internal/daemon).
//
// Wrap a kind with context naming the input:
//
//	return fmt.Errorf("tab %q: %w", id, errdefs.ErrNotFound)
package errdefs

import "errors"

// The kinds. Each maps to exactly one gRPC code in internal/daemon.
var (
	// ErrInvalidArgument: the request is malformed; the message names the field.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrNotFound: a named object (tab, group, window) does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists: the object to create exists already.
	ErrAlreadyExists = errors.New("already exists")
	// ErrFailedPrecondition: the object is not in a state that allows the
	// operation (a busy tab, an exited program).
	ErrFailedPrecondition = errors.New("failed precondition")
	// ErrPermissionDenied: the caller may not do this.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrUnavailable: a resource the operation needs is gone for now.
	ErrUnavailable = errors.New("unavailable")
	// ErrResourceExhausted: a limit was reached (too many tabs).
	ErrResourceExhausted = errors.New("resource exhausted")
)

// Is reports whether err is of kind; a shorthand for errors.Is.
func Is(err, kind error) bool { return errors.Is(err, kind) }
