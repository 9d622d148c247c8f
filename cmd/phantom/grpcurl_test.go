package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/testenv"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// grpcurlPath finds grpcurl in the repository's .tools/bin (found by
// walking up from the working directory to go.mod), else on PATH.
func grpcurlPath(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, ".tools", "bin", "grpcurl")
			if _, err := os.Stat(p); err == nil {
				return p
			}
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if p, err := exec.LookPath("grpcurl"); err == nil {
		return p
	}
	t.Fatal("grpcurl not found in .tools/bin or on PATH: run ./scripts/setup")
	return ""
}

// runDaemon runs `phantom daemon terminald --listen unix://sock` in env
// until the test ends, when it is stopped with SIGTERM and must exit 0 and
// remove its socket.
func runDaemon(t *testing.T, env *testenv.Env, sock string) {
	t.Helper()
	c := exec.Command(phantomBin, "daemon", "terminald", "--listen", "unix://"+sock)
	c.Env = env.Vars
	c.Dir = env.Home
	logf, err := os.Create(filepath.Join(env.Home, "terminald.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	c.Stdout, c.Stderr = logf, logf
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	t.Cleanup(func() {
		_ = c.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("terminald exited with %v after SIGTERM", err)
			}
		case <-time.After(30 * time.Second):
			c.Process.Kill()
			<-exited
			t.Error("terminald did not stop within 30s of SIGTERM")
		}
		if _, err := os.Lstat(sock); !os.IsNotExist(err) {
			t.Errorf("socket %s after stop: %v, want it removed", sock, err)
		}
	})

	cc, err := daemon.Dial("unix://" + sock)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	hc := healthpb.NewHealthClient(cc)
	eventually(t, "terminald to serve", func() (bool, string) {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(env.Home, "terminald.log"))
			t.Fatalf("terminald exited during start-up (%v):\n%s", err, log)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		return err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING, resp.GetStatus().String()
	})
}

// TestGrpcurl checks that a real terminald can be explored and called with
// grpcurl through server reflection, as the design promises for debugging.
func TestGrpcurl(t *testing.T) {
	grpcurl := grpcurlPath(t)
	env := testenv.New(t)
	// Not the default socket: --listen must be honoured.
	sock := filepath.Join(env.Getenv("XDG_RUNTIME_DIR"), "custom", "td.sock")
	runDaemon(t, env, sock)

	// call runs grpcurl against sock with data (if any) as the request, and
	// fails t unless it succeeds.
	call := func(t *testing.T, data string, args ...string) string {
		t.Helper()
		out, err := grpcurlRun(grpcurl, sock, data, args...)
		if err != nil {
			t.Fatalf("grpcurl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	lines := func(s string) []string {
		var l []string
		for _, f := range strings.Split(strings.TrimSpace(s), "\n") {
			if f = strings.TrimSpace(f); f != "" {
				l = append(l, f)
			}
		}
		slices.Sort(l)
		return l
	}

	svc := terminalv1.File_phantom_terminal_v1_terminal_proto.Services().ByName("TerminalService")
	if svc == nil {
		t.Fatal("no TerminalService in the terminal proto descriptor")
	}

	t.Run("list services", func(t *testing.T) {
		got := lines(call(t, "", "list"))
		for _, want := range []string{string(svc.FullName()), "grpc.health.v1.Health"} {
			if !slices.Contains(got, want) {
				t.Errorf("grpcurl list = %v, lacks %s", got, want)
			}
		}
	})

	t.Run("list methods", func(t *testing.T) {
		var want []string
		for i := range svc.Methods().Len() {
			want = append(want, string(svc.Methods().Get(i).FullName()))
		}
		slices.Sort(want)
		if got := lines(call(t, "", "list", string(svc.FullName()))); !slices.Equal(got, want) {
			t.Errorf("grpcurl list %s =\n  %v\nwant every method of the descriptor:\n  %v", svc.FullName(), got, want)
		}
	})

	t.Run("ListThemeColors", func(t *testing.T) {
		out := call(t, "{}", string(svc.FullName())+"/ListThemeColors")
		var resp struct {
			Colors []struct {
				Name, Hex string
				Ansi256   int
			}
		}
		if err := json.Unmarshal([]byte(out), &resp); err != nil {
			t.Fatalf("ListThemeColors output is not JSON: %v\n%s", err, out)
		}
		if len(resp.Colors) != len(workspace.Palette) {
			t.Fatalf("ListThemeColors returned %d colours, want %d:\n%s", len(resp.Colors), len(workspace.Palette), out)
		}
		for i, c := range resp.Colors {
			p := workspace.Palette[i]
			if c.Name != p.Name || c.Hex != p.Hex || c.Ansi256 != p.ANSI256 {
				t.Errorf("colour %d = %+v, want %+v", i, c, p)
			}
		}
	})

	t.Run("health", func(t *testing.T) {
		out := call(t, "", "grpc.health.v1.Health/Check")
		var resp struct{ Status string }
		if err := json.Unmarshal([]byte(out), &resp); err != nil || resp.Status != "SERVING" {
			t.Errorf("Health/Check = %q (%v), want SERVING", out, err)
		}
		out = call(t, `{"service":"`+string(svc.FullName())+`"}`, "grpc.health.v1.Health/Check")
		if !strings.Contains(out, "SERVING") {
			t.Errorf("Health/Check(%s) = %q, want SERVING", svc.FullName(), out)
		}
	})

	t.Run("validation error", func(t *testing.T) {
		out, err := grpcurlRun(grpcurl, sock, `{"terminal_id":""}`, string(svc.FullName())+"/ReadOutput")
		if err == nil || !strings.Contains(out, "InvalidArgument") || !strings.Contains(out, "terminal_id") {
			t.Errorf("ReadOutput with an empty terminal_id: %v\n%s\nwant InvalidArgument naming terminal_id", err, out)
		}
	})
}

// grpcurlRun runs grpcurl in plaintext against the Unix socket sock, with
// data (if not empty) as the request body; flags go before the address.
func grpcurlRun(grpcurl, sock, data string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	argv := []string{"-plaintext", "-unix"}
	if data != "" {
		argv = append(argv, "-d", data)
	}
	argv = append(append(argv, sock), args...)
	out, err := exec.CommandContext(ctx, grpcurl, argv...).CombinedOutput()
	return string(out), err
}
