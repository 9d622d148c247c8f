package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/phantom-dev/phantom/internal/daemon"
)

// reconnectBackoff makes a connection to a restarted daemon come back
// within about a second: gRPC's default backoff grows to two minutes.
var reconnectBackoff = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
	MinConnectTimeout: time.Second,
}

// backend is the gateway's connection to one daemon, with the daemon's
// health as last reported by its grpc.health.v1 Watch stream.
type backend struct {
	name string
	addr string
	cc   *grpc.ClientConn
	// serving is true while the daemon reports SERVING.
	serving atomic.Bool
	logger  *slog.Logger
	// onHealth is the backends' onHealth.
	onHealth func(name string, serving bool)
}

// backends holds one connection per daemon, opened on first use and
// watched for health until close.
type backends struct {
	addr   func(name string) string
	logger *slog.Logger
	// onHealth, if set, hears every change of a backend's serving.
	onHealth func(name string, serving bool)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu sync.Mutex
	by map[string]*backend
}

func newBackends(addr func(string) string, logger *slog.Logger) *backends {
	ctx, cancel := context.WithCancel(context.Background())
	return &backends{addr: addr, logger: logger, ctx: ctx, cancel: cancel, by: map[string]*backend{}}
}

// get returns the backend of the named daemon, connecting and starting its
// health watch the first time.
func (bs *backends) get(name string) (*backend, error) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if b, ok := bs.by[name]; ok {
		return b, nil
	}
	if bs.ctx.Err() != nil {
		return nil, errors.New("the gateway is shutting down")
	}
	addr := bs.addr(name)
	cc, err := daemon.Dial(addr, grpc.WithConnectParams(reconnectBackoff))
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", name, err)
	}
	b := &backend{name: name, addr: addr, cc: cc, logger: bs.logger.With("backend", name), onHealth: bs.onHealth}
	bs.by[name] = b
	bs.wg.Add(1)
	go func() {
		defer bs.wg.Done()
		b.watch(bs.ctx)
	}()
	return b, nil
}

// close stops the health watches and closes every connection.
func (bs *backends) close() {
	bs.cancel()
	bs.wg.Wait()
	bs.mu.Lock()
	defer bs.mu.Unlock()
	for _, b := range bs.by {
		b.cc.Close()
	}
}

// watch follows the daemon's health until ctx is done. Client-side health
// checking does nothing under pick_first, so the gateway watches
// explicitly: a broken stream marks the daemon down, and the next stream
// (waiting for the connection to come back) marks it up again.
func (b *backend) watch(ctx context.Context) {
	hc := healthpb.NewHealthClient(b.cc)
	for ctx.Err() == nil {
		stream, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
		if err == nil {
			for {
				resp, rerr := stream.Recv()
				if rerr != nil {
					err = rerr
					break
				}
				b.setServing(resp.GetStatus() == healthpb.HealthCheckResponse_SERVING)
			}
		}
		b.setServing(false)
		if status.Code(err) == codes.Unimplemented {
			// No health service: treat the daemon as up and let calls fail.
			b.setServing(true)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (b *backend) setServing(up bool) {
	if b.serving.Swap(up) != up {
		if up {
			b.logger.Info("daemon is serving", "addr", b.addr)
		} else {
			b.logger.Warn("daemon is down", "addr", b.addr)
		}
		if b.onHealth != nil {
			b.onHealth(b.name, up)
		}
	}
}

// startGrace is how long a tool call waits for a daemon that is not
// connected yet: one still starting (just after `phantom up`) or
// restarting comes back within it, and the call goes through instead of
// failing with "not running".
const startGrace = 2 * time.Second

// ready waits, up to startGrace, for the connection to the daemon to be
// up. It returns at once when it is; a daemon that stays down lets the
// call fail as before.
func (b *backend) ready(ctx context.Context) {
	if b.cc.GetState() == connectivity.Ready {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, startGrace)
	defer cancel()
	b.cc.Connect()
	for s := b.cc.GetState(); s != connectivity.Ready; s = b.cc.GetState() {
		if !b.cc.WaitForStateChange(ctx, s) {
			return
		}
	}
}

// downError is the message a tool call gets while the daemon is down.
func (b *backend) downError() string {
	return fmt.Sprintf("%s is not running (it serves this tool; start it with `phantom up`); other tools still work", b.name)
}
