package daemon

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/phantom-dev/phantom/internal/paths"
)

// Endpoint is a parsed listen or dial address.
type Endpoint struct {
	// Network is "unix" or "tcp".
	Network string
	// Address is the socket path or host:port.
	Address string
}

// String formats the endpoint the way ParseAddr reads it.
func (e Endpoint) String() string {
	if e.Network == "unix" {
		return "unix://" + e.Address
	}
	return "tcp://" + e.Address
}

// Target is the endpoint as a grpc.NewClient target.
func (e Endpoint) Target() string {
	if e.Network == "unix" {
		return "unix://" + e.Address
	}
	return "passthrough:///" + e.Address
}

// ParseAddr reads "unix:///absolute/path" or "tcp://host:port".
func ParseAddr(addr string) (Endpoint, error) {
	switch {
	case strings.HasPrefix(addr, "unix://"):
		p := strings.TrimPrefix(addr, "unix://")
		if !filepath.IsAbs(p) {
			return Endpoint{}, fmt.Errorf("address %q: unix socket path must be absolute (unix:///path)", addr)
		}
		return Endpoint{Network: "unix", Address: filepath.Clean(p)}, nil
	case strings.HasPrefix(addr, "tcp://"):
		hp := strings.TrimPrefix(addr, "tcp://")
		if _, _, err := net.SplitHostPort(hp); err != nil {
			return Endpoint{}, fmt.Errorf("address %q: want tcp://host:port: %w", addr, err)
		}
		return Endpoint{Network: "tcp", Address: hp}, nil
	default:
		return Endpoint{}, fmt.Errorf("address %q: want unix:///path or tcp://host:port", addr)
	}
}

// Listen opens a listener on addr. A Unix socket's directory is created
// private (0700): the directory, not the socket file's mode, is what keeps
// other users out, since a socket's mode is subject to the umask at bind time
// and changing it afterwards leaves a window. A stale socket file left by a
// crashed daemon is replaced, but a live one is never stolen.
func Listen(addr string) (net.Listener, error) {
	ep, err := ParseAddr(addr)
	if err != nil {
		return nil, err
	}
	if ep.Network == "tcp" {
		return net.Listen("tcp", ep.Address)
	}
	if err := paths.EnsurePrivateDir(filepath.Dir(ep.Address)); err != nil {
		return nil, err
	}
	if err := removeStale(ep.Address); err != nil {
		return nil, err
	}
	lis, err := net.Listen("unix", ep.Address)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", ep.Address, err)
	}
	// Close removes the socket file only if it is still ours.
	lis.(*net.UnixListener).SetUnlinkOnClose(true)
	return lis, nil
}

// removeStale deletes path if it is a socket nobody answers on.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check socket %s: %w", path, err)
	}
	if fi.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("socket path %s exists and is not a socket", path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return fmt.Errorf("socket %s is in use by a running process", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("check socket %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}
