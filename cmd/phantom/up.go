package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/phantom-dev/phantom/gateway"
	"github.com/phantom-dev/phantom/internal/buildinfo"
	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/holder"
)

// startTimeout bounds how long up waits for a daemon to report SERVING,
// and for the gateway to see every daemon serving.
const startTimeout = 15 * time.Second

// stopTimeout bounds how long down waits for a daemon to exit after SIGTERM.
const stopTimeout = 15 * time.Second

// lookEvery is how often up looks for the pid files of starting daemons
// where it cannot watch the runtime directory (daemon.WatchDir failed).
const lookEvery = 5 * time.Millisecond

func upCmd() *cobra.Command {
	var foreground bool
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start every daemon and return when they are healthy",
		Long: `Start every daemon that is not running and return when they all serve.
The first tab opens in the directory up runs in. Tabs find this phantom
first in their PATH.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := paths.Default()
			if err != nil {
				return err
			}
			settings, err := checkSettings(l)
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
			started, err := bringUp(l, foreground)
			if err != nil {
				return err
			}
			fmt.Println(upMessage(settings))
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

// bringUp starts every daemon of l that does not serve yet and opens the
// first tab, and returns the daemons it started. If a daemon fails to
// start, those it started are stopped again.
//
// The order is what makes the first prompt quick (issue 17): on two
// cores, six daemons starting at once would slow terminald down. So the
// holder and terminald start first, alone; the first tab opens the moment
// terminald serves; then the other daemons start, all at once, while the
// tab's shell starts. The gateway starts last, so that it reaches every
// daemon at its first try rather than on its reconnect backoff.
func bringUp(l paths.Layout, foreground bool) ([]*child, error) {
	serving := servingDaemons(l)
	s := newStarter(l, foreground)
	defer s.close()
	var started []*child
	launch := func(names ...string) ([]*child, error) {
		var cs []*child
		for _, name := range names {
			if serving[name] {
				continue
			}
			c, err := s.start(name)
			if err != nil {
				return nil, err
			}
			cs = append(cs, c)
			started = append(started, c)
		}
		return cs, nil
	}
	var hold *child // the holder this up started, if any
	fail := func(err error) ([]*child, error) {
		if hold != nil {
			// Fresh, it holds no tab; stopped last, after terminald.
			started = append([]*child{hold}, started...)
		}
		stopChildren(started)
		return nil, err
	}
	var others []string
	for _, name := range paths.Daemons {
		if name != "terminald" && name != "gateway" {
			others = append(others, name)
		}
	}
	if !serving["terminald"] {
		if err := refuseInside(l, "start terminald"); err != nil {
			return nil, err
		}
		hold = startHolder(l)
	}
	var tabErr error
	for _, stage := range [][]string{{"terminald"}, others, {"gateway"}} {
		cs, err := launch(stage...)
		if err == nil {
			err = s.wait(cs)
		}
		if err != nil {
			return fail(err)
		}
		if stage[0] == "terminald" {
			// A terminald this up started restores the saved session
			// (restore.go); the first tab opens only when none came back.
			if serving["terminald"] || !restoreSession() {
				tabErr = firstTab()
			}
		}
	}
	// A tool call right after up returns must find every daemon.
	if err := waitGatewaySees(l); err != nil {
		return fail(err)
	}
	reportAlready(l, serving, started)
	if tabErr != nil {
		// The daemons stay: they serve, and `phantom new` may work.
		return started, fmt.Errorf("open the first tab: %w", rpcError(tabErr))
	}
	return started, nil
}

// startHolder starts the instance's holder (terminald/holder) beside
// terminald rather than leave it to terminald, which would start it only
// once it runs, through a `+holder --background` that starts it in turn:
// two process starts in a row on the way to the first prompt. Its
// arguments are those terminald gives it, by which terminald recognises
// it. Should it fail to start, terminald starts one as always (nil is
// returned); a holder already running makes this one exit at once.
func startHolder(l paths.Layout) *child {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	ch := &child{name: "holder", log: holder.LogFile(l.Logs), done: make(chan struct{})}
	logf, err := os.OpenFile(ch.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil
	}
	defer logf.Close()
	ch.cmd = exec.Command(exe, "+holder", "--terminald", l.DaemonAddr("terminald"),
		"--socket", holder.Socket(l.Runtime), "--lock", holder.LockFile(l.Runtime))
	ch.cmd.Stdout, ch.cmd.Stderr = logf, logf
	// Its own session, nobody's child once up exits: the holder must
	// outlive terminald and not get the terminal's hang-up.
	ch.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if ch.cmd.Start() != nil {
		return nil
	}
	go func() {
		ch.err = ch.cmd.Wait()
		close(ch.done)
	}()
	return ch
}

// servingDaemons asks every daemon of l at once whether it serves.
func servingDaemons(l paths.Layout) map[string]bool {
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := map[string]bool{}
	for _, name := range paths.Daemons {
		wg.Go(func() {
			if st, _ := probe(l.DaemonAddr(name)); st == healthpb.HealthCheckResponse_SERVING {
				mu.Lock()
				out[name] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// reportAlready says which daemons were found running, since when and on
// which build, and warns when they run another binary than this one.
func reportAlready(l paths.Layout, serving map[string]bool, started []*child) {
	if len(serving) == 0 {
		return
	}
	var kept []string
	for _, name := range paths.Daemons {
		if serving[name] {
			kept = append(kept, name)
		}
	}
	if len(started) == 0 {
		what := "every daemon serves"
		if d, err := inspectDaemon(l, "terminald"); err == nil {
			what = fmt.Sprintf("since %s, rev %s", d.Since.Local().Format("2006-01-02 15:04:05 MST"), d.Build.Rev())
		}
		fmt.Printf("Phantom is already running (%s).\n", what)
	} else {
		fmt.Printf("Phantom was already running except %s; %s kept running.\n",
			strings.Join(childNames(started), ", "), strings.Join(kept, ", "))
	}
	warnDiffering(os.Stderr, l, kept)
}

// child is a daemon this up started.
type child struct {
	name string
	cmd  *exec.Cmd
	// log is the daemon's log file, and logFrom its size when this
	// daemon started: what it wrote itself starts there.
	log     string
	logFrom int64
	// err is Wait's result, set before done is closed.
	err  error
	done chan struct{}
}

func childNames(cs []*child) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.name)
	}
	return out
}

// starter starts daemons and learns when each serves. A daemon writes its
// pid file once it serves (daemon.WritePIDFileWhenServing), and the
// runtime directory is watched, so that up goes on the moment a daemon is
// ready rather than on the next tick of a poll.
type starter struct {
	l          paths.Layout
	foreground bool
	// watch wakes wait when a file is written in the runtime directory;
	// nil where it cannot be had (then wait looks every lookEvery).
	watch *daemon.DirWatch
	// exited receives each started daemon once it exited.
	exited chan *child
}

func newStarter(l paths.Layout, foreground bool) *starter {
	s := &starter{l: l, foreground: foreground, exited: make(chan *child, len(paths.Daemons))}
	s.watch, _ = daemon.WatchDir(l.Runtime)
	return s
}

func (s *starter) close() {
	if s.watch != nil {
		s.watch.Close()
	}
}

// start starts the named daemon; wait learns when it serves.
func (s *starter) start(name string) (*child, error) {
	if err := refuseInside(s.l, "start "+name); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start %s: find own executable: %w", name, err)
	}
	ch := &child{name: name, log: filepath.Join(s.l.Logs, name+".log"), done: make(chan struct{})}
	logf, err := os.OpenFile(ch.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start %s: open its log: %w", name, err)
	}
	defer logf.Close()
	if st, err := logf.Stat(); err == nil {
		ch.logFrom = st.Size()
	}
	ch.cmd = exec.Command(exe, "daemon", name, "--listen", s.l.DaemonAddr(name))
	ch.cmd.Stdout, ch.cmd.Stderr = logf, logf
	// Its own session: the daemon must not get the SIGHUP or Ctrl-C meant
	// for the terminal `phantom up` ran in.
	ch.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: !s.foreground}
	if err := ch.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		ch.err = ch.cmd.Wait()
		close(ch.done)
		s.exited <- ch
	}()
	return ch, nil
}

// wait waits until every daemon of cs serves, which it says by writing
// its pid file, naming itself, once it does. A daemon that exits, or does
// not serve within startTimeout, is an error that quotes what it logged.
func (s *starter) wait(cs []*child) error {
	var tick <-chan time.Time
	changed := make(<-chan struct{}) // never ready
	if s.watch != nil {
		changed = s.watch.Changed()
	} else {
		t := time.NewTicker(lookEvery)
		defer t.Stop()
		tick = t.C
	}
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	pending := slices.Clone(cs)
	for {
		pending = slices.DeleteFunc(pending, s.serves)
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-tick:
		case c := <-s.exited:
			return fmt.Errorf("%s exited during start-up (%v); its log %s says:\n%s", c.name, c.err, c.log, logSince(c.log, c.logFrom))
		case <-deadline.C:
			c := pending[0]
			stopChildren(pending)
			return fmt.Errorf("%s (pid %d) did not serve with its pid file written within %s; stopped it; its log %s says:\n%s",
				c.name, c.cmd.Process.Pid, startTimeout, c.log, logSince(c.log, c.logFrom))
		}
	}
}

// serves reports whether c's pid file names it, and says so.
func (s *starter) serves(c *child) bool {
	rec, err := daemon.ReadPIDFile(s.l.PIDFile(c.name))
	if err != nil || rec.PID != c.cmd.Process.Pid {
		return false
	}
	fmt.Printf("started %s (pid %d) on %s\n", c.name, rec.PID, s.l.DaemonAddr(c.name))
	return true
}

// startDaemon starts the named daemon and waits until it serves.
func startDaemon(l paths.Layout, name string, foreground bool) (*child, error) {
	s := newStarter(l, foreground)
	defer s.close()
	c, err := s.start(name)
	if err != nil {
		return nil, err
	}
	if err := s.wait([]*child{c}); err != nil {
		return nil, err
	}
	return c, nil
}

// stopChildren stops daemons this process started, newest first. It signals
// them through their os.Process, which holds a pidfd: a process that has
// exited and whose pid was reused is never signalled.
func stopChildren(cs []*child) {
	for _, c := range slices.Backward(cs) {
		select {
		case <-c.done:
			continue // already gone (and said so)
		default:
		}
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
// returns never meets a daemon the gateway has not connected to yet. It
// watches each status rather than asking again and again: the gateway
// says the moment a daemon's state changes.
func waitGatewaySees(l paths.Layout) error {
	addr := l.DaemonAddr("gateway")
	cc, err := daemon.Dial(addr)
	if err != nil {
		return err
	}
	defer cc.Close()
	hc := healthpb.NewHealthClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for _, name := range paths.Daemons {
		if name == "gateway" {
			continue
		}
		last, err := watchUntilServing(ctx, hc, gateway.BackendHealthService(name))
		if err == nil {
			continue
		}
		why := "it has not heard from it yet; a gateway of an older Phantom never says: restart it with `phantom down`, then `phantom up`"
		switch {
		case last != healthpb.HealthCheckResponse_UNKNOWN && last != healthpb.HealthCheckResponse_SERVICE_UNKNOWN:
			why = "it reports it " + strings.ToLower(last.String())
		case ctx.Err() == nil && status.Code(err) != codes.NotFound:
			why = "asking the gateway failed: " + rpcError(err).Error()
		}
		return fmt.Errorf("the gateway does not see %s serving after %s (%s); see the logs in %s", name, startTimeout, why, l.Logs)
	}
	return nil
}

// watchUntilServing follows service's health status until it is SERVING,
// and returns the last status seen.
func watchUntilServing(ctx context.Context, hc healthpb.HealthClient, service string) (healthpb.HealthCheckResponse_ServingStatus, error) {
	last := healthpb.HealthCheckResponse_UNKNOWN
	// WaitForReady: a gateway that has just started may not accept yet;
	// the stream waits for it rather than fail at once.
	stream, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{Service: service}, grpc.WaitForReady(true))
	if err != nil {
		return last, err
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			if ctx.Err() != nil {
				return last, ctx.Err()
			}
			return last, err
		}
		if last = resp.GetStatus(); last == healthpb.HealthCheckResponse_SERVING {
			return last, nil
		}
	}
}

// firstTab opens a shell tab when the workspace has none, as tmux does,
// in the directory up runs in (home if that cannot be had).
func firstTab() error {
	return withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
		list, err := tc.ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
		if err != nil || len(list.GetTerminals()) > 0 {
			return err
		}
		dir, _ := os.Getwd() // "": terminald opens it in home
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

// logSince is the end of the log at path from offset from on: what a
// daemon started at that size wrote, and not what earlier runs did.
func logSince(path string, from int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.NewSectionReader(f, from, 1<<20))
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
				// What it runs (version.go): the build's revision, the
				// binary's path, whether that file was replaced since it
				// started, and how it differs from this phantom.
				Revision       string `json:"revision,omitempty"`
				Binary         string `json:"binary,omitempty"`
				BinaryReplaced bool   `json:"binary_replaced,omitempty"`
				Differs        string `json:"differs,omitempty"`
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
				if rd, err := inspectDaemon(l, name); err == nil {
					d.PID, d.Revision, d.Binary, d.BinaryReplaced = rd.PID, rd.Build.Rev(), rd.Binary.Path, rd.Binary.Deleted
					if self, err := buildinfo.Executable(); err == nil {
						d.Differs = rd.differs(self)
					}
				} else {
					d.PID, _ = daemonPID(l, name)
				}
				st, err := probe(d.Addr)
				d.Health = strings.ToLower(st.String())
				if err != nil {
					d.Health = "down"
				}
				out.Running = out.Running && st == healthpb.HealthCheckResponse_SERVING
				out.Daemons = append(out.Daemons, d)
			}
			out.Permissions = permissionsHealth(l)
			var down []string
			for _, d := range out.Daemons {
				if d.Health != "serving" {
					down = append(down, d.Name)
				}
			}
			if asJSON {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(out); err != nil {
					return err
				}
				return notServing(down, len(out.Daemons))
			}
			fmt.Printf("bundle id   %s\n", out.BundleID)
			for _, d := range out.Daemons {
				pid := "-"
				if d.PID > 0 {
					pid = strconv.Itoa(d.PID)
				}
				bin := "-"
				if d.Binary != "" {
					bin = "rev " + d.Revision + "  " + d.Binary
					if d.BinaryReplaced {
						bin += " (replaced since start)"
					}
				}
				fmt.Printf("%-11s %-11s pid %-7s %s  %s  (log %s)\n", d.Name, d.Health, pid, bin, d.Addr, d.Log)
			}
			if self, err := buildinfo.Executable(); err == nil {
				fmt.Printf("this binary rev %s  %s\n", buildinfo.Self().Rev(), self.Path)
			}
			fmt.Printf("mcp socket  %s\nruntime     %s\ntab state   %s\nstate       %s\nconfig      %s\nisolation   %s\n",
				out.MCPSocket, out.Runtime, out.TabState, out.State, out.Config, out.Isolation)
			printPermissions(os.Stdout, out.Permissions)
			differs := map[string]string{}
			for _, d := range out.Daemons {
				differs[d.Name] = d.Differs
			}
			for _, line := range differingWarnings(differs) {
				fmt.Fprintln(os.Stderr, line)
			}
			return notServing(down, len(out.Daemons))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// notServing is status's verdict: nil when no daemon is down, else a
// failure with exit status 3 (Phantom is not running), which says which
// daemons are down unless all of them are.
func notServing(down []string, of int) error {
	switch {
	case len(down) == 0:
		return nil
	case len(down) == of:
		return &cliError{code: exitNotRunning, why: "Phantom is not running", todo: "start it with phantom up"}
	}
	return &cliError{code: exitNotRunning, why: "not every daemon is serving: " + strings.Join(down, ", ") + " down",
		todo: "phantom up starts the missing ones"}
}
