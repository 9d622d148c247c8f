package daemon

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shortDir is a fresh directory with a short path: Unix socket paths are
// limited to 108 bytes and t.TempDir() embeds the (long) test name.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "dl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestParseAddr covers the two schemes and the ways an address is wrong.
func TestParseAddr(t *testing.T) {
	tests := []struct {
		addr string
		want Endpoint
		// wantErr is a substring of the error; "" means success.
		wantErr    string
		wantString string
		wantTarget string
	}{
		{addr: "unix:///run/x/terminald.sock", want: Endpoint{"unix", "/run/x/terminald.sock"},
			wantString: "unix:///run/x/terminald.sock", wantTarget: "unix:///run/x/terminald.sock"},
		{addr: "unix:///run//x/../y/t.sock", want: Endpoint{"unix", "/run/y/t.sock"},
			wantString: "unix:///run/y/t.sock", wantTarget: "unix:///run/y/t.sock"},
		{addr: "tcp://127.0.0.1:7070", want: Endpoint{"tcp", "127.0.0.1:7070"},
			wantString: "tcp://127.0.0.1:7070", wantTarget: "passthrough:///127.0.0.1:7070"},
		{addr: "tcp://terminald:7070", want: Endpoint{"tcp", "terminald:7070"},
			wantString: "tcp://terminald:7070", wantTarget: "passthrough:///terminald:7070"},
		{addr: "tcp://[::1]:0", want: Endpoint{"tcp", "[::1]:0"},
			wantString: "tcp://[::1]:0", wantTarget: "passthrough:///[::1]:0"},
		{addr: "tcp://:7070", want: Endpoint{"tcp", ":7070"},
			wantString: "tcp://:7070", wantTarget: "passthrough:///:7070"},

		{addr: "unix://relative/t.sock", wantErr: "must be absolute"},
		{addr: "unix://", wantErr: "must be absolute"},
		{addr: "tcp://127.0.0.1", wantErr: "host:port"},
		{addr: "tcp://", wantErr: "host:port"},
		{addr: "http://localhost:80", wantErr: "want unix:///path or tcp://host:port"},
		{addr: "/run/x/terminald.sock", wantErr: "want unix:///path or tcp://host:port"},
		{addr: "", wantErr: "want unix:///path or tcp://host:port"},
		{addr: "UNIX:///x.sock", wantErr: "want unix:///path or tcp://host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			got, err := ParseAddr(tt.addr)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseAddr(%q) = %+v, want an error", tt.addr, got)
				}
				if !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.addr) {
					t.Errorf("error %q does not contain %q and the address", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAddr(%q): %v", tt.addr, err)
			}
			if got != tt.want {
				t.Errorf("ParseAddr(%q) = %+v, want %+v", tt.addr, got, tt.want)
			}
			if s := got.String(); s != tt.wantString {
				t.Errorf("String() = %q, want %q", s, tt.wantString)
			}
			if s := got.Target(); s != tt.wantTarget {
				t.Errorf("Target() = %q, want %q", s, tt.wantTarget)
			}
			// String is what ParseAddr reads back.
			if again, err := ParseAddr(got.String()); err != nil || again != got {
				t.Errorf("ParseAddr(String()) = %+v, %v; want %+v", again, err, got)
			}
		})
	}
}

// TestDialBadAddr checks that Dial reports a malformed address at once.
func TestDialBadAddr(t *testing.T) {
	if cc, err := Dial("unix://rel.sock"); err == nil {
		cc.Close()
		t.Error("Dial accepted a relative unix address")
	}
}

// TestListenCreatesPrivateDir checks that Listen creates the socket's
// missing parent directories with mode 0700, and tightens an existing wider
// one, and that closing the listener removes the socket file.
func TestListenCreatesPrivateDir(t *testing.T) {
	for _, existing := range []bool{false, true} {
		name := "missing"
		if existing {
			name = "existing 0755"
		}
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(shortDir(t), "a", "run")
			if existing {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				os.Chmod(dir, 0o755)
			}
			sock := filepath.Join(dir, "d.sock")
			lis, err := Listen("unix://" + sock)
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if p := fi.Mode().Perm(); p != 0o700 {
				t.Errorf("socket directory mode = %v, want 0700", p)
			}
			fi, err = os.Lstat(sock)
			if err != nil || fi.Mode().Type() != os.ModeSocket {
				t.Errorf("socket file: %v, %v", fi, err)
			}
			if err := lis.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(sock); !os.IsNotExist(err) {
				t.Errorf("socket file still there after Close: %v", err)
			}
		})
	}
}

// TestListenReplacesStaleSocket checks that a socket file nobody listens on
// (left by a crashed daemon) is replaced.
func TestListenReplacesStaleSocket(t *testing.T) {
	sock := filepath.Join(shortDir(t), "stale.sock")
	old, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	old.(*net.UnixListener).SetUnlinkOnClose(false)
	old.Close()
	if fi, err := os.Lstat(sock); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("stale socket not left behind: %v", err)
	}

	lis, err := Listen("unix://" + sock)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	defer lis.Close()
	// The new listener answers.
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("dial the new listener: %v", err)
	}
	c.Close()
}

// TestListenRefuses checks that Listen never steals a live socket and never
// deletes a file that is not a socket, and says why.
func TestListenRefuses(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		wantErr string
	}{
		{
			name: "live socket",
			prepare: func(t *testing.T, path string) {
				l, err := net.Listen("unix", path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Close() })
			},
			wantErr: "in use",
		},
		{
			name: "regular file",
			prepare: func(t *testing.T, path string) {
				if err := os.WriteFile(path, []byte("precious"), 0o600); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "not a socket",
		},
		{
			name: "directory",
			prepare: func(t *testing.T, path string) {
				if err := os.Mkdir(path, 0o700); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "not a socket",
		},
		{
			name: "symlink",
			prepare: func(t *testing.T, path string) {
				if err := os.Symlink(path+".target", path); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "not a socket",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sock := filepath.Join(shortDir(t), "d.sock")
			tt.prepare(t, sock)
			before, err := os.Lstat(sock)
			if err != nil {
				t.Fatal(err)
			}
			lis, err := Listen("unix://" + sock)
			if err == nil {
				lis.Close()
				t.Fatal("Listen succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), sock) {
				t.Errorf("error %q does not contain %q and the path", err, tt.wantErr)
			}
			after, err := os.Lstat(sock)
			if err != nil {
				t.Fatalf("the existing %s was removed: %v", tt.name, err)
			}
			if !os.SameFile(before, after) {
				t.Errorf("the existing %s was replaced", tt.name)
			}
		})
	}
}

// TestListenTCP checks the tcp:// form and a bad address.
func TestListenTCP(t *testing.T) {
	lis, err := Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	if lis.Addr().Network() != "tcp" {
		t.Errorf("network = %s", lis.Addr().Network())
	}
	if _, err := Listen("ftp://x"); err == nil {
		t.Error("Listen accepted an unknown scheme")
	}
}
