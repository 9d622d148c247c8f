package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/testenv"
)

// TestCerts runs `phantom certs` and `phantom health` as the compose stack
// uses them: the files each identity needs, refusals that say what is
// wrong.
func TestCerts(t *testing.T) {
	env := testenv.New(t)
	dir := filepath.Join(env.Home, "certs")
	tests := []struct {
		name    string
		args    []string
		env     []string
		wantErr string   // in stderr, for a failing run
		files   []string // under dir, for a good one
	}{
		{name: "defaults", args: []string{"certs", "--dir", dir},
			files: append([]string{"ca.crt", "human/tls.crt", "human/tls.key"}, daemonFiles()...)},
		{name: "more clients", args: []string{"certs", "--dir", dir, "--client", "human,ci", "--host", "phantom.example,10.0.0.7"},
			files: []string{"ci/tls.crt", "ci/tls.key", "gateway/tls.crt"}},
		{name: "no folder", args: []string{"certs"}, wantErr: "--dir"},
		{name: "bad client name", args: []string{"certs", "--dir", dir, "--client", "../x"}, wantErr: `certificate name "../x"`},
		{name: "health over TCP without certificates", args: []string{"health", "terminald", "--addr", "tcp://127.0.0.1:1"},
			wantErr: daemon.TLSDirEnv},
		{name: "health of a daemon that is not there", args: []string{"health", "terminald", "--addr", "tcp://127.0.0.1:1", "--timeout", "1s"},
			env: []string{daemon.TLSDirEnv + "=" + dir, daemon.TLSNameEnv + "=gateway"}, wantErr: "health check failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := *env
			e.Vars = append(append([]string{}, env.Vars...), tt.env...)
			r := phantom(t, &e, tt.args...)
			if tt.wantErr != "" {
				if r.code == 0 || !strings.Contains(r.stderr, tt.wantErr) {
					t.Fatalf("phantom %v: %v; want a failure saying %q", tt.args, r, tt.wantErr)
				}
				return
			}
			if r.code != 0 {
				t.Fatalf("phantom %v: %v", tt.args, r)
			}
			for _, f := range tt.files {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("phantom %v wrote no %s: %v", tt.args, f, err)
				}
			}
		})
	}
}

// daemonFiles are the key pairs of every daemon.
func daemonFiles() []string {
	var out []string
	for _, d := range paths.Daemons {
		out = append(out, d+"/tls.crt", d+"/tls.key")
	}
	return out
}
