package main

// One error format for every command, and the exit statuses it maps to.
// Commands return errors as they come (a daemon's gRPC status, a flag
// parser's complaint, a *cliError of their own); main hands them to
// explain, the one place that words them for the human:
//
//	phantom: what failed: why — what to do
//
// and chooses the exit status. No library or gRPC wording reaches the
// terminal: status codes, protovalidate's "validation error:", the
// daemons' kind suffixes (": not found") and strconv's parse errors are
// all translated here.

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Exit statuses shared by every command (exitHelp words them for
// `phantom --help`). Commands that pass on a program's status (run --wait,
// read --last-command) or time out (124) say so in their own help.
const (
	exitFailure    = 1 // anything else
	exitUsage      = 2 // a bad flag or argument
	exitNotRunning = 3 // Phantom (or the daemon the command needs) is not running
	exitNotFound   = 4 // no such tab, window or group
	exitRefused    = 5 // refused: the human denied the permission sheet, or Phantom's rules forbid it
)

// exitHelp is the exit statuses as `phantom --help` lists them.
const exitHelp = `Exit status:
  0  success
  1  any other failure
  2  usage: a bad flag or argument, or a name that fits several
  3  Phantom is not running (start it with phantom up)
  4  no such tab, window or group
  5  refused: the human denied the permission sheet, or Phantom forbids it
Some commands pass on another status: run --wait and read --last-command
exit with the command's, and a wait that runs out exits 124.`

// cliError is a failure worded for the human, with the status to exit
// with. what is filled in by explain from the command line when empty.
type cliError struct {
	code int
	what string // what failed, e.g. `read tab "x"`
	why  string // why, in plain words
	todo string // what to do about it; may be empty
	// whole is true for a command's own error, which says what failed
	// in its own words: explain adds nothing.
	whole bool
}

func (e *cliError) Error() string {
	var b strings.Builder
	if e.what != "" {
		b.WriteString(e.what + ": ")
	}
	b.WriteString(e.why)
	if e.todo != "" {
		b.WriteString(" — " + e.todo)
	}
	return b.String()
}

// usageError is a bad argument: exit status 2.
func usageError(why, todo string) error {
	return &cliError{code: exitUsage, why: why, todo: todo}
}

// notFoundError is a tab, window or group that does not exist: status 4.
func notFoundError(why, todo string) error {
	return &cliError{code: exitNotFound, why: why, todo: todo}
}

// notRunningError says the daemon a command needs does not answer.
type notRunningError struct {
	daemon, addr string
}

func (e *notRunningError) Error() string {
	return fmt.Sprintf("Phantom is not running: %s does not answer at %s", e.daemon, e.addr)
}

// unreachable words why the daemon name at addr did not answer, from
// the failed call's err: not running, or refused by our side's check of
// who serves the socket (internal/daemon's serverCheck), whose reason is
// kept.
func unreachable(name, addr string, err error) error {
	msg := status.Convert(err).Message()
	if _, why, ok := strings.Cut(msg, "handshake failed: "); ok {
		return &cliError{code: exitFailure, why: fmt.Sprintf("refusing to talk to %s at %s: %s", name, addr, strings.TrimSuffix(why, `"`)),
			todo: "run phantom down and phantom up from a terminal outside Phantom"}
	}
	return &notRunningError{daemon: name, addr: addr}
}

// explain words err as the one line main prints after "phantom: " and
// returns the exit status. cmd is the command that ran (nil when the
// command line itself was wrong), usage whether err came before the
// command started (cobra's parsing and argument checks).
func explain(err error, cmd *cobra.Command, usage bool) (string, int) {
	e := classify(err, usage)
	if e.what == "" && !e.whole && cmd != nil && cmd.HasParent() {
		e.what = commandLine(cmd)
	}
	if e.code == exitUsage && e.todo == "" && cmd != nil {
		e.todo = "see " + cmd.CommandPath() + " --help"
	}
	return e.Error(), e.code
}

// commandLine names what failed after the command's arguments, e.g.
// `read t9` for `phantom read -n 5 t9`.
func commandLine(cmd *cobra.Command) string {
	path := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	if args := cmd.Flags().Args(); len(args) > 0 {
		return path + " " + strings.Join(args, " ")
	}
	return path
}

// classify turns any error into a cliError.
func classify(err error, usage bool) *cliError {
	var ce *cliError
	if errors.As(err, &ce) {
		return ce
	}
	var nr *notRunningError
	if errors.As(err, &nr) {
		return &cliError{code: exitNotRunning, why: nr.Error(), todo: "start it with phantom up"}
	}
	var se interface {
		error
		GRPCStatus() *status.Status
	}
	if errors.As(err, &se) && se.GRPCStatus().Code() != codes.OK {
		e := fromStatus(se.GRPCStatus())
		// Keep what wrapped the status ("lost terminald: "), not the
		// status's own wording.
		if outer, inner := err.Error(), se.Error(); outer != inner && strings.HasSuffix(outer, inner) {
			e.why = strings.TrimSuffix(outer, inner) + e.why
		}
		return e
	}
	var inv *pflag.InvalidValueError
	if errors.As(err, &inv) {
		return &cliError{code: exitUsage, why: flagValueWhy(inv)}
	}
	var num *strconv.NumError
	if errors.As(err, &num) {
		return &cliError{code: exitUsage, why: fmt.Sprintf("%q is not a number", num.Num)}
	}
	if usage {
		// Cobra appends its suggestions on lines of their own.
		why, suggest, _ := strings.Cut(err.Error(), "\n\nDid you mean this?\n")
		e := &cliError{code: exitUsage, why: cobraWhy(why)}
		if s := strings.Fields(suggest); len(s) > 0 {
			e.todo = "did you mean " + strings.Join(s, " or ") + "?"
		}
		return e
	}
	return &cliError{code: exitFailure, why: err.Error(), whole: true}
}

// flagValueWhy words a flag given a value it cannot take.
func flagValueWhy(e *pflag.InvalidValueError) string {
	f := e.GetFlag()
	name := "--" + f.Name
	if f.Shorthand != "" {
		name = "-" + f.Shorthand + "/" + name
	}
	kind := "a valid value"
	switch f.Value.Type() {
	case "int", "int32", "int64", "uint", "uint32", "uint64":
		kind = "a whole number"
	case "duration":
		kind = "a duration such as 5s"
	case "bool":
		kind = "true or false"
	}
	return fmt.Sprintf("%s takes %s, not %q", name, kind, e.GetValue())
}

// cobraWhy rewords cobra's argument-count messages.
func cobraWhy(msg string) string {
	var want, got int
	if n, _ := fmt.Sscanf(msg, "accepts %d arg(s), received %d", &want, &got); n == 2 {
		return fmt.Sprintf("takes %s, got %d", args(want), got)
	}
	if n, _ := fmt.Sscanf(msg, "requires at least %d arg(s), only received %d", &want, &got); n == 2 {
		return fmt.Sprintf("takes at least %s, got %d", args(want), got)
	}
	if n, _ := fmt.Sscanf(msg, "accepts at most %d arg(s), received %d", &want, &got); n == 2 {
		return fmt.Sprintf("takes at most %s, got %d", args(want), got)
	}
	return msg
}

// args says "1 argument", "2 arguments".
func args(n int) string {
	return strconv.Itoa(n) + plural(n, " argument", " arguments")
}

// kindSuffixes are the domain kinds (internal/errdefs) daemons append to
// their messages; the exit status says the kind, so they are dropped.
var kindSuffixes = []string{": invalid argument", ": not found", ": already exists", ": failed precondition",
	": permission denied", ": unavailable", ": resource exhausted"}

// fromStatus words a daemon's gRPC status.
func fromStatus(st *status.Status) *cliError {
	msg, kind := st.Message(), ""
	for _, s := range kindSuffixes {
		if m, ok := strings.CutSuffix(msg, s); ok {
			msg, kind = m, s
		}
	}
	switch st.Code() {
	case codes.InvalidArgument:
		return &cliError{code: exitUsage, why: validationWhy(msg)}
	case codes.NotFound:
		if kind != "" { // `tab "t9"`: the daemons' way to name what is missing
			msg += " not found"
		}
		return &cliError{code: exitNotFound, why: msg, todo: listHint(msg)}
	case codes.PermissionDenied:
		if !strings.Contains(strings.ToLower(msg), "refused") {
			msg = "refused: " + msg
		}
		return &cliError{code: exitRefused, why: msg}
	case codes.Unavailable:
		return &cliError{code: exitNotRunning, why: msg, todo: "check phantom status; start Phantom with phantom up"}
	case codes.DeadlineExceeded:
		return &cliError{code: exitFailure, why: "no answer in time: " + msg}
	case codes.Canceled:
		return &cliError{code: exitFailure, why: "cancelled: " + msg}
	}
	return &cliError{code: exitFailure, why: msg}
}

// listHint says which command lists what msg found missing.
func listHint(msg string) string {
	switch {
	case strings.Contains(msg, "window"):
		return "phantom window ls lists the windows"
	case strings.Contains(msg, "group"):
		return "phantom group ls lists the groups"
	}
	return "phantom ls lists the tabs"
}

// validationWhy rewords protovalidate's violations ("validation error:
// lines: must be …", or one "\n - field: …" per violation) as
// "lines must be …; …".
func validationWhy(msg string) string {
	rest, ok := strings.CutPrefix(msg, "validation error:")
	if !ok {
		return msg
	}
	var parts []string
	for _, l := range strings.Split(rest, "\n") {
		l = strings.TrimPrefix(strings.TrimSpace(l), "- ")
		if l == "" {
			continue
		}
		if field, why, ok := strings.Cut(l, ": "); ok {
			l = strings.ReplaceAll(field, "_", " ") + " " + why
		}
		parts = append(parts, l)
	}
	return strings.Join(parts, "; ")
}

// noticeAfter is how long a call from inside a tab may take before the
// human is told it waits for them: a permission check that a grant
// answers takes milliseconds, a sheet takes a human.
const noticeAfter = 700 * time.Millisecond

// waitNotice, in a command run inside a Phantom tab, tells the human on
// stderr, once the call has taken noticeAfter, that it waits for them to
// allow what (computed then, as it may ask terminald for labels). Call
// the returned func when the call has ended. Outside Phantom no sheet is
// ever raised, and it does nothing.
func waitNotice(what func() string) (done func()) {
	if os.Getenv("PHANTOM_TAB_ID") == "" {
		return func() {}
	}
	t := time.AfterFunc(noticeAfter, func() {
		fmt.Fprintf(os.Stderr, "phantom: waiting for you to allow %s — answer the permission sheet outside Phantom: in phantom attach (prefix s) or with phantom sheet\n", what())
	})
	return func() { t.Stop() }
}
