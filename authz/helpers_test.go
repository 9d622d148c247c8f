package authz

import (
	"context"
	"os"

	"google.golang.org/grpc"

	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

// watchStream is a WatchSheets server stream that hands events to a channel.
type watchStream struct {
	grpc.ServerStream
	ctx context.Context
	ch  chan *authzv1.WatchSheetsResponse
}

func (w *watchStream) Send(ev *authzv1.WatchSheetsResponse) error { w.ch <- ev; return nil }
func (w *watchStream) Context() context.Context                   { return w.ctx }

func writeFileForTest(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }

func currentUID() int { return os.Getuid() }
