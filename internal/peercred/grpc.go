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
	// Identity is what the server's identify function made of the peer at
	// connection time (e.g. which tab it runs in); nil without one.
	Identity any
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
// identify, if not nil, runs once per connection while the peer's pidfd is
// still open — its result is checked against pid reuse before it is kept —
// and is available to handlers as AuthInfo.Identity.
func TransportCredentials(identify func(Creds) any) credentials.TransportCredentials {
	return transport{identify: identify}
}

type transport struct {
	identify func(Creds) any
}

// IdentityFromContext returns what identify made of the calling
// connection's peer.
func IdentityFromContext(ctx context.Context) (any, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil, false
	}
	ai, ok := p.AuthInfo.(AuthInfo)
	return ai.Identity, ok && ai.Unix
}

func (transport) ClientHandshake(_ context.Context, _ string, c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return c, AuthInfo{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}, nil
}

func (t transport) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	info := AuthInfo{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}
	if _, ok := c.LocalAddr().(*net.UnixAddr); !ok {
		return c, info, nil
	}
	creds, err := FromConn(c)
	if err != nil {
		return nil, nil, err
	}
	if t.identify != nil {
		info.Identity = t.identify(creds)
		// What identify read from /proc was about the peer only if the
		// peer still runs: otherwise its pid may name another process.
		if err := creds.Alive(); err != nil {
			creds.Close()
			return nil, nil, err
		}
	}
	creds.Close() // kept without its pidfd: a stored fd number could be reused
	info.Unix, info.Creds = true, creds
	return c, info, nil
}

func (transport) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "peercred"}
}

func (t transport) Clone() credentials.TransportCredentials { return t }

func (transport) OverrideServerName(string) error { return nil }
