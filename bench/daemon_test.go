package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/testenv"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/holder"
)

// The Phantom side of the ingest benchmarks runs through the real daemons,
// as a user meets them: the phantom binary built from the tree, `phantom
// up` in an isolated environment, tabs created over terminald's gRPC
// socket (what `phantom new -- cat FILE` sends) and their end learnt from
// its WatchTerminals stream and ReadOutput.

var (
	buildOnce sync.Once
	binDir    string // removed by TestMain
	binPath   string
	buildErr  error
)

// phantomBinary builds ./cmd/phantom from the tree once per process and
// returns the binary's path.
func phantomBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "pbbin")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "phantom")
		var out bytes.Buffer
		c := exec.Command("go", "build", "-o", binPath, "../cmd/phantom")
		c.Stdout, c.Stderr = &out, &out
		if err := c.Run(); err != nil {
			buildErr = fmt.Errorf("go build ../cmd/phantom: %v\n%s", err, out.Bytes())
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath
}

// phantomInstance is a running Phantom in an isolated environment: its
// daemons started by `phantom up`, stopped by `phantom down` when the
// benchmark ends.
type phantomInstance struct {
	tb  testing.TB
	bin string
	env *testenv.Env
	tc  terminalv1.TerminalServiceClient
	// terminald is the daemon's pid; holder the pid of the tabs' parent.
	terminald, holder int
}

// startPhantom runs `phantom up` in a fresh environment and connects to
// its terminald.
func startPhantom(tb testing.TB) *phantomInstance {
	tb.Helper()
	p := &phantomInstance{tb: tb, bin: phantomBinary(tb), env: testenv.New(tb)}
	tb.Cleanup(func() {
		if out, err := p.phantom("down"); err != nil {
			tb.Errorf("phantom down: %v\n%s", err, out)
		}
	})
	if out, err := p.phantom("up"); err != nil {
		tb.Fatalf("phantom up: %v\n%s", err, out)
	}
	out, err := p.phantom("status", "--json")
	if err != nil {
		tb.Fatalf("phantom status --json: %v\n%s", err, out)
	}
	var st struct {
		Daemons []struct {
			Name string `json:"name"`
			PID  int    `json:"pid"`
		} `json:"daemons"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		tb.Fatalf("phantom status --json printed no JSON: %v\n%s", err, out)
	}
	for _, d := range st.Daemons {
		if d.Name == "terminald" {
			p.terminald = d.PID
		}
	}
	if p.terminald == 0 {
		tb.Fatalf("phantom status --json names no terminald pid:\n%s", out)
	}
	if p.holder = p.findHolder(); p.holder == 0 {
		tb.Fatalf("no holder process runs for %s after phantom up", p.env.Layout.Runtime)
	}
	cc, err := daemon.Dial(p.env.Layout.DaemonAddr("terminald"))
	if err != nil {
		tb.Fatalf("connect to terminald: %v", err)
	}
	tb.Cleanup(func() { cc.Close() })
	p.tc = terminalv1.NewTerminalServiceClient(cc)
	return p
}

// phantom runs the binary with args in the instance's environment.
func (p *phantomInstance) phantom(args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, p.bin, args...)
	c.Env, c.Dir = p.env.Vars, p.env.Home
	return c.CombinedOutput()
}

// findHolder finds the instance's holder, the process whose command line
// names the instance's holder socket; 0 when none runs.
func (p *phantomInstance) findHolder() int {
	sock := []byte(holder.Socket(p.env.Layout.Runtime))
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		for arg := range bytes.SplitSeq(cmdline, []byte{0}) {
			if bytes.Equal(arg, sock) {
				return pid
			}
		}
	}
	return 0
}

// catRun cats f in a new cols x rows tab, as `phantom new -- cat FILE`
// does, until the tab reports its program exited and f's last line is the
// last line on its screen. Its CPU is terminald's and the holder's (which
// parents the tab's program) plus cat's, the holder's reaped child, all
// read from /proc around the run. The tab is closed afterwards, untimed.
func (p *phantomInstance) catRun(b *testing.B, f *genFile, cols, rows int) run {
	ctx, cancel := context.WithTimeout(context.Background(), ingestTimeout(f))
	defer cancel()
	td0, _ := procTimes(strconv.Itoa(p.terminald))
	h0, hk0 := procTimes(strconv.Itoa(p.holder))
	start := time.Now()
	// Exits are pushed on the watch stream; a ListTerminals every 100 ms
	// (a fraction of a percent of terminald's CPU) covers an exit sent
	// before the stream was subscribed.
	watch, err := p.tc.WatchTerminals(ctx, &terminalv1.WatchTerminalsRequest{})
	if err != nil {
		b.Fatalf("watch the tabs: %v", err)
	}
	exited := make(chan string, 16)
	go func() {
		for {
			ev, err := watch.Recv()
			if err != nil {
				return
			}
			if ev.GetTerminal().GetExited() {
				select {
				case exited <- ev.GetTerminal().GetId():
				default:
				}
			}
		}
	}()
	cr, err := p.tc.CreateTerminal(ctx, &terminalv1.CreateTerminalRequest{
		Directory: p.env.Home, Command: []string{"cat", f.path}, Cols: int32(cols), Rows: int32(rows),
	})
	if err != nil {
		b.Fatalf("create a tab running cat %s: %v", f.path, err)
	}
	id := cr.GetTerminal().GetId()
	p.waitExited(ctx, b, id, exited)
	p.waitLastLine(ctx, b, id, f.marker)
	wall := time.Since(start)
	cancel()
	td1, _ := procTimes(strconv.Itoa(p.terminald))
	h1, hk1 := procTimes(strconv.Itoa(p.holder))
	closeCtx, done := context.WithTimeout(context.Background(), 30*time.Second)
	defer done()
	if _, err := p.tc.CloseTerminal(closeCtx, &terminalv1.CloseTerminalRequest{TerminalId: id}); err != nil {
		b.Fatalf("close tab %s: %v", id, err)
	}
	return run{wall: wall.Seconds(), cpu: td1 - td0 + h1 - h0 + hk1 - hk0, terminald: td1 - td0, holder: h1 - h0}
}

// waitExited waits until tab id reports its program exited: pushed on
// exited, or seen by a ListTerminals every 100 ms.
func (p *phantomInstance) waitExited(ctx context.Context, b *testing.B, id string, exited <-chan string) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case got := <-exited:
			if got == id {
				return
			}
		case <-tick.C:
			l, err := p.tc.ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
			if err != nil {
				b.Fatalf("list the tabs while waiting for %s to exit: %v", id, err)
			}
			for _, t := range l.GetTerminals() {
				if t.GetId() == id && t.GetExited() {
					return
				}
			}
		case <-ctx.Done():
			b.Fatalf("tab %s: its cat did not exit in time", id)
		}
	}
}

// waitLastLine reads tab id's last line every millisecond until it is
// want. The program has exited by then, so this is a short window: output
// still in the PTY or being rendered.
func (p *phantomInstance) waitLastLine(ctx context.Context, b *testing.B, id, want string) {
	n := int32(1)
	var last []string
	for {
		r, err := p.tc.ReadOutput(ctx, &terminalv1.ReadOutputRequest{TerminalId: id, Lines: &n})
		if err != nil {
			b.Fatalf("tab %s: read its last line: %v (last read %q, want %q)", id, err, last, want)
		}
		if last = r.GetLines(); len(last) == 1 && last[0] == want {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
