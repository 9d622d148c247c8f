// Package daemon is the one shared way to build a Phantom daemon: a gRPC
// server with a named interceptor chain (slog logging, domain-error
// translation, protovalidate request validation, panic recovery innermost),
// the grpc.health.v1 service, server reflection so grpcurl can list and call
// every method, a listener for unix:///path or tcp://host:port, and a
// graceful stop.
package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"buf.build/go/protovalidate"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	grpcvalidate "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/protovalidate"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
)

// Server is a daemon's gRPC server with its health service.
type Server struct {
	// GRPC is the server to register services on.
	GRPC *grpc.Server
	// Health reports SERVING for "" and every registered service once Serve
	// starts, and NOT_SERVING during shutdown.
	Health *health.Server

	name   string
	logger *slog.Logger
}

// New builds the server for the daemon called name. Register services on
// s.GRPC before calling Serve. It sends and receives messages of up to
// MaxMessageSize unless opts say otherwise.
func New(name string, logger *slog.Logger, opts ...grpc.ServerOption) (*Server, error) {
	validator, err := protovalidate.New()
	if err != nil {
		return nil, fmt.Errorf("daemon %s: build request validator: %w", name, err)
	}
	logger = logger.With("daemon", name)
	chain := interceptors{logger: logger, validator: validator}
	opts = append(append([]grpc.ServerOption{
		grpc.Creds(ServerCredentials(nil)), // TCP needs mutual TLS (tls.go); a guard's opts replace it with its own wrapped creds
		grpc.ChainUnaryInterceptor(chain.unary()...),
		grpc.ChainStreamInterceptor(chain.stream()...),
	}, serverSizeOptions()...), opts...)
	s := &Server{
		GRPC:   grpc.NewServer(opts...),
		Health: health.NewServer(),
		name:   name,
		logger: logger,
	}
	healthpb.RegisterHealthServer(s.GRPC, s.Health)
	reflection.Register(s.GRPC)
	return s, nil
}

// interceptors is the daemons' chain, outermost first. Recovery is innermost
// so that a panic in a handler becomes an Internal error that the outer
// interceptors still see and log.
type interceptors struct {
	logger    *slog.Logger
	validator protovalidate.Validator
}

func (c interceptors) unary() []grpc.UnaryServerInterceptor {
	return []grpc.UnaryServerInterceptor{
		logging.UnaryServerInterceptor(slogAdapter(c.logger), logOpts...),
		unaryErrors,
		grpcvalidate.UnaryServerInterceptor(c.validator),
		recovery.UnaryServerInterceptor(recovery.WithRecoveryHandlerContext(c.recovered)),
	}
}

func (c interceptors) stream() []grpc.StreamServerInterceptor {
	return []grpc.StreamServerInterceptor{
		logging.StreamServerInterceptor(slogAdapter(c.logger), logOpts...),
		streamErrors,
		grpcvalidate.StreamServerInterceptor(c.validator),
		recovery.StreamServerInterceptor(recovery.WithRecoveryHandlerContext(c.recovered)),
	}
}

func (c interceptors) recovered(ctx context.Context, p any) error {
	c.logger.ErrorContext(ctx, "panic in handler", "panic", p, "stack", string(debug.Stack()))
	return status.Errorf(codes.Internal, "internal error: %v", p)
}

// logOpts logs the end of every call (with its code and duration), not its
// start: a call per line keeps the log readable. Successful calls log at
// debug level: agents poll list_terminals many times a second, and a log
// write per call would cost every caller latency and fill the disk.
var logOpts = []logging.Option{
	logging.WithLogOnEvents(logging.FinishCall),
	logging.WithLevels(func(c codes.Code) logging.Level {
		if c == codes.OK {
			return logging.LevelDebug
		}
		return logging.DefaultServerCodeToLevel(c)
	}),
}

func slogAdapter(l *slog.Logger) logging.Logger {
	return logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		l.Log(ctx, slog.Level(lvl), msg, fields...)
	})
}
