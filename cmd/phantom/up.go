package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/procfs"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// startTimeout bounds how long up waits for a daemon to report SERVING.
const startTimeout = 15 * time.Second

// stopTimeout bounds how long down waits for a daemon to exit after SIGTERM.
const stopTimeout = 15 * time.Second

func upCmd() *cobra.Command {
	var foreground bool
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start every daemon and return when they are healthy",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := paths.Default()
			if err != nil {
				return err
			}
			for _, dir := range []string{l.Runtime, l.Logs} {
				if err := paths.EnsurePrivateDir(dir); err != nil {
					return err
				}
			}
			var started []*exec.Cmd
			for _, name := range paths.Daemons {
				c, err := startDaemon(l, name, foreground)
				if err != nil {
					stopAll(l, started)
					return err
				}
				if c != nil {
					started = append(started, c)
				}
			}
			if err := firstTab(); err != nil {
				return err
			}
			fmt.Println("Phantom is up. See it: phantom attach (Ctrl-\\ d detaches); list tabs: phantom ls; agents connect with: phantom +mcp-server --client=NAME")
			if !foreground {
				return nil
			}
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
			<-sig
			stopAll(l, started)
			return nil
		},
	}
	cmd.Flags().BoolVar(&foreground, "foreground", false, "stay in the foreground and stop the daemons on Ctrl-C")
	return cmd
}

// startDaemon starts the named daemon unless it already answers, and waits
// until it is SERVING. It returns the started process, or nil.
func startDaemon(l paths.Layout, name string, foreground bool) (*exec.Cmd, error) {
	addr := l.DaemonAddr(name)
	if st, _ := probe(addr); st == healthpb.HealthCheckResponse_SERVING {
		return nil, nil
	}
	if err := refuseInside(l, "start "+name); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start %s: find own executable: %w", name, err)
	}
	logPath := filepath.Join(l.Logs, name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start %s: open log: %w", name, err)
	}
	defer logf.Close()
	c := exec.Command(exe, "daemon", name, "--listen", addr)
	c.Stdout, c.Stderr = logf, logf
	// Its own session: the daemon must not get the SIGHUP or Ctrl-C meant
	// for the terminal `phantom up` ran in.
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: !foreground}
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	if err := os.WriteFile(l.PIDFile(name), []byte(strconv.Itoa(c.Process.Pid)+"\n"), 0o600); err != nil {
		c.Process.Kill()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	deadline := time.Now().Add(startTimeout)
	for {
		if st, _ := probe(addr); st == healthpb.HealthCheckResponse_SERVING {
			fmt.Printf("started %s (pid %d) on %s\n", name, c.Process.Pid, addr)
			return c, nil
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("%s exited during start-up (%v); its log %s ends:\n%s", name, err, logPath, logTail(logPath))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.Process.Kill()
			return nil, fmt.Errorf("%s did not become healthy within %s; its log %s ends:\n%s", name, startTimeout, logPath, logTail(logPath))
		}
	}
}

// firstTab opens a shell tab when the workspace has none, as tmux does.
func firstTab() error {
	return withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
		list, err := tc.ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
		if err != nil || len(list.GetTerminals()) > 0 {
			return err
		}
		dir, _ := os.UserHomeDir()
		_, err = tc.CreateTerminal(ctx, &terminalv1.CreateTerminalRequest{Directory: dir})
		return err
	})
}

func probe(addr string) (healthpb.HealthCheckResponse_ServingStatus, error) {
	cc, err := daemon.Dial(addr)
	if err != nil {
		return healthpb.HealthCheckResponse_UNKNOWN, err
	}
	defer cc.Close()
	return health(cc, time.Second)
}

func logTail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

func downCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Stop every daemon; every shell is hung up",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := paths.Default()
			if err != nil {
				return err
			}
			var errs []error
			for i := len(paths.Daemons) - 1; i >= 0; i-- {
				errs = append(errs, stopDaemon(l, paths.Daemons[i]))
			}
			return errors.Join(errs...)
		},
	}
}

