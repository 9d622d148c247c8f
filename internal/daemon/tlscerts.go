package daemon

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// CertValidity is how long `phantom certs` certificates last. A year:
// long enough for a development stack, short enough that a lost folder
// does not stay a key to it for ever.
const CertValidity = 365 * 24 * time.Hour

// validName is what an identity may be called: it becomes a folder name, a
// DNS name and a URI.
var validName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)

// CertRequest says which certificates WriteCerts makes.
type CertRequest struct {
	// Dir receives ca.crt and <name>/tls.{crt,key} per identity.
	Dir string
	// Daemons get server and client certificates naming them, with their
	// name, localhost and the loopback addresses as host names (the
	// compose service is called as the daemon).
	Daemons []string
	// Clients get client-only certificates ("human" for the human's CLI).
	Clients []string
	// Hosts are extra host names or IP addresses for every daemon
	// certificate, e.g. a machine's name when daemons are reached across
	// machines.
	Hosts []string
}

// WriteCerts makes a fresh CA and one certificate per identity, signed by
// it, into r.Dir. The CA's private key is never written: to add or renew
// an identity, make the whole set again, which also retires every
// certificate of the old CA.
func WriteCerts(r CertRequest) error {
	for _, n := range append(append([]string{}, r.Daemons...), r.Clients...) {
		if !validName.MatchString(n) {
			return fmt.Errorf("certificate name %q: want lower-case letters, digits and dashes, starting with a letter", n)
		}
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return fmt.Errorf("create certificate folder %s: %w", r.Dir, err)
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate the CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "Phantom CA", Organization: []string{"Phantom"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(CertValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("sign the CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fmt.Errorf("read back the CA certificate: %w", err)
	}
	issue := func(name string, daemon bool) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return fmt.Errorf("generate the key of %s: %w", name, err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: serial(),
			Subject:      pkix.Name{CommonName: "phantom " + name, Organization: []string{"Phantom"}},
			URIs:         []*url.URL{{Scheme: IdentityScheme, Opaque: name}},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(CertValidity),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		if daemon {
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
			tmpl.DNSNames = []string{name, "localhost"}
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
			for _, h := range r.Hosts {
				if ip := net.ParseIP(h); ip != nil {
					tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
				} else {
					tmpl.DNSNames = append(tmpl.DNSNames, h)
				}
			}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return fmt.Errorf("sign the certificate of %s: %w", name, err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return fmt.Errorf("encode the key of %s: %w", name, err)
		}
		f := TLSFiles{Dir: r.Dir, Name: name}
		if err := os.MkdirAll(filepath.Dir(f.Cert()), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(f.Cert()), err)
		}
		if err := writePEM(f.Key(), "PRIVATE KEY", keyDER, 0o600); err != nil {
			return err
		}
		return writePEM(f.Cert(), "CERTIFICATE", der, 0o644)
	}
	for _, n := range r.Daemons {
		if err := issue(n, true); err != nil {
			return err
		}
	}
	for _, n := range r.Clients {
		if err := issue(n, false); err != nil {
			return err
		}
	}
	// The CA goes last: a folder with a ca.crt is a complete one.
	return writePEM(TLSFiles{Dir: r.Dir}.CA(), "CERTIFICATE", caDER, 0o644)
}

// serial is a random 128-bit serial number, as RFC 5280 recommends.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return n
}

// writePEM writes one PEM block to path atomically, with mode.
func writePEM(path, kind string, der []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	err = tmp.Chmod(mode)
	if err == nil {
		err = pem.Encode(tmp, &pem.Block{Type: kind, Bytes: der})
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
