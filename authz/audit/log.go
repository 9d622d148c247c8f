package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// FileName is the log's name in the state directory; rotated files are
// FileName.1 (the newest) to FileName.<Keep>.
const FileName = "audit.jsonl"

// Defaults for Options.
const (
	// DefaultMaxSize is the size at which the log is rotated.
	DefaultMaxSize = 8 << 20
	// DefaultKeep is how many rotated files are kept.
	DefaultKeep = 4
	// DefaultQueue is how many lines may wait for the writer.
	DefaultQueue = 4096
	// DefaultCommitTimeout bounds how long Commit waits for its line to
	// be on disk.
	DefaultCommitTimeout = 5 * time.Second
)

// Options configure a Log; zero values take the defaults.
type Options struct {
	MaxSize       int64
	Keep          int
	Queue         int
	CommitTimeout time.Duration
	Now           func() time.Time
	Logger        *slog.Logger
}

// Status is the state of the log, for `phantom status`.
type Status struct {
	Path string
	// Problem is why the last write failed; nil when it succeeded.
	Problem error
	// FailingSince is when writes began to fail; zero when they do not.
	FailingSince time.Time
	// Lost counts the lines not written (failed or dropped) since Open.
	Lost uint64
}

// Log appends entries to the audit log. Its methods are safe for
// concurrent use.
type Log struct {
	path string
	o    Options
	ch   chan request
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	problem error
	since   time.Time
	lost    uint64
	closed  bool

	// The writer goroutine's own.
	f    *os.File
	fi   os.FileInfo // f's, to notice the file removed or moved by hand
	size int64
	held map[string]struct{} // digests of the long texts f holds (see refer)
}

type request struct {
	entry Entry
	sync  bool
	done  chan error // nil for Record
}

// Open starts a log writing to path; nothing is opened until the first
// line. Close stops it.
func Open(path string, o Options) *Log {
	if o.MaxSize <= 0 {
		o.MaxSize = DefaultMaxSize
	}
	if o.Keep <= 0 {
		o.Keep = DefaultKeep
	}
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.CommitTimeout <= 0 {
		o.CommitTimeout = DefaultCommitTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	l := &Log{path: path, o: o, ch: make(chan request, o.Queue), stop: make(chan struct{}), done: make(chan struct{}),
		held: map[string]struct{}{}}
	go l.run()
	return l
}

// Path is the log file.
func (l *Log) Path() string { return l.path }

// Record appends e in the background. It never blocks: when the writer
// is that far behind, the line is dropped and counted as lost.
func (l *Log) Record(e Entry) {
	l.stamp(&e)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	select {
	case l.ch <- request{entry: e}:
	default:
		l.failLocked(fmt.Errorf("audit log %s: %d lines already wait to be written; a line was dropped", l.path, cap(l.ch)), 1)
	}
}

// Commit appends e and waits until it is on disk (written and synced),
// for at most the commit timeout. An error means the line may not be
// recorded: the caller should not do what it records.
func (l *Log) Commit(ctx context.Context, e Entry) error {
	l.stamp(&e)
	ctx, cancel := context.WithTimeout(ctx, l.o.CommitTimeout)
	defer cancel()
	r := request{entry: e, sync: true, done: make(chan error, 1)}
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return fmt.Errorf("audit log %s is closed (authz is stopping): %w", l.path, errdefs.ErrUnavailable)
	}
	select {
	case l.ch <- r:
	case <-ctx.Done():
		err := fmt.Errorf("audit log %s: the writer is too far behind (waited %s): %w", l.path, l.o.CommitTimeout, errdefs.ErrUnavailable)
		l.fail(err, 1)
		return err
	case <-l.stop:
		return fmt.Errorf("audit log %s is closed (authz is stopping): %w", l.path, errdefs.ErrUnavailable)
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		// The line may still be written; the caller must assume not.
		return fmt.Errorf("audit log %s: writing took longer than %s: %w", l.path, l.o.CommitTimeout, errdefs.ErrUnavailable)
	}
}

// Status reports how writing goes.
func (l *Log) Status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Status{Path: l.path, Problem: l.problem, FailingSince: l.since, Lost: l.lost}
}

// Close writes what is queued and stops the writer.
func (l *Log) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	close(l.stop)
	l.mu.Unlock()
	<-l.done
}

// stamp sets e's time, when unset, to now: when it was recorded, not
// when the writer got to it.
func (l *Log) stamp(e *Entry) {
	if e.Time.IsZero() {
		e.Time = l.o.Now()
	}
}

// encode stamps e with the time and makes it one line.
func (l *Log) encode(e Entry) ([]byte, error) {
	l.stamp(&e)
	e.Time = e.Time.UTC()
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("audit log %s: encode %s entry: %w", l.path, e.Event, err)
	}
	return append(b, '\n'), nil
}

