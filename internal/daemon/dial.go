package daemon

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Dial connects to a daemon at addr (unix:///path or tcp://host:port). The
// connection is lazy: errors surface on the first call. Unix sockets live in
// a 0700 directory, so transport security adds nothing locally; the compose
// stack's TCP addresses stay on its private network.
func Dial(addr string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	ep, err := ParseAddr(addr)
	if err != nil {
		return nil, err
	}
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	cc, err := grpc.NewClient(ep.Target(), opts...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return cc, nil
}
