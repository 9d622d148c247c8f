package daemon

import (
	"context"
	"fmt"
	"net"
	"os"

	"google.golang.org/grpc/credentials"

	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/peercred"
)

// serverCheck is the client side of a daemon connection over a Unix
// socket: it checks who serves the socket before a single request goes
// out.
//
// Why: sockets live in a 0700 directory, which keeps other users out but
// not an agent running as the human's user. Such an agent could move a
// daemon's socket aside and listen in its place — a fake authz that says
// yes to everything. Its server would run inside Phantom, though, and the
// kernel says so: the listening process's credentials (SO_PEERCRED on the
// client side names the process that listened) lead through its parents
// to the instance's terminald. A daemon is never inside Phantom.
type serverCheck struct {
	sock string
	tree lineage.Tree
}

func (s serverCheck) ClientHandshake(_ context.Context, _ string, c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	info := peercred.AuthInfo{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}
	creds, err := peercred.FromConn(c)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("daemon socket %s: %w", s.sock, err)
	}
	defer creds.Close()
	if creds.UID != os.Getuid() {
		c.Close()
		return nil, nil, fmt.Errorf("daemon socket %s is served by uid %d, not %d", s.sock, creds.UID, os.Getuid())
	}
	if creds.PID > 0 {
		p, err := s.tree.Locate(creds.PID)
		if err == nil && p.Inside {
			err = fmt.Errorf("it is served by process %d, which runs inside Phantom (was the socket replaced?)", creds.PID)
		}
		if err == nil {
			err = creds.Alive()
		}
		if err != nil {
			c.Close()
			return nil, nil, fmt.Errorf("refusing daemon socket %s: %w", s.sock, err)
		}
	}
	info.Unix, info.Creds = true, creds
	return c, info, nil
}

func (serverCheck) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, fmt.Errorf("serverCheck is client-side only")
}

func (serverCheck) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "peercred"}
}

func (s serverCheck) Clone() credentials.TransportCredentials { return s }

func (serverCheck) OverrideServerName(string) error { return nil }
