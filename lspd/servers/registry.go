package servers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/reaper"
)

// Options tune a Registry; zero fields take the defaults.
type Options struct {
	// Configs are the user's language servers (config.json's
	// language_servers), merged over Defaults.
	Configs map[string]Config
	// StatePath is where configure saves, over Configs; "" saves nothing.
	StatePath string
	// Launcher is the sandbox launcher (the phantom binary) that starts
	// confined servers; "" refuses to start them.
	Launcher string
	// Reaper starts every language server, when lspd is a child
	// subreaper (see internal/reaper); nil starts them directly.
	Reaper *reaper.Reaper
	// Idle stops a server nobody asked about for this long (30 min).
	Idle time.Duration
	// Quiet is how long a server must say nothing to be settled (300 ms).
	Quiet time.Duration
	// Grace is how long after a change a silent, idle server is taken to
	// have nothing new to say about it (2 s).
	Grace time.Duration
	// RequestTimeout bounds a request; a server that takes longer is
	// taken for hung and restarted (30 s).
	RequestTimeout time.Duration
	// Unheard is how long a server may say nothing after it was sent a
	// document version before lspd asks it something every server answers
	// at once (documentSymbol on that document), to tell a server that is
	// merely quiet from one that hangs while its process lives: a push-only
	// server (gopls, clangd, pylsp) is never asked anything else. An answer
	// not given within RequestTimeout gets the process killed and restarted
	// (10 s).
	Unheard time.Duration
	// StartTimeout bounds initialize (60 s).
	StartTimeout time.Duration
	// BackoffMin and BackoffMax bound the wait before a crashed server is
	// started again (250 ms, 30 s); StableAfter is how long a process must
	// run for the backoff to start over (60 s).
	BackoffMin, BackoffMax, StableAfter time.Duration
	// ShutdownGrace is how long a stopping server may take (2 s).
	ShutdownGrace time.Duration
	// Logger logs; nil discards.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.Idle, 30*time.Minute)
	def(&o.Quiet, 300*time.Millisecond)
	def(&o.Grace, 2*time.Second)
	def(&o.RequestTimeout, 30*time.Second)
	def(&o.Unheard, 10*time.Second)
	def(&o.StartTimeout, 60*time.Second)
	def(&o.BackoffMin, 250*time.Millisecond)
	def(&o.BackoffMax, 30*time.Second)
	def(&o.StableAfter, time.Minute)
	def(&o.ShutdownGrace, 2*time.Second)
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Registry holds the servers, one per (language, workspace root).
type Registry struct {
	opts  Options
	state stateFile

	mu      sync.Mutex
	configs map[string]Config
	// overrides are agents' configurations, by server id: each applies to
	// the one server of its workspace and confinement, until lspd stops.
	overrides map[string]override
	servers   map[string]*Server
	changed   chan struct{}  // closed and replaced whenever any server changes
	stopping  sync.WaitGroup // servers replaced by ensureLocked, stopping
	closed    bool

	stopJanitor chan struct{}
	janitorDone chan struct{}
}

// New makes a registry; Close it to stop every server.
func New(o Options) (*Registry, error) {
	o = o.withDefaults()
	r := &Registry{
		opts: o, state: stateFile{path: o.StatePath}, configs: Defaults(), overrides: map[string]override{},
		servers: map[string]*Server{}, changed: make(chan struct{}),
		stopJanitor: make(chan struct{}), janitorDone: make(chan struct{}),
	}
	saved, err := r.state.load()
	if err != nil {
		return nil, err
	}
	for _, src := range []map[string]Config{o.Configs, saved} {
		for lang, c := range src {
			merged := r.configs[lang].Merge(c)
			if err := merged.Check(lang); err != nil {
				return nil, err
			}
			r.configs[lang] = merged
		}
	}
	go r.janitor()
	return r, nil
}

// Close stops every server and waits until their processes are gone.
func (r *Registry) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	all := slices.Collect(maps.Values(r.servers))
	r.mu.Unlock()
	close(r.stopJanitor)
	<-r.janitorDone
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Go(s.Stop)
	}
	wg.Wait()
	r.stopping.Wait()
}

