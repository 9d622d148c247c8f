package guard

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/paths"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// locateTimeout bounds asking terminald where a process runs.
const locateTimeout = 5 * time.Second

// Tabs asks terminald which tab a process runs in: what the daemons other
// than terminald use as Options.TabOf. Only terminald knows which process
// is which tab's program.
type Tabs struct {
	cc *grpc.ClientConn
	tc terminalv1.TerminalServiceClient
}

// NewTabs connects lazily to terminald at addr.
func NewTabs(addr string) (*Tabs, error) {
	cc, err := daemon.Dial(addr)
	if err != nil {
		return nil, err
	}
	return &Tabs{cc: cc, tc: terminalv1.NewTerminalServiceClient(cc)}, nil
}

// TabsOn asks terminald over an existing connection, which stays the
// caller's to close.
func TabsOn(cc grpc.ClientConnInterface) *Tabs {
	return &Tabs{tc: terminalv1.NewTerminalServiceClient(cc)}
}

// TabOf implements Options.TabOf. The start time travels with the pid, so
// terminald answers about the same process the caller placed.
func (t *Tabs) TabOf(ctx context.Context, pid int, p lineage.Place) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, locateTimeout)
	defer cancel()
	resp, err := t.tc.LocateProcess(ctx, &terminalv1.LocateProcessRequest{Pid: int32(pid), StartTime: p.Self.StartTime})
	if err != nil {
		return "", fmt.Errorf("ask terminald: %w", err)
	}
	if !resp.GetInside() {
		return "", fmt.Errorf("terminald does not count process %d as inside it", pid)
	}
	return resp.GetTabId(), nil
}

// Close drops the connection NewTabs made.
func (t *Tabs) Close() {
	if t.cc != nil {
		t.cc.Close()
	}
}

// ForInstance makes the guard of a daemon other than terminald in the
// instance of layout: callers are placed in that instance's process tree,
// terminald names their tab, and authz at its address decides. opts gives
// the rest (Open, Refuse, ClientName). Close also drops the connection to
// terminald.
func ForInstance(layout paths.Layout, fd protoreflect.FileDescriptor, opts Options) (*Guard, error) {
	tabs, err := NewTabs(layout.DaemonAddr("terminald"))
	if err != nil {
		return nil, err
	}
	opts.Locate = lineage.Instance(layout).Locate
	opts.TabOf = tabs.TabOf
	opts.AuthzAddr = layout.DaemonAddr("authz")
	g := New(fd, opts)
	g.tabs = tabs
	return g, nil
}
