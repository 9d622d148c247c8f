package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// callTimeout bounds one CLI call to a daemon.
const callTimeout = 10 * time.Second

// sheetWaitTimeout bounds a call from inside a tab, which authz may hold
// while a permission sheet waits (50 s by default).
const sheetWaitTimeout = 2 * time.Minute

// dialTerminald connects to terminald.
func dialTerminald() (terminalv1.TerminalServiceClient, func(), error) {
	l, err := paths.Default()
	if err != nil {
		return nil, nil, err
	}
	cc, err := dialDaemon(l, "terminald")
	if err != nil {
		return nil, nil, err
	}
	return terminalv1.NewTerminalServiceClient(cc), func() { cc.Close() }, nil
}

// withTerminald runs one call against terminald (see withDaemon).
func withTerminald(call func(context.Context, terminalv1.TerminalServiceClient) error) error {
	return withDaemon("terminald", terminalv1.NewTerminalServiceClient, call)
}

// withDaemon runs one call against the named daemon with a bounded
// deadline and reports a gRPC failure as a plain message.
func withDaemon[C any](name string, client func(grpc.ClientConnInterface) C, call func(context.Context, C) error) error {
	return withDaemonWaiting(name, 0, client, call)
}

// withDaemonWaiting is withDaemon for a call that may wait up to wait on
// its own (read --wait-for, run --wait): its deadline is wait longer, so
// that the daemon's own timeout answers first.
func withDaemonWaiting[C any](name string, wait time.Duration, client func(grpc.ClientConnInterface) C, call func(context.Context, C) error) error {
	l, err := paths.Default()
	if err != nil {
		return err
	}
	// No health check first, unlike dialDaemon: one round trip less for
	// every command. A call that could not connect says why instead.
	addr := l.DaemonAddr(name)
	cc, err := daemon.Dial(addr)
	if err != nil {
		return err
	}
	defer cc.Close()
	timeout := callTimeout
	if os.Getenv("PHANTOM_TAB_ID") != "" {
		// Inside a tab, a call may wait on a permission sheet the human
		// has up to authz's sheet timeout to answer.
		timeout = sheetWaitTimeout
	}
	timeout += wait
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err = call(ctx, client(cc))
	if status.Code(err) == codes.Unavailable && cc.GetState() != connectivity.Ready {
		return unreachable(name, addr, err)
	}
	return rpcError(err)
}

// dialDaemon connects to a daemon after checking it answers, so that "not
// running" is reported plainly instead of as a transport error.
func dialDaemon(l paths.Layout, name string) (*grpc.ClientConn, error) {
	addr := l.DaemonAddr(name)
	cc, err := daemon.Dial(addr)
	if err != nil {
		return nil, err
	}
	if _, err := health(cc, 2*time.Second); err != nil {
		cc.Close()
		return nil, unreachable(name, addr, err)
	}
	return cc, nil
}

// health asks a daemon's grpc.health.v1 service for its overall status.
func health(cc *grpc.ClientConn, timeout time.Duration) (healthpb.HealthCheckResponse_ServingStatus, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return healthpb.HealthCheckResponse_UNKNOWN, err
	}
	return resp.GetStatus(), nil
}

// rpcError turns a gRPC status into an error that reads as its plain
// message and still carries the status, so that main words it and picks
// the exit status from the code (clierr.go).
func rpcError(err error) error {
	if err == nil {
		return nil
	}
	if st, ok := status.FromError(err); ok {
		return &plainStatus{st: st}
	}
	return err
}

// plainStatus is a gRPC status whose Error is its message alone.
type plainStatus struct{ st *status.Status }

func (e *plainStatus) Error() string              { return e.st.Message() }
func (e *plainStatus) GRPCStatus() *status.Status { return e.st }

// printJSON prints a response as the --json flags do: proto field names, every field.
// printList prints resp as JSON when asJSON, else an aligned table: the
// header, then one row per entry, columns separated by tabs.
func printList(resp proto.Message, asJSON bool, header string, rows []string) error {
	if asJSON {
		return printJSON(resp)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, r)
	}
	return tw.Flush()
}

func printJSON(m proto.Message) error {
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true, Multiline: true}.Marshal(m)
	if err != nil {
		return err
	}
	fmt.Println(string(b))
	return nil
}
