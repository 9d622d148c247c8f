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
// (serverCheck). The compose stack's TCP addresses stay on its private
// network.
func Dial(addr string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	ep, err := ParseAddr(addr)
	if err != nil {
		return nil, err
	}
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if ep.Network == "unix" {
		creds = serverCheck{sock: ep.Address, tree: lineage.BesideSocket(ep.Address)}
	}
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(creds)}, opts...)
	cc, err := grpc.NewClient(ep.Target(), opts...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return cc, nil
}