// stopAll stops daemons this process started, newest first.
func stopAll(l paths.Layout, cmds []*exec.Cmd) {
	for i := len(cmds) - 1; i >= 0; i-- {
		_ = stopDaemon(l, cmds[i].Args[2])
	}
}

// stopDaemon sends SIGTERM to the daemon recorded in its pid file and waits
// for it to exit, killing it after stopTimeout.
func stopDaemon(l paths.Layout, name string) error {
	pid, err := daemonPID(l, name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		os.Remove(l.PIDFile(name))
		return nil // already gone
	}
	deadline := time.Now().Add(stopTimeout)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			fmt.Fprintf(os.Stderr, "phantom: %s (pid %d) did not stop within %s; killed\n", name, pid, stopTimeout)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	os.Remove(l.PIDFile(name))
	fmt.Printf("stopped %s (pid %d)\n", name, pid)
	return nil
}

// daemonPID reads a daemon's pid file and checks that the process is still
// that daemon, so that a reused pid is never signalled.
func daemonPID(l paths.Layout, name string) (int, error) {
	b, err := os.ReadFile(l.PIDFile(name))
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("pid file %s: %q is not a pid", l.PIDFile(name), b)
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || !strings.Contains(string(cmdline), "daemon\x00"+name) {
		os.Remove(l.PIDFile(name))
		return 0, os.ErrNotExist
	}
	return pid, nil
}

// alive reports whether pid still runs (a zombie counts as gone).
func alive(pid int) bool {
	st, err := procfs.ReadStat(pid)
	return err == nil && st.State != 'Z'
}

func statusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the daemons, their health and every path",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := paths.Default()
			if err != nil {
				return err
			}
			type daemonStatus struct {
				Name   string `json:"name"`
				Addr   string `json:"addr"`
				PID    int    `json:"pid,omitempty"`
				Health string `json:"health"`
				Log    string `json:"log"`
			}
			out := struct {
				BundleID  string         `json:"bundle_id"`
				Running   bool           `json:"running"`
				Daemons   []daemonStatus `json:"daemons"`
				MCPSocket string         `json:"mcp_socket"`
				Runtime   string         `json:"runtime_dir"`
				TabState  string         `json:"tab_state_dir"`
				State     string         `json:"state_dir"`
				Config    string         `json:"config_dir"`
				Isolation string         `json:"isolation"`
			}{BundleID: paths.BundleID(), Running: true, MCPSocket: l.MCPSocket, Runtime: l.Runtime,
				TabState: l.TabStateDir(), State: l.State, Config: l.Config, Isolation: isolation()}
			for _, name := range paths.Daemons {
				d := daemonStatus{Name: name, Addr: l.DaemonAddr(name), Log: filepath.Join(l.Logs, name+".log")}
				d.PID, _ = daemonPID(l, name)
				st, err := probe(d.Addr)
				d.Health = strings.ToLower(st.String())
				if err != nil {
					d.Health = "down"
				}
				out.Running = out.Running && st == healthpb.HealthCheckResponse_SERVING
				out.Daemons = append(out.Daemons, d)
			}
			if asJSON {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			fmt.Printf("bundle id   %s\n", out.BundleID)
			for _, d := range out.Daemons {
				pid := "-"
				if d.PID > 0 {
					pid = strconv.Itoa(d.PID)
				}
				fmt.Printf("%-11s %-11s pid %-7s %s  (log %s)\n", d.Name, d.Health, pid, d.Addr, d.Log)
			}
			fmt.Printf("mcp socket  %s\nruntime     %s\ntab state   %s\nstate       %s\nconfig      %s\nisolation   %s\n",
				out.MCPSocket, out.Runtime, out.TabState, out.State, out.Config, out.Isolation)
			if !out.Running {
				return errors.New("not every daemon is serving; start them with `phantom up`")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
