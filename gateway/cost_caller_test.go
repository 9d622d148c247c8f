package gateway

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/phantom-dev/phantom/internal/guard"
	editorv1 "github.com/phantom-dev/phantom/proto/phantom/editor/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// filterTerminald answers ListTerminals for one tab when asked for one,
// as terminald does, or — old, when set — lists every tab whatever the
// request says, as a terminald from before the filter would.
type filterTerminald struct {
	terminalv1.UnimplementedTerminalServiceServer
	old  bool
	mu   sync.Mutex
	asks []string // terminal_id of each request
}

func (f *filterTerminald) ListTerminals(_ context.Context, r *terminalv1.ListTerminalsRequest) (*terminalv1.ListTerminalsResponse, error) {
	f.mu.Lock()
	f.asks = append(f.asks, r.GetTerminalId())
	f.mu.Unlock()
	all := []*terminalv1.Terminal{{Id: "t1", Directory: "/one"}, {Id: "t7", Directory: "/seven"}}
	if f.old || r.GetTerminalId() == "" {
		return &terminalv1.ListTerminalsResponse{Terminals: all}, nil
	}
	for _, t := range all {
		if t.GetId() == r.GetTerminalId() {
			return &terminalv1.ListTerminalsResponse{Terminals: []*terminalv1.Terminal{t}}, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "tab %s not found", r.GetTerminalId())
}

// TestFillCallerAsksForOneTab checks the gateway learns a caller's
// directory by asking terminald for the caller's tab alone, not the list
// of every tab, and still copes with a terminald that lists them all.
func TestFillCallerAsksForOneTab(t *testing.T) {
	for _, old := range []bool{false, true} {
		dir := t.TempDir()
		fake := &filterTerminald{old: old}
		lis, err := net.Listen("unix", filepath.Join(dir, "terminald.sock"))
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer()
		terminalv1.RegisterTerminalServiceServer(srv, fake)
		go srv.Serve(lis)
		bs := newBackends(func(n string) string { return "unix://" + dir + "/" + n + ".sock" }, slog.New(slog.DiscardHandler))
		c := &conn{s: &Server{backends: bs}}

		c.peer = peer{caller: guard.Caller{Inside: true, TabID: "t7"}}
		req := &editorv1.OpenFileRequest{Path: "main.go"}
		if err := c.fillCaller(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if req.GetCallerTabId() != "t7" || req.GetCallerDirectory() != "/seven" {
			t.Errorf("old=%v: caller tab %q directory %q, want t7 /seven", old, req.GetCallerTabId(), req.GetCallerDirectory())
		}

		c.peer = peer{caller: guard.Caller{Inside: true, TabID: "t9"}}
		err = c.fillCaller(context.Background(), &editorv1.OpenFileRequest{Path: "main.go"})
		if err == nil || !strings.Contains(err.Error(), "the caller's tab t9 is gone") {
			t.Errorf("old=%v: a closed caller tab: err = %v", old, err)
		}
		fake.mu.Lock()
		if len(fake.asks) != 2 || fake.asks[0] != "t7" || fake.asks[1] != "t9" {
			t.Errorf("old=%v: terminald was asked for %q, want the caller's tab each time", old, fake.asks)
		}
		fake.mu.Unlock()
		bs.close()
		srv.Stop()
	}
}
