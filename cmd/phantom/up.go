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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/phantom-dev/phantom/gateway"
	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// startTimeout bounds how long up waits for a daemon to report SERVING,
// and for the gateway to see every daemon serving.
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
			lk, err := lockInstance(l, "up")
			if err != nil {
				return err
			}
			defer func() { lk.unlock() }() // the lock held at the end
			cleanStale(l)
			var started []*child
			var already []string
			for _, name := range paths.Daemons {
				if st, _ := probe(l.DaemonAddr(name)); st == healthpb.HealthCheckResponse_SERVING {
					already = append(already, name)
					continue
				}
				c, err := startDaemon(l, name, foreground)
				if err != nil {
					stopChildren(started)
					return err
				}
				started = append(started, c)
			}
			switch {
			case len(started) == 0:
				fmt.Println("Phantom is already running: every daemon serves.")
			case len(already) > 0:
				fmt.Printf("Phantom was already running except %s; %s kept running.\n",
					strings.Join(childNames(started), ", "), strings.Join(already, ", "))
			}
			// A tool call right after up returns must find every daemon:
			// the gateway connects to a daemon started after it only
			// once its reconnect backoff fires.
			if err := waitGatewaySees(l); err != nil {
				return err
			}
			if err := firstTab(); err != nil {
				return err
			}
			fmt.Println("Phantom is up. See it: phantom attach (Ctrl-\\ d detaches); list tabs: phantom ls; agents connect with: phantom +mcp-server --client=NAME")
			if !foreground {
				return nil
			}
			// Another down may run while this one waits; it stops these
			// daemons as it would any other.
			lk.unlock()
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
			<-sig
			lk, err = lockInstance(l, "up --foreground (stopping)")
			if err != nil {
				return err
			}
			stopChildren(started)
			return nil
		},
	}
	cmd.Flags().BoolVar(&foreground, "foreground", false, "stay in the foreground and stop the daemons on Ctrl-C")
	return cmd
}

// child is a daemon this up started.
type child struct {
	name string
	cmd  *exec.Cmd
	// exited receives Wait's result once.
	exited chan error
	// done is closed once it exited.
	done chan struct{}
}

func childNames(cs []*child) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.name)
	}
	return out
}

// startDaemon starts the named daemon and waits until it is SERVING and
// its pid file, which the daemon writes itself once it listens, names it.
func startDaemon(l paths.Layout, name string, foreground bool) (*child, error) {
	addr := l.DaemonAddr(name)
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
	ch := &child{name: name, cmd: c, exited: make(chan error, 1), done: make(chan struct{})}
	go func() {
		err := c.Wait()
		close(ch.done)
		ch.exited <- err
	}()
	deadline := time.Now().Add(startTimeout)
	for {
		if st, _ := probe(addr); st == healthpb.HealthCheckResponse_SERVING {
			rec, err := daemon.ReadPIDFile(l.PIDFile(name))
			if err == nil && rec.PID == c.Process.Pid {
				fmt.Printf("started %s (pid %d) on %s\n", name, c.Process.Pid, addr)
				return ch, nil
			}
		}
		select {
		case err := <-ch.exited:
			return nil, fmt.Errorf("%s exited during start-up (%v); its log %s ends:\n%s", name, err, logPath, logTail(logPath))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stopChildren([]*child{ch})
			return nil, fmt.Errorf("%s (pid %d) did not serve with its pid file written within %s; stopped it; its log %s ends:\n%s",
				name, c.Process.Pid, startTimeout, logPath, logTail(logPath))
		}
	}
}

// stopChildren stops daemons this process started, newest first. It signals
// them through their os.Process, which holds a pidfd: a process that has
// exited and whose pid was reused is never signalled.
func stopChildren(cs []*child) {
	for _, c := range slices.Backward(cs) {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(stopTimeout):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
		fmt.Printf("stopped %s (pid %d)\n", c.name, c.cmd.Process.Pid)
	}
}

// waitGatewaySees waits until the gateway's health service reports that
// the gateway itself sees every other daemon serving (see
// gateway.BackendHealthService), so that the first tool call after up
// returns never meets a daemon the gateway has not connected to yet.
func waitGatewaySees(l paths.Layout) error {
	addr := l.DaemonAddr("gateway")
	cc, err := daemon.Dial(addr)
	if err != nil {
		return err
	}
	defer cc.Close()
	hc := healthpb.NewHealthClient(cc)
	deadline := time.Now().Add(startTimeout)
	for _, name := range paths.Daemons {
		if name == "gateway" {
			continue
		}
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: gateway.BackendHealthService(name)})
			cancel()
			if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
				break
			}
			if time.Now().After(deadline) {
				why := "it has not heard from it yet; a gateway of an older Phantom never says: restart it with `phantom down`, then `phantom up`"
				switch {
				case err == nil:
					why = "it reports it " + strings.ToLower(resp.GetStatus().String())
				case status.Code(err) != codes.NotFound:
					why = "asking the gateway failed: " + rpcError(err).Error()
				}
				return fmt.Errorf("the gateway does not see %s serving after %s (%s); see the logs in %s", name, startTimeout, why, l.Logs)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
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
			lk, err := lockInstance(l, "down")
			if err != nil {
				return err
			}
			defer lk.unlock()
			var errs []error
			for _, name := range slices.Backward(paths.Daemons) {
				errs = append(errs, stopDaemon(l, name))
			}
			errs = append(errs, stopHolder(l)) // left by a terminald that died (upgrade.go)
			cleanStale(l)
			return errors.Join(errs...)
		},
	}
}

