package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestExplain(t *testing.T) {
	root := &cobra.Command{Use: "phantom"}
	read := &cobra.Command{Use: "read TAB"}
	root.AddCommand(read)
	if err := read.Flags().Parse([]string{"t9"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		err   error
		usage bool
		msg   string
		code  int
	}{
		{"not found", rpcError(status.Error(codes.NotFound, `tab "t9": not found`)), false,
			`read t9: tab "t9" not found — phantom ls lists the tabs`, exitNotFound},
		{"window not found", status.Error(codes.NotFound, `window "w9": not found`), false,
			`read t9: window "w9" not found — phantom window ls lists the windows`, exitNotFound},
		{"one violation", status.Error(codes.InvalidArgument, "validation error: lines: must be at most 5"), false,
			"read t9: lines must be at most 5 — see phantom read --help", exitUsage},
		{"violations", status.Error(codes.InvalidArgument, "validation error:\n - terminal_id: value is required\n - lines: must be at most 5"), false,
			"read t9: terminal id value is required; lines must be at most 5 — see phantom read --help", exitUsage},
		{"refused", status.Error(codes.PermissionDenied, "read_output from inside Phantom (in Phantom tab t2): the human said no"), false,
			"read t9: refused: read_output from inside Phantom (in Phantom tab t2): the human said no", exitRefused},
		{"not running", &notRunningError{daemon: "terminald", addr: "unix:///x.sock"}, false,
			"read t9: Phantom is not running: terminald does not answer at unix:///x.sock — start it with phantom up", exitNotRunning},
		{"wrapped status", fmt.Errorf("lost terminald: %w", status.Error(codes.Unavailable, "gone")), false,
			"read t9: lost terminald: gone — check phantom status; start Phantom with phantom up", exitNotRunning},
		{"cobra arguments", errors.New("accepts 1 arg(s), received 0"), true,
			"read t9: takes 1 argument, got 0 — see phantom read --help", exitUsage},
		{"own usage error", usageError("the command must come after --", "phantom run TAB -- COMMAND"), false,
			"read t9: the command must come after -- — phantom run TAB -- COMMAND", exitUsage},
		{"a command's own error", errors.New("cannot write the tab list: disk full"), false, "cannot write the tab list: disk full", exitFailure},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg, code := explain(tc.err, read, tc.usage)
			if msg != tc.msg || code != tc.code {
				t.Errorf("explain = %q, %d\nwant     %q, %d", msg, code, tc.msg, tc.code)
			}
		})
	}
}
