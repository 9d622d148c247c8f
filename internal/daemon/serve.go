package daemon

import (
	"context"
	"errors"
	"net"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// GracePeriod bounds how long Serve waits for calls in flight to finish once
// ctx is done before it cuts them off. It is short because streams never
// finish by themselves: another daemon's health watch or sheet watch stays
// open until the connection goes, and `phantom down` stops daemons one by one.
const GracePeriod = time.Second

// Serve marks every registered service SERVING and serves lis until ctx is
// done, then reports NOT_SERVING, stops accepting calls and waits up to
// GracePeriod for those in flight. Before it reports SERVING it writes the
// pid file WritePIDFileWhenServing asked for.
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	// The pid file first, so that whoever sees SERVING finds it.
	runServingHook()
	for name := range s.GRPC.GetServiceInfo() {
		s.Health.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
	s.Health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.logger.Info("serving", "addr", lis.Addr().String())

	errc := make(chan error, 1)
	go func() { errc <- s.GRPC.Serve(lis) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.Health.Shutdown()
	stopped := make(chan struct{})
	go func() { s.GRPC.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(GracePeriod):
		s.GRPC.Stop()
		<-stopped
	}
	if err := <-errc; err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	s.logger.Info("stopped")
	return nil
}
