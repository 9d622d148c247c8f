package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/peer"
)

// Daemons reached over TCP (the compose stack) authenticate both ways with
// mutual TLS: a small CA (`phantom certs`) signs one certificate per daemon
// and per human client, and each certificate names who holds it in a URI
// SAN "phantom:<name>". The TLS layer proves the peer holds a certificate
// of our CA; the guard (internal/guard) then checks that name against who
// may call which method. Over Unix sockets nothing changes: peer
// credentials and the process tree decide there.
const (
	// TLSDirEnv names the folder holding ca.crt and, per identity,
	// <name>/tls.crt and <name>/tls.key (what `phantom certs` writes).
	TLSDirEnv = "PHANTOM_TLS_DIR"
	// TLSNameEnv is whose certificate this process presents: a daemon's
	// name, or "human" for the human's CLI (the default).
	TLSNameEnv = "PHANTOM_TLS_NAME"
	// IdentityScheme is the URI scheme of the SAN that names a
	// certificate's holder: phantom:gateway, phantom:human.
	IdentityScheme = "phantom"
	// HumanIdentity is the name in the human's client certificate.
	HumanIdentity = "human"
)

// TLSFiles is where one identity's certificate, key and the CA are.
type TLSFiles struct {
	// Dir holds ca.crt and a folder per identity.
	Dir string
	// Name is the identity whose certificate is presented.
	Name string
}

// CA is the CA certificate every peer must chain to.
func (f TLSFiles) CA() string { return filepath.Join(f.Dir, "ca.crt") }

// Cert is the identity's certificate.
func (f TLSFiles) Cert() string { return filepath.Join(f.Dir, f.Name, "tls.crt") }

// Key is the identity's private key.
func (f TLSFiles) Key() string { return filepath.Join(f.Dir, f.Name, "tls.key") }

// TLSFromEnv reads PHANTOM_TLS_DIR and PHANTOM_TLS_NAME; ok is false when
// no folder is set, i.e. this process has no certificates.
func TLSFromEnv() (f TLSFiles, ok bool) {
	dir := os.Getenv(TLSDirEnv)
	if dir == "" {
		return TLSFiles{}, false
	}
	name := os.Getenv(TLSNameEnv)
	if name == "" {
		name = HumanIdentity
	}
	return TLSFiles{Dir: dir, Name: name}, true
}

// errNoTLS is why a TCP connection cannot be made or taken without
// certificates: TCP carries no peer credentials, so an unauthenticated
// TCP peer could be anyone on the network, an agent included.
var errNoTLS = fmt.Errorf("TCP connections between Phantom's daemons need mutual TLS, and this process has no certificates: "+
	"set %s to a folder made by `phantom certs` (and %s to whose certificate to use)", TLSDirEnv, TLSNameEnv)

// load reads the identity's key pair and the CA pool.
func (f TLSFiles) load() (tls.Certificate, *x509.CertPool, error) {
	cert, err := tls.LoadX509KeyPair(f.Cert(), f.Key())
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("load the certificate of %q (%s, %s): %w", f.Name, f.Cert(), f.Key(), err)
	}
	pem, err := os.ReadFile(f.CA())
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("read the CA certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return tls.Certificate{}, nil, fmt.Errorf("CA certificate %s holds no PEM certificate", f.CA())
	}
	return cert, pool, nil
}

// ServerTLSConfig is the server side: our certificate, and a client
// certificate of our CA required from every peer.
func (f TLSFiles) ServerTLSConfig() (*tls.Config, error) {
	cert, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS13,
	}, nil
}

// ClientTLSConfig is the client side: our certificate, and the server's
// checked against our CA and the host name dialled (daemon certificates
// name their compose service, localhost and the loopback addresses).
func (f TLSFiles) ClientTLSConfig() (*tls.Config, error) {
	cert, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		MinVersion:   tls.VersionTLS13,
	}, nil
}

// clientTLS is what Dial uses for a tcp:// address.
func clientTLS() (credentials.TransportCredentials, error) {
	f, ok := TLSFromEnv()
	if !ok {
		return nil, errNoTLS
	}
	cfg, err := f.ClientTLSConfig()
	if err != nil {
		return nil, err
	}
	return credentials.NewTLS(cfg), nil
}

// ServerCredentials are a daemon server's transport credentials: a
// connection over a Unix socket (or an in-memory one, in tests) goes to
// unix — the guard's peer-credential check, or none when nil — and a TCP
// connection must complete mutual TLS with the certificates named by
// PHANTOM_TLS_DIR and PHANTOM_TLS_NAME. Without certificates every TCP
// connection is refused: TCP tells nothing about who connects.
func ServerCredentials(unix credentials.TransportCredentials) credentials.TransportCredentials {
	if unix == nil {
		unix = insecure.NewCredentials()
	}
	return &mixedCreds{unix: unix}
}

// mixedCreds picks the handshake by the connection's kind. The TLS
// configuration is read on the first TCP connection, so that a daemon
// serving only its Unix socket never needs certificates.
type mixedCreds struct {
	unix credentials.TransportCredentials

	once   sync.Once
	tls    credentials.TransportCredentials
	tlsErr error
}

func (m *mixedCreds) tcp() (credentials.TransportCredentials, error) {
	m.once.Do(func() {
		f, ok := TLSFromEnv()
		if !ok {
			m.tlsErr = errNoTLS
			return
		}
		cfg, err := f.ServerTLSConfig()
		if err != nil {
			m.tlsErr = err
			return
		}
		m.tls = credentials.NewTLS(cfg)
	})
	return m.tls, m.tlsErr
}

func (m *mixedCreds) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if _, ok := c.LocalAddr().(*net.TCPAddr); !ok {
		return m.unix.ServerHandshake(c)
	}
	t, err := m.tcp()
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("refusing TCP peer %s: %w", c.RemoteAddr(), err)
	}
	return t.ServerHandshake(c)
}

func (m *mixedCreds) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("daemon.ServerCredentials are server-side only")
}

// Info is the Unix side's, so that the Unix path reads exactly as
// before; each TCP connection's AuthInfo says TLS.
func (m *mixedCreds) Info() credentials.ProtocolInfo {
	return m.unix.Info()
}

func (m *mixedCreds) Clone() credentials.TransportCredentials {
	return &mixedCreds{unix: m.unix.Clone()}
}

func (m *mixedCreds) OverrideServerName(string) error { return nil }

// PeerIdentity returns the name in the calling peer's verified client
// certificate (its phantom: URI SAN). ok is false when the call did not
// come over TLS; name is "" when the certificate names no identity.
func PeerIdentity(ctx context.Context) (name string, ok bool) {
	p, found := peer.FromContext(ctx)
	if !found {
		return "", false
	}
	info, isTLS := p.AuthInfo.(credentials.TLSInfo)
	if !isTLS {
		return "", false
	}
	// Only a chain the handshake verified counts; with
	// RequireAndVerifyClientCert there always is one.
	if len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
		return "", true
	}
	return IdentityOf(info.State.VerifiedChains[0][0]), true
}

// IdentityOf is the holder a certificate names in its phantom: URI SAN,
// or "" when it names none (or more than one).
func IdentityOf(cert *x509.Certificate) string {
	name := ""
	for _, u := range cert.URIs {
		if u.Scheme != IdentityScheme {
			continue
		}
		if name != "" || u.Opaque == "" {
			return ""
		}
		name = u.Opaque
	}
	return name
}