// run is the writer goroutine.
func (l *Log) run() {
	defer close(l.done)
	defer func() {
		if l.f != nil {
			l.f.Close()
		}
	}()
	for {
		select {
		case r := <-l.ch:
			l.handle(r)
		case <-l.stop:
			for {
				select {
				case r := <-l.ch:
					l.handle(r)
				default:
					return
				}
			}
		}
	}
}

// handle writes one line and reports how it went.
func (l *Log) handle(r request) {
	err := l.write(r.entry, r.sync)
	if err != nil {
		l.fail(err, 1)
	} else {
		l.ok()
	}
	if r.done != nil {
		r.done <- err
	}
}

// write appends e's line, rotating first when it would pass the size
// bound. The line is made for the file it lands in: its long texts refer
// only to lines of that file (see refer).
func (l *Log) write(e Entry, sync bool) error {
	if l.f != nil {
		// Removed or moved aside by hand (or by another rotation): start
		// a new file where readers look, rather than write to a lost one.
		if fi, err := os.Lstat(l.path); err != nil || !os.SameFile(fi, l.fi) {
			l.f.Close()
			l.f = nil
		}
	}
	if l.f == nil {
		if err := l.open(); err != nil {
			return err
		}
	}
	line, fresh, err := l.line(e)
	if err != nil {
		return err
	}
	if l.size > 0 && l.size+int64(len(line)) > l.o.MaxSize {
		if err := l.rotate(); err != nil {
			return err
		}
		if err := l.open(); err != nil {
			return err
		}
		if line, fresh, err = l.line(e); err != nil {
			return err
		}
	}
	n, err := l.f.Write(line)
	if err != nil {
		// A line cut short (a full disk) is taken back, so the next line
		// does not continue it; a reader skips one that stays.
		if n > 0 {
			_ = l.f.Truncate(l.size)
		}
		return fmt.Errorf("write audit log %s: %w", l.path, err)
	}
	l.size += int64(n)
	l.remember(fresh)
	if sync {
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("sync audit log %s: %w", l.path, err)
		}
	}
	return nil
}

// open opens the log for appending, creating it (and its folder) private
// to the user. A symbolic link in its place is refused.
func (l *Log) open() error {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("create the audit log's folder %s: %w", filepath.Dir(l.path), err)
	}
	fd, err := unix.Open(l.path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return fmt.Errorf("audit log %s is a symbolic link; remove it", l.path)
	}
	if err != nil {
		return fmt.Errorf("open audit log %s: %w", l.path, err)
	}
	f := os.NewFile(uintptr(fd), l.path)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat audit log %s: %w", l.path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("audit log %s is not a regular file", l.path)
	}
	if fi.Mode().Perm() != 0o600 {
		_ = f.Chmod(0o600)
	}
	l.f, l.fi, l.size = f, fi, fi.Size()
	l.forgetTexts()
	return nil
}

// line is e's line for the current file, and the digests of the texts it
// writes in full.
func (l *Log) line(e Entry) ([]byte, []string, error) {
	e, fresh := l.refer(e)
	b, err := l.encode(e)
	return b, fresh, err
}

// rotate closes the log and shifts the files: FileName.<n> becomes .<n+1>
// (the oldest is dropped), the log becomes .1.
func (l *Log) rotate() error {
	l.f.Close()
	l.f, l.size = nil, 0
	for i := l.o.Keep - 1; i >= 1; i-- {
		err := os.Rename(rotated(l.path, i), rotated(l.path, i+1))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("rotate audit log %s: %w", l.path, err)
		}
	}
	if err := os.Rename(l.path, rotated(l.path, 1)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("rotate audit log %s: %w", l.path, err)
	}
	return nil
}

// rotated is the name of the n-th rotated file.
func rotated(path string, n int) string { return path + "." + strconv.Itoa(n) }

// Files returns the log's files that exist, oldest first: the rotated
// ones, then the log itself.
func Files(path string) []string {
	var out []string
	for i := 1; ; i++ {
		p := rotated(path, i)
		if _, err := os.Lstat(p); err != nil {
			break
		}
		out = append(out, p)
	}
	slices.Reverse(out)
	if _, err := os.Lstat(path); err == nil {
		out = append(out, path)
	}
	return out
}

// fail records a failed or dropped line.
func (l *Log) fail(err error, lost uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failLocked(err, lost)
}

func (l *Log) failLocked(err error, lost uint64) {
	if l.problem == nil {
		l.since = l.o.Now()
		l.o.Logger.Error("audit log: a line could not be written", "path", l.path, "err", err)
	}
	l.problem = err
	l.lost += lost
}

// ok records a line written: the writes work (again).
func (l *Log) ok() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.problem != nil {
		l.o.Logger.Info("audit log: writing again", "path", l.path, "lost", l.lost)
	}
	l.problem, l.since = nil, time.Time{}
}
