package attach

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/terminald/workspace"
)

// keyGap is the pause between two keystrokes: 40 keys a second, faster
// than anyone types, slow enough that frame coalescing (FrameInterval,
// frameBurst) never holds an echo back.
const keyGap = 25 * time.Millisecond

// BenchmarkSessionKeystroke measures, in-process (no gRPC, no client
// process), the time from handing a session a typed character to the
// session sending the frame that shows its echo by bash.
func BenchmarkSessionKeystroke(b *testing.B) {
	ws := newWorkspace(b)
	if _, err := ws.Create(workspace.CreateSpec{Directory: b.TempDir()}); err != nil {
		b.Fatal(err)
	}
	in := make(chan Msg)
	frames := make(chan []byte, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, Options{Workspace: ws}, Hello{Cols: 80, Rows: 24}, in, func(p []byte) error {
			frames <- append([]byte(nil), p...)
			return nil
		})
	}()
	defer func() { cancel(); <-done }()
	quiet := func(d time.Duration) {
		for {
			select {
			case <-frames:
			case <-time.After(d):
				return
			}
		}
	}
	quiet(500 * time.Millisecond)
	var times []time.Duration
	b.ResetTimer()
	for i := range b.N {
		c := byte('a' + i%26)
		quiet(keyGap)
		start := time.Now()
		in <- Msg{Input: []byte{c}}
		for f := range frames {
			if bytes.Contains(f, []byte{' ', c, 0x1b}) {
				break
			}
		}
		times = append(times, time.Since(start))
		in <- Msg{Input: []byte{0x7f}}
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
}
