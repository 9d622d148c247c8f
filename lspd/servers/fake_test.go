package servers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// fakeRegistry is a registry whose only language, "fake" (files *.fake),
// is served by the fake server, recording its starts in the returned
// directory, which is also the workspace root. env is added to the
// server's environment.
func fakeRegistry(t *testing.T, o Options, env map[string]string) (*Registry, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{"fake.root": ""})
	e := map[string]string{fakeEnv: "1", "FAKE_LSP_DIR": dir}
	for k, v := range env {
		e[k] = v
	}
	o.Configs = map[string]Config{"fake": {Command: []string{exe}, Env: e, Extensions: []string{"fake"}, RootMarkers: [][]string{{"fake.root"}}}}
	return newRegistry(t, o), dir
}

// TestFakeContract: what "settled" and "current" mean, step by step, with
// a server doing exactly what each document says.
func TestFakeContract(t *testing.T) {
	const quiet, grace = 200 * time.Millisecond, 1500 * time.Millisecond
	// older, as a step's reflects, is an earlier version than the disk's
	// (the write's truncation may be one of them).
	const older = -2
	type step struct {
		body     string
		wait     time.Duration // the call's bound
		settled  bool
		current  bool
		messages string
		minWait  time.Duration // the answer cannot come sooner
		reflects int           // the step whose disk content the diagnostics reflect, -1 none, or older
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"settled only after progress ends and the quiet period", []step{
			{body: "begin\nerror: boom\npublish\nsleep 600ms\nend\n", wait: 0, settled: false, current: false, reflects: -1},
			{body: "", wait: 10 * time.Second, settled: true, current: true, messages: "boom", minWait: 600 * time.Millisecond, reflects: 0},
		}},
		// Without progress, work longer than the quiet period cannot be told
		// from being done; a publish within it starts it over.
		{"a publish starts the quiet period over", []step{
			{body: "error: early\npublish\nsleep 80ms\nerror: late\npublish\n", wait: 10 * time.Second, settled: true, current: true, messages: "early\nlate", minWait: 80*time.Millisecond + quiet, reflects: 0},
		}},
		{"a publish for an older version does not count as current", []step{
			{body: "error: one\npublish\n", wait: 10 * time.Second, settled: true, current: true, messages: "one", reflects: 0},
			{body: "error: two\npublish-old\n", wait: grace / 2, settled: false, current: false, messages: "two", minWait: grace / 2, reflects: older},
		}},
		{"a silent server is taken to have nothing new after the grace", []step{
			{body: "error: one\npublish\n", wait: 10 * time.Second, settled: true, current: true, messages: "one", reflects: 0},
			{body: "silent\n", wait: 10 * time.Second, settled: true, current: true, messages: "one", minWait: grace, reflects: 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, dir := fakeRegistry(t, Options{Quiet: quiet, Grace: grace}, nil)
			path := filepath.Join(dir, "a.fake")
			var stamps []Stamp
			for i, st := range tt.steps {
				if st.body != "" {
					write(t, dir, map[string]string{"a.fake": st.body})
				}
				_, stamp, err := readFile(path)
				if err != nil {
					t.Fatal(err)
				}
				stamps = append(stamps, stamp)
				rep := settled(t, r, path, st.wait)
				if len(rep.Files) != 1 {
					t.Fatalf("step %d: %d files, want 1: %+v", i, len(rep.Files), rep)
				}
				f := rep.Files[0]
				var msgs []string
				for _, d := range f.Diagnostics {
					msgs = append(msgs, d.Message)
				}
				var want Stamp
				if st.reflects >= 0 {
					want = stamps[st.reflects]
				}
				reflectsOK := f.Reflects == want
				if st.reflects == older {
					reflectsOK = !f.Reflects.IsZero() && f.Reflects != stamp
				}
				if rep.Settled != st.settled || f.Settled != st.settled || f.Current() != st.current || strings.Join(msgs, "\n") != st.messages ||
					rep.Waited < st.minWait || !reflectsOK {
					t.Fatalf("step %d (%q, wait %v): settled %v, current %v, messages %q, waited %v, reflects %+v\nwant settled %v, current %v, messages %q, waited ≥ %v, reflects step %d (%+v)",
						i, st.body, st.wait, rep.Settled, f.Current(), msgs, rep.Waited, f.Reflects, st.settled, st.current, st.messages, st.minWait, st.reflects, want)
				}
			}
		})
	}
}

// TestFakeRecovers: a server that crashes or hangs (alive, not reading)
// on a document is replaced, says why it was, and its successor gets the
// document again and answers.
func TestFakeRecovers(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		lastErr string
	}{
		{"crash", "crash-once\nerror: back\npublish\n", "fake: crashing as told"},
		{"hang", "hang-once\nerror: back\npublish\n", "did not answer textDocument/documentSymbol on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, dir := fakeRegistry(t, Options{BackoffMin: 20 * time.Millisecond, Unheard: 100 * time.Millisecond, RequestTimeout: 300 * time.Millisecond}, nil)
			write(t, dir, map[string]string{"a.fake": tt.body})
			rep := settled(t, r, filepath.Join(dir, "a.fake"), 20*time.Second)
			info := r.List(Everyone)[0]
			if !rep.Settled || messages(rep) != "a.fake: back" || info.Restarts != 1 || !strings.Contains(info.LastError, tt.lastErr) || info.State != Ready {
				t.Fatalf("settled %v, diagnostics %q, server %+v\nwant settled with back from a ready server restarted once, last error with %q", rep.Settled, messages(rep), info, tt.lastErr)
			}
		})
	}
}

