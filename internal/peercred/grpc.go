package peercred

import (
	"context"
	"net"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// AuthInfo carries a gRPC connection's peer credentials; Get them from a
// call's context with FromContext. Only Unix-socket peers have them: a TCP
// peer (the compose stack) has none.
type AuthInfo struct {
	credentials.CommonAuthInfo
	// Unix is true when the peer came over a Unix socket and Creds are set.
	Unix bool
	// Creds are the peer's credentials read once, at connection time. The
	// pidfd is closed; use the pid with /proc and treat it as a snapshot.
	Creds Creds
}

// AuthType names the scheme.
func (AuthInfo) AuthType() string { return "peercred" }

// FromContext returns the calling connection's peer credentials, if it
// came over a Unix socket.
func FromContext(ctx context.Context) (Creds, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return Creds{}, false
	}
	ai, ok := p.AuthInfo.(AuthInfo)
	return ai.Creds, ok && ai.Unix
}

// TransportCredentials returns server credentials that add no security
// (the socket's 0700 directory does that) but record each Unix-socket
// connection's peer credentials once, so handlers can ask who called.
func TransportCredentials() credentials.TransportCredentials { return transport{} }

type transport struct{}

func (transport) ClientHandshake(_ context.Context, _ string, c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return c, AuthInfo{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}, nil
}

func (transport) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if _, ok := c.LocalAddr().(*net.UnixAddr); !ok {
		return c, AuthInfo{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}, nil
	}
	creds, err := FromConn(c)
	if err != nil {
		return nil, nil, err
	}
	creds.Close()
	return c, AuthInfo{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}, Unix: true, Creds: creds}, nil
}

func (transport) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "peercred"}
}

func (t transport) Clone() credentials.TransportCredentials { return t }

func (transport) OverrideServerName(string) error { return nil }
