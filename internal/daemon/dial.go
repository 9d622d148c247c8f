package daemon

import (
	"fmt"

	"github.com/phantom-dev/phantom/internal/lineage"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Dial connects to a daemon at addr (unix:///path or tcp://host:port). The
// connection is lazy: errors surface on the first call. Over a Unix socket
// the server is checked first: our uid, and not a process inside Phantom
// (serverCheck). Over TCP (the compose stack) both ends authenticate
// with mutual TLS (tls.go). Every call may send and receive messages of
// up to MaxMessageSize.
func Dial(addr string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	ep, err := ParseAddr(addr)
	if err != nil {
		return nil, err
	}
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if ep.Network == "unix" {
		creds = serverCheck{sock: ep.Address, tree: lineage.BesideSocket(ep.Address)}
	}
	if ep.Network == "tcp" { // mutual TLS, see tls.go
		if creds, err = clientTLS(); err != nil {
			return nil, fmt.Errorf("dial %s: %w", addr, err)
		}
	}
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(creds), clientSizeOptions()}, opts...)
	cc, err := grpc.NewClient(ep.Target(), opts...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return cc, nil
}
