package terminald

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestAttachOverGRPC attaches over the real socket, types, detaches, and
// checks that the session left no goroutine behind in terminald.
func TestAttachOverGRPC(t *testing.T) {
	in := start(t, "/bin/bash")
	tab := in.create(t, &terminalv1.CreateTerminalRequest{})
	attachOnce := func() {
		sctx, cancel := context.WithCancel(ctx(t))
		defer cancel()
		stream, err := in.c.Attach(sctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&terminalv1.AttachRequest{Msg: &terminalv1.AttachRequest_Hello{Hello: &terminalv1.AttachHello{
			Target: tab.GetId(), Size: &terminalv1.AttachSize{Cols: 80, Rows: 25}, Term: "xterm-256color"}}}); err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&terminalv1.AttachRequest{Msg: &terminalv1.AttachRequest_Input{Input: []byte("echo at-$((40+2))\r")}}); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		for !strings.Contains(out.String(), "at-42") {
			r, err := stream.Recv()
			if err != nil {
				t.Fatalf("before the echo: %v; got %q", err, out.String())
			}
			out.Write(r.GetOutput())
		}
		if err := stream.Send(&terminalv1.AttachRequest{Msg: &terminalv1.AttachRequest_Input{Input: []byte("\x1cd")}}); err != nil {
			t.Fatal(err)
		}
		for {
			r, err := stream.Recv()
			if err != nil {
				t.Fatalf("no exit message: %v", err)
			}
			if e := r.GetExit(); e != nil {
				if !e.GetOk() || !strings.Contains(e.GetMessage(), "detached") {
					t.Fatalf("exit %v", e)
				}
				break
			}
		}
		stream.CloseSend()
		if _, err := stream.Recv(); err != io.EOF {
			t.Fatalf("after the exit message: %v, want EOF", err)
		}
	}
	attachOnce() // warm up the connection's own goroutines
	time.Sleep(200 * time.Millisecond)
	before := runtime.NumGoroutine()
	for range 3 {
		attachOnce()
	}
	eventually(t, "terminald's goroutines back to before", func() (bool, string) {
		n := runtime.NumGoroutine()
		return n <= before, fmt.Sprintf("%d goroutines, %d before", n, before)
	})
	// A hello that is not first is refused.
	stream, err := in.c.Attach(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	stream.Send(&terminalv1.AttachRequest{Msg: &terminalv1.AttachRequest_Input{Input: []byte("x")}})
	if _, err := stream.Recv(); err == nil || !strings.Contains(err.Error(), "hello") {
		t.Fatalf("attach without a hello: %v", err)
	}
}
