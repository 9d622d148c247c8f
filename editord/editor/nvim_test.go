package editor

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/editord/nvim"
)

// startNvim starts a real headless Neovim listening on a socket in a
// temporary directory, and stops it when the test ends.
func startNvim(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("nvim"); err != nil {
		t.Skip("nvim is not installed (scripts/setup installs Debian's neovim)")
	}
	sock := filepath.Join(t.TempDir(), "nvim.sock")
	cmd := exec.Command("nvim", "--headless", "--clean", "--listen", sock)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start nvim: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	// The socket file appears at bind, a moment before Neovim listens.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
			return sock
		}
		if time.Now().After(deadline) {
			t.Fatalf("nvim did not listen on %s within 10s: %v", sock, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// headless connects an Editor to a fresh headless Neovim.
func headless(t *testing.T) (*Editor, *nvim.Client) {
	t.Helper()
	sock := startNvim(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := nvim.Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return New(c), c
}

// writeFile writes a file of n numbered lines into dir.
func writeFile(t *testing.T, dir, name string, n int) string {
	t.Helper()
	var b []byte
	for i := 1; i <= n; i++ {
		b = append(b, "line "+strconv.Itoa(i)+"\n"...)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dialNvim(ctx context.Context, sock string) (*nvim.Client, error) { return nvim.Dial(ctx, sock) }