// stopDaemon stops the named daemon of this instance: the process its pid
// file names, provided that process really is that daemon (see
// instanceDaemon). It sends SIGTERM, waits for it to exit and kills it
// after stopTimeout. A pid file naming anything else is stale and removed;
// the process it names is left alone.
func stopDaemon(l paths.Layout, name string) error {
	path := l.PIDFile(name)
	rec, err := daemon.ReadPIDFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if st, _ := probe(l.DaemonAddr(name)); st == healthpb.HealthCheckResponse_SERVING {
			fmt.Fprintf(os.Stderr, "phantom: %s answers on %s but has no pid file %s; it was not started by `phantom up` of this instance, so it is left running\n",
				name, l.DaemonAddr(name), path)
		}
		return nil
	}
	if err != nil {
		os.Remove(path)
		return nil
	}
	// Open a pidfd first and check the process after: if the pid was
	// reused in between, the check (start time) fails; if the process
	// exits after the check, the pidfd refers to it and not to a
	// successor, so a reused pid is never signalled.
	pidfd, perr := unix.PidfdOpen(rec.PID, 0)
	if perr == nil {
		defer unix.Close(pidfd)
	}
	if err := instanceDaemon(l, name, rec); err != nil {
		os.Remove(path)
		return nil
	}
	signal := func(sig syscall.Signal) error {
		if perr == nil {
			return unix.PidfdSendSignal(pidfd, sig, nil, 0)
		}
		return syscall.Kill(rec.PID, sig)
	}
	if err := signal(syscall.SIGTERM); err != nil {
		removeIfNames(path, rec)
		return nil // already gone
	}
	if !waitExit(rec, pidfd, perr == nil, stopTimeout) {
		_ = signal(syscall.SIGKILL)
		fmt.Fprintf(os.Stderr, "phantom: %s (pid %d) did not stop within %s; killed\n", name, rec.PID, stopTimeout)
		waitExit(rec, pidfd, perr == nil, stopTimeout)
	}
	removeIfNames(path, rec)
	fmt.Printf("stopped %s (pid %d)\n", name, rec.PID)
	return nil
}

// waitExit waits up to d for the process of rec to exit: on its pidfd when
// there is one (readable once it exited), else by polling /proc.
func waitExit(rec daemon.PIDRecord, pidfd int, havePidfd bool, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if havePidfd {
			fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
			n, err := unix.Poll(fds, int(min(time.Until(deadline), 100*time.Millisecond)/time.Millisecond)+1)
			if err == nil && n > 0 {
				return true
			}
			if err != nil && !errors.Is(err, unix.EINTR) {
				havePidfd = false
			}
			continue
		}
		if !rec.Alive() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return !rec.Alive()
}

// removeIfNames removes the pid file at path if it still holds rec: the
// daemon removes its own on a clean exit, and a successor's is not ours.
func removeIfNames(path string, rec daemon.PIDRecord) {
	if r, err := daemon.ReadPIDFile(path); err == nil && r == rec {
		os.Remove(path)
	}
}

// instanceDaemon checks that rec names a live process that is the named
// daemon of this instance: started at the recorded time (not a later
// process that reused the pid) and running `phantom daemon NAME --listen
// ADDR` with this instance's address. A pid file is not proof of anything
// (any process of the user can write one), so down and up never stop or
// trust a process on its word alone.
func instanceDaemon(l paths.Layout, name string, rec daemon.PIDRecord) error {
	if !rec.Alive() {
		return fmt.Errorf("pid %d is not running", rec.PID)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(rec.PID) + "/cmdline")
	if err != nil {
		return fmt.Errorf("pid %d: read its command line: %w", rec.PID, err)
	}
	argv := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	want := []string{"daemon", name, "--listen", l.DaemonAddr(name)}
	if len(argv) != len(want)+1 || !slices.Equal(argv[1:], want) {
		return fmt.Errorf("pid %d runs %q, not `phantom %s`", rec.PID, argv, strings.Join(want, " "))
	}
	// Checked again after reading the command line: the process could
	// have exited and its pid been reused in between.
	if !rec.Alive() {
		return fmt.Errorf("pid %d is not running", rec.PID)
	}
	return nil
}

// daemonPID is the pid of the named daemon of this instance, from its pid
// file, once checked with instanceDaemon; os.ErrNotExist when the file is
// missing or names anything else.
func daemonPID(l paths.Layout, name string) (int, error) {
	rec, err := daemon.ReadPIDFile(l.PIDFile(name))
	if err != nil {
		return 0, err
	}
	if instanceDaemon(l, name, rec) != nil {
		return 0, os.ErrNotExist
	}
	return rec.PID, nil
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

				Permissions *permissionsStatus `json:"permissions,omitempty"` // grants file and audit log: grants_status.go
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
			out.Permissions = permissionsHealth(l)
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
			printPermissions(os.Stdout, out.Permissions)
			if !out.Running {
				return errors.New("not every daemon is serving; start them with `phantom up`")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