// notify wakes everyone waiting for a change.
func (r *Registry) notify() {
	r.mu.Lock()
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// changes is closed at the next change.
func (r *Registry) changes() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// janitor stops servers idle longer than Options.Idle.
func (r *Registry) janitor() {
	defer close(r.janitorDone)
	t := time.NewTicker(max(r.opts.Idle/4, 50*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-r.stopJanitor:
			return
		case <-t.C:
		}
		r.mu.Lock()
		var idle []*Server
		for id, s := range r.servers {
			s.mu.Lock()
			if time.Since(s.lastUsed) > r.opts.Idle {
				idle = append(idle, s)
				delete(r.servers, id)
			}
			s.mu.Unlock()
		}
		r.mu.Unlock()
		for _, s := range idle {
			r.opts.Logger.Info("stopping idle language server", "server", s.id)
			s.Stop()
		}
	}
}

// Languages lists the configured languages.
func (r *Registry) Languages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.configs))
}

// serverFor returns the server for the file at path in conf, starting it
// if needed; nil means no server is configured for its extension.
func (r *Registry) serverFor(path string, conf Confinement) (*Server, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	lang := languageOf(r.configs, path)
	if lang == "" {
		return nil, nil
	}
	return r.ensureLocked(lang, findRoot(r.configs[lang].RootMarkers, filepath.Dir(path)), conf)
}

// configLocked is the configuration of the server id of lang: an agent's
// override of that very server, else the language's.
func (r *Registry) configLocked(id, lang string) Config {
	if o, ok := r.overrides[id]; ok {
		return o.cfg
	}
	return r.configs[lang]
}

// ensureLocked returns the server of lang at root in conf, starting it if
// needed. A running one whose sandbox rules differ from conf's (the tab's
// rules changed) is not reused: it is stopped and replaced.
func (r *Registry) ensureLocked(lang, root string, conf Confinement) (*Server, error) {
	if r.closed {
		return nil, fmt.Errorf("lspd is stopping")
	}
	id := serverID(lang, root, conf.Key)
	if s, ok := r.servers[id]; ok && !s.stopped() {
		if slices.Equal(s.conf.Flags, conf.Flags) && s.conf.Confined() == conf.Confined() {
			return s, nil
		}
		r.stopping.Go(s.Stop)
	}
	s := newServer(r, lang, root, conf, r.configLocked(id, lang))
	r.servers[id] = s
	return s, nil
}

// Restart restarts the server id, which must be within scope, and waits
// (within ctx, and at most RestartTimeout) until the new process
// initialized or failed to: a server that cannot start fails the call at
// once with its own error (its exit status and last output).
func (r *Registry) Restart(ctx context.Context, id string, sc Scope) (Info, error) {
	s, err := r.get(id, sc)
	if err != nil {
		return Info{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.RestartTimeout())
	defer cancel()
	if err := r.awaitStart(ctx, s, s.Restart()); err != nil {
		return s.Info(), err
	}
	return s.Info(), nil
}

// RestartTimeout bounds Restart: the old process's shutdown, the new
// one's initialize, and a margin (70 s by default, as
// restart_language_server's option states).
func (r *Registry) RestartTimeout() time.Duration {
	return r.opts.ShutdownGrace + r.opts.StartTimeout + 8*time.Second
}

// awaitStart waits until a start of s after start number after ended:
// nil when the process initialized, else the error it failed with.
func (r *Registry) awaitStart(ctx context.Context, s *Server, after int) error {
	for {
		ch := r.changes()
		s.mu.Lock()
		ended, st, last, cmd := s.finished > after, s.state, s.lastErr, strings.Join(s.cfg.Command, " ")
		s.mu.Unlock()
		switch {
		case ended:
			return s.cannotStart()
		case s.stopped():
			return fmt.Errorf("language server %s was stopped before it started: %w", s.id, errdefs.ErrFailedPrecondition)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("language server %s (%s) did not start within the time allowed; it is %s (last error: %s): %w",
					s.id, cmd, st, orNone(last), errdefs.ErrFailedPrecondition)
			}
			return ctx.Err()
		}
	}
}

// startError says that a server cannot start, and why in its own words.
func startError(id, cmd string, err error) error {
	return fmt.Errorf("language server %s (%s) cannot start: %v; fix its command with configure_language_server, or see list_language_servers: %w",
		id, cmd, err, errdefs.ErrFailedPrecondition)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