// TestFakeBackoff: a server that exits at every start is started again
// after waits that double from BackoffMin up to BackoffMax.
func TestFakeBackoff(t *testing.T) {
	const lo, hi = 40 * time.Millisecond, 160 * time.Millisecond
	r, dir := fakeRegistry(t, Options{BackoffMin: lo, BackoffMax: hi}, map[string]string{"FAKE_LSP_EXIT_AT_START": "1"})
	write(t, dir, map[string]string{"a.fake": "publish\n"})
	path := filepath.Join(dir, "a.fake")
	// A server that cannot start fails the query with its error.
	if _, err := r.Diagnostics(context.Background(), Query{Path: path}); err == nil || !strings.Contains(err.Error(), "told to exit at start") {
		t.Fatalf("Diagnostics = %v; want the server's error", err)
	}
	want := []time.Duration{lo, 2 * lo, hi, hi, hi}
	var starts []time.Time
	for deadline := time.Now().Add(20 * time.Second); len(starts) <= len(want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d starts within 20s, want %d", len(starts), len(want)+1)
		}
		var err error
		if starts, err = fakeStarts(dir); err != nil {
			t.Fatal(err)
		}
	}
	info := r.List(Everyone)[0]
	r.Close()
	// A gap is the backoff plus starting a process, which a loaded
	// machine can stretch without limit: only a gap shorter than the
	// backoff is wrong.
	for i, w := range want {
		if gap := starts[i+1].Sub(starts[i]); gap < w {
			t.Errorf("start %d came %v after the one before, want at least the backoff %v", i+1, gap, w)
		}
	}
	if info.State != Crashed && info.State != Starting || !strings.Contains(info.LastError, "told to exit at start") || info.Restarts < len(want) {
		t.Errorf("server %+v, want crashed or starting again, restarted ≥ %d times, last error naming the exit", info, len(want))
	}
}

// TestFakeIdleStop: a server nobody asks about for Idle is stopped and its
// process is gone.
func TestFakeIdleStop(t *testing.T) {
	const idle = 300 * time.Millisecond
	r, dir := fakeRegistry(t, Options{Idle: idle}, nil)
	write(t, dir, map[string]string{"a.fake": "error: x\npublish\n"})
	used := time.Now()
	if rep := settled(t, r, filepath.Join(dir, "a.fake"), 10*time.Second); !rep.Settled {
		t.Fatalf("not settled: %+v", rep)
	}
	// On a loaded machine the idle period may already have run out while
	// the answer settled: then the server is gone before its pid is seen.
	pid := 0
	if l := r.List(Everyone); len(l) > 0 {
		pid = l[0].PID
	}
	for deadline := time.Now().Add(10 * time.Second); len(r.List(Everyone)) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still running 10s after its last use: %+v", r.List(Everyone))
		}
	}
	if since := time.Since(used); since < idle {
		t.Errorf("stopped %v after its last use, before the idle period %v", since, idle)
	}
	for deadline := time.Now().Add(5 * time.Second); pid != 0 && processAlive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the stopped server's process %d lives on", pid)
		}
	}
}

// TestFakeRestart: Restart replaces the process, reopens the documents,
// and names what it does not know.
func TestFakeRestart(t *testing.T) {
	r, dir := fakeRegistry(t, Options{}, nil)
	write(t, dir, map[string]string{"a.fake": "error: x\npublish\n"})
	path := filepath.Join(dir, "a.fake")
	settled(t, r, path, 10*time.Second)
	before := r.List(Everyone)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	after, err := r.Restart(ctx, before.ID, Everyone)
	if err != nil || after.Restarts != 1 || after.PID == before.PID || after.State != Ready || processAlive(before.PID) {
		t.Fatalf("Restart(%s) = %+v, %v; want restarts 1, a new pid, ready, the old process %d gone", before.ID, after, err, before.PID)
	}
	if starts, _ := fakeStarts(dir); len(starts) != 2 {
		t.Errorf("%d starts, want 2", len(starts))
	}
	if rep := settled(t, r, path, 10*time.Second); !rep.Settled || messages(rep) != "a.fake: x" {
		t.Errorf("after the restart: settled %v, %q; want settled with x", rep.Settled, messages(rep))
	}
	if _, err := r.Restart(ctx, "fake:/nowhere", Everyone); !errors.Is(err, errdefs.ErrNotFound) || !strings.Contains(err.Error(), before.ID) {
		t.Errorf("Restart of an unknown id: %v, want not found listing %s", err, before.ID)
	}
}
