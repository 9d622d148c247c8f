package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// writeTestCerts makes a CA with the daemons terminald and gateway and the
// client human in a temporary folder.
func writeTestCerts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteCerts(CertRequest{Dir: dir, Daemons: []string{"terminald", "gateway"}, Clients: []string{HumanIdentity}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// serveTLS starts a daemon server on 127.0.0.1 presenting name's
// certificate from dir, with a health service and an interceptor that
// records the caller's identity.
func serveTLS(t *testing.T, dir, name string, seen chan<- string) string {
	t.Helper()
	t.Setenv(TLSDirEnv, dir)
	t.Setenv(TLSNameEnv, name)
	record := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		id, ok := PeerIdentity(ctx)
		if !ok {
			id = "(not TLS)"
		}
		select {
		case seen <- id:
		default:
		}
		return h(ctx, req)
	}
	srv, err := New(name, slog.New(slog.NewTextHandler(io.Discard, nil)), grpc.ChainUnaryInterceptor(record))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lis) }()
	t.Cleanup(func() { cancel(); <-done })
	return lis.Addr().String()
}

// healthOver calls Check at addr with creds.
func healthOver(addr string, creds credentials.TransportCredentials) error {
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

// TestMutualTLS checks who gets through a daemon's TCP listener: a
// certificate of our CA gets through and is named; no certificate, a
// certificate of another CA, or a server name the certificate does not
// hold is refused.
func TestMutualTLS(t *testing.T) {
	dir := writeTestCerts(t)
	other := writeTestCerts(t) // another CA, same names
	seen := make(chan string, 1)
	addr := serveTLS(t, dir, "terminald", seen)
	_, port, _ := net.SplitHostPort(addr)

	clientCfg := func(certDir, name string) *tls.Config {
		cfg, err := TLSFiles{Dir: certDir, Name: name}.ClientTLSConfig()
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	noCert := clientCfg(dir, "human")
	noCert.Certificates = nil
	wrongName := clientCfg(dir, "human")
	wrongName.ServerName = "authz"
	otherCA := clientCfg(other, "human")
	otherCA.RootCAs = clientCfg(dir, "human").RootCAs // trusts our server, presents a foreign certificate

	tests := []struct {
		name    string
		addr    string
		cfg     *tls.Config
		want    string // identity the server saw
		wantErr string
	}{
		{name: "human", addr: addr, cfg: clientCfg(dir, "human"), want: "human"},
		{name: "gateway", addr: addr, cfg: clientCfg(dir, "gateway"), want: "gateway"},
		{name: "by localhost", addr: "localhost:" + port, cfg: clientCfg(dir, "gateway"), want: "gateway"},
		{name: "no client certificate", addr: addr, cfg: noCert, wantErr: "Unavailable"},
		{name: "certificate of another CA", addr: addr, cfg: otherCA, wantErr: "Unavailable"},
		{name: "server not the one named", addr: addr, cfg: wrongName, wantErr: "authz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := healthOver(tt.addr, credentials.NewTLS(tt.cfg))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("health = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("health: %v", err)
			}
			if got := <-seen; got != tt.want {
				t.Errorf("server saw %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPlainTCPRefused checks both ends refuse TCP without certificates:
// Dial says what to set, and a server without certificates drops a TLS
// client.
func TestPlainTCPRefused(t *testing.T) {
	t.Setenv(TLSDirEnv, "")
	if _, err := Dial("tcp://127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), TLSDirEnv) {
		t.Errorf("Dial without certificates = %v, want an error naming %s", err, TLSDirEnv)
	}
	srv, err := New("x", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lis) }()
	defer func() { cancel(); <-done }()
	dir := writeTestCerts(t)
	cfg, err := TLSFiles{Dir: dir, Name: "gateway"}.ClientTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.InsecureSkipVerify = true
	if err := healthOver(lis.Addr().String(), credentials.NewTLS(cfg)); err == nil {
		t.Error("a server without certificates answered over TCP")
	}
}

// TestIdentityOf checks the phantom: URI SAN is the identity, and that a
// certificate naming none or two names nobody.
func TestIdentityOf(t *testing.T) {
	dir := writeTestCerts(t)
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "gateway", "tls.crt"), filepath.Join(dir, "gateway", "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	leaf := cert.Leaf
	two := *leaf
	two.URIs = append(append(two.URIs[:0:0], leaf.URIs...), leaf.URIs...)
	none := *leaf
	none.URIs = nil
	tests := []struct {
		name string
		cert *x509.Certificate
		want string
	}{
		{"one phantom URI", leaf, "gateway"},
		{"two phantom URIs", &two, ""},
		{"no URI", &none, ""},
	}
	for _, tt := range tests {
		if got := IdentityOf(tt.cert); got != tt.want {
			t.Errorf("IdentityOf(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "human", "tls.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("human key: %v, mode %v; want 0600", err, fi.Mode())
	}
	if _, err := os.Stat(filepath.Join(dir, "ca.key")); err == nil {
		t.Error("the CA key was written; it must not be kept")
	}
}

// TestWriteCertsRefusesBadNames checks names become paths only when safe.
func TestWriteCertsRefusesBadNames(t *testing.T) {
	for _, n := range []string{"", "../x", "Gateway", "a b", "-x"} {
		err := WriteCerts(CertRequest{Dir: t.TempDir(), Clients: []string{n}})
		if err == nil || !strings.Contains(err.Error(), "certificate name") {
			t.Errorf("WriteCerts(%q) = %v, want a refusal", n, err)
		}
	}
}
