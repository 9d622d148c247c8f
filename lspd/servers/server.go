package servers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/lspd/lsp"
)

// State is where a server is in its life.
type State int

// The states of a server.
const (
	Starting State = iota + 1
	Indexing
	Ready
	Crashed
	Stopped
)

func (s State) String() string {
	return [...]string{"unknown", "starting", "indexing", "ready", "crashed", "stopped"}[s]
}

// Info is a server as list_language_servers shows it.
type Info struct {
	ID, Language, Root string
	Command            []string
	// Sandbox says where the server runs (Confinement.Label).
	Sandbox string
	// Configured says what configuration it runs: "" for the language's
	// own, else for whom an agent's configuration applies.
	Configured  string
	PID         int
	State       State
	Restarts    int
	LastError   string
	MemoryBytes int64
	OpenFiles   int
}

// Server is the language server of one (language, root). Its documents
// and diagnostics outlive its processes: after a restart the documents
// are opened again from disk.
type Server struct {
	id, language, root string
	conf               Confinement
	reg                *Registry

	// sendMu orders what is sent (document versions must rise in the order
	// sent). The reader goroutine never takes it, so a server blocked on
	// writing to us cannot deadlock a sender holding it.
	sendMu sync.Mutex

	mu       sync.Mutex
	cfg      Config
	state    State
	inst     *instance
	pid      int
	restarts int
	lastErr  string
	// attempts counts the starts begun, finished those that ended (the
	// process initialized, or failed to), and startErr is why the last
	// one that ended failed, nil when it initialized: a server whose
	// latest start failed cannot start, and calls waiting on it end with
	// that error (see awaitStart).
	attempts, finished int
	startErr           error
	lastUsed           time.Time
	pull               bool
	docs               map[string]*doc
	diags              map[string]*fileDiags
	progress           map[string]bool
	activity           time.Time // last progress or diagnostics, or last version sent
	heard              time.Time // last message from the process
	probing            bool      // a liveness probe is out
	probes             sync.WaitGroup

	restart chan struct{} // asks the supervisor for a restart now
	stop    chan struct{}
	done    chan struct{} // closed when the supervisor returned
	watch   *watcher
}

func newServer(reg *Registry, language, root string, conf Confinement, cfg Config) *Server {
	s := &Server{
		id: serverID(language, root, conf.Key), language: language, root: root, conf: conf, reg: reg, cfg: cfg,
		state: Starting, lastUsed: time.Now(),
		docs: map[string]*doc{}, diags: map[string]*fileDiags{}, progress: map[string]bool{},
		restart: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go s.supervise()
	if w, err := newWatcher(root, s.diskChanged); err == nil {
		s.watch = w
	} else {
		reg.opts.Logger.Warn("no file watcher", "server", s.id, "err", err)
	}
	return s
}

// supervise runs the server's processes one after another until stopped:
// a process that exits or hangs is replaced after a backoff that doubles
// up to a bound and starts over once a process ran for a while.
func (s *Server) supervise() {
	defer close(s.done)
	defer s.probes.Wait()
	o := s.reg.opts
	wait := o.BackoffMin
	for {
		began := time.Now()
		inst, err := s.start()
		requested := false
		if err == nil {
			var stopped bool
			if err, requested, stopped = s.run(inst); stopped {
				s.setState(Stopped, nil)
				return
			}
		}
		if time.Since(began) > o.StableAfter || requested {
			wait = o.BackoffMin
		}
		if !requested {
			s.setState(Crashed, err)
			select {
			case <-time.After(wait):
			case <-s.restart:
			case <-s.stop:
				s.setState(Stopped, nil)
				return
			}
			wait = min(wait*2, o.BackoffMax)
		}
		s.mu.Lock()
		s.restarts++
		s.mu.Unlock()
	}
}

// run watches a started process until it exits, a restart is asked for
// or the server stops, checking meanwhile that it is alive (see probe).
func (s *Server) run(inst *instance) (exit error, requested, stopped bool) {
	o := s.reg.opts
	tick := time.NewTicker(max(o.Unheard/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-inst.exited:
			return inst.err, false, false
		case <-s.restart:
			inst.shutdown(o.ShutdownGrace)
			return nil, true, false
		case <-s.stop:
			inst.shutdown(o.ShutdownGrace)
			return nil, false, true
		case now := <-tick.C:
			if path, ok := s.probeDue(now); ok {
				go s.probe(inst, path)
			}
		}
	}
}

// start launches a process and initializes it; then the documents lspd
// had open are opened in it again, from disk.
func (s *Server) start() (inst *instance, err error) {
	s.mu.Lock()
	cfg := s.cfg
	s.state, s.inst, s.pid = Starting, nil, 0
	clear(s.progress)
	// A restart asked for before this start began is this start.
	select {
	case <-s.restart:
	default:
	}
	s.attempts++
	attempt := s.attempts
	s.mu.Unlock()
	s.reg.notify()
	defer func() {
		if err == nil {
			return // finished when it was up, below
		}
		s.mu.Lock()
		s.finished, s.startErr, s.lastErr = attempt, err, err.Error()
		s.mu.Unlock()
		s.reg.notify()
	}()
	inst, err = launch(s.reg.opts.Reaper, s.reg.opts.Launcher, cfg, s.root, s.conf, handler{s: s})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.inst, s.pid = inst, inst.pid()
	s.mu.Unlock()
	res, err := inst.initialize(cfg, s.root, s.reg.opts.StartTimeout)
	if err != nil {
		inst.kill()
		<-inst.exited
		return nil, err
	}
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	s.pull = len(res.Capabilities.DiagnosticProvider) > 0 && string(res.Capabilities.DiagnosticProvider) != "null"
	s.state = Ready
	if len(s.progress) > 0 {
		s.state = Indexing
	}
	s.finished, s.startErr = attempt, nil
	paths := make([]string, 0, len(s.docs))
	for p, d := range s.docs {
		d.open = false
		paths = append(paths, p)
	}
	s.mu.Unlock()
	s.reg.notify()
	for _, p := range paths {
		_ = s.syncLocked(p)
	}
	return inst, nil
}

// setState records a state change and, for a crash, why.
func (s *Server) setState(st State, err error) {
	s.mu.Lock()
	s.state = st
	if st != Ready && st != Indexing {
		s.inst, s.pid = nil, 0
	}
	if err != nil {
		s.lastErr = err.Error()
	}
	s.mu.Unlock()
	s.reg.notify()
}

// Restart replaces the server's process now. It returns the number of
// the last start begun before: the restart is the start after it (see
// awaitStart).
func (s *Server) Restart() (after int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.restart <- struct{}{}:
	default:
	}
	return s.attempts
}

// cannotStart says why the server's latest start failed; nil when it
// initialized or none ended yet.
func (s *Server) cannotStart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.startErr == nil {
		return nil
	}
	return startError(s.id, strings.Join(s.cfg.Command, " "), s.startErr)
}

// Stop stops the server and waits until its process is gone.
func (s *Server) Stop() {
	s.mu.Lock()
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.mu.Unlock()
	<-s.done
	if s.watch != nil {
		s.watch.close()
	}
}

// stopped reports whether Stop was called.
func (s *Server) stopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// Info describes the server.
func (s *Server) Info() Info {
	note := s.reg.overrideNote(s.id) // before s.mu: the registry's lock comes first
	s.mu.Lock()
	defer s.mu.Unlock()
	open := 0
	for _, d := range s.docs {
		if d.open {
			open++
		}
	}
	return Info{
		ID: s.id, Language: s.language, Root: s.root, Command: slices.Clone(s.cfg.Command),
		Sandbox: s.conf.Label, Configured: note,
		PID: s.pid, State: s.state, Restarts: s.restarts, LastError: s.lastErr,
		MemoryBytes: rss(s.pid), OpenFiles: open,
	}
}

// up reports whether a process is initialized (under s.mu).
func (s *Server) up() bool { return s.state == Ready || s.state == Indexing }

// running reports whether the server's process is still alive (under
// s.mu). Its exit is noticed when the supervisor reaps it, a moment after
// it died: in that moment its last diagnostics must not be called settled.
func (s *Server) running() bool {
	if s.pid <= 0 {
		return false
	}
	st, err := procfs.Default.Stat(s.pid)
	return err == nil && st.State != 'Z' && st.State != 'X'
}

// sync gives the server path's content on disk, if it differs from what
// the server has: didOpen the first time, didChange (full text) after.
// A file that is gone is closed.
func (s *Server) sync(path string) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	return s.syncLocked(path)
}

func (s *Server) syncLocked(path string) error {
	text, st, rerr := readFile(path)
	now := time.Now()
	s.mu.Lock()
	s.lastUsed = now
	d := s.docs[path]
	if rerr != nil {
		delete(s.docs, path)
		delete(s.diags, path)
		inst, wasOpen := s.inst, d != nil && d.open && s.up()
		s.mu.Unlock()
		if wasOpen {
			_ = inst.conn.Notify("textDocument/didClose", lsp.DidCloseParams{TextDocument: lsp.TextDocumentIdentifier{URI: lsp.FileURI(path)}})
		}
		return rerr
	}
	if d == nil {
		d = &doc{}
		s.docs[path] = d
	}
	if !s.up() || (d.open && d.stamp == st) {
		s.mu.Unlock()
		return nil
	}
	inst, wasOpen := s.inst, d.open
	v := d.advance(st, now)
	d.open = true
	s.activity = now
	s.mu.Unlock()
	uri := lsp.FileURI(path)
	var err error
	if wasOpen {
		err = inst.conn.Notify("textDocument/didChange", lsp.DidChangeParams{
			TextDocument:   lsp.VersionedTextDocumentIdentifier{URI: uri, Version: v},
			ContentChanges: []lsp.ContentChange{{Text: string(text)}},
		})
	} else {
		err = inst.conn.Notify("textDocument/didOpen", lsp.DidOpenParams{TextDocument: lsp.TextDocumentItem{
			URI: uri, LanguageID: s.language, Version: v, Text: string(text),
		}})
	}
	if err != nil {
		return fmt.Errorf("give %s to %s: %w", path, s.id, err)
	}
	return nil
}

// pullDiagnostics asks a server that supports it for path's diagnostics
// (textDocument/diagnostic); the answer reflects the version last sent,
// since a server handles messages in order. A server that does not answer
// in time is taken for hung.
func (s *Server) pullDiagnostics(ctx context.Context, path string) {
	s.mu.Lock()
	inst, pull, d := s.inst, s.pull && s.up(), s.docs[path]
	var v int32
	var st Stamp
	if d != nil {
		v, st = d.version, d.stamp
	}
	s.mu.Unlock()
	if !pull || d == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.reg.opts.RequestTimeout)
	defer cancel()
	var rep lsp.DocumentDiagnosticReport
	err := inst.conn.Call(ctx, "textDocument/diagnostic", lsp.DocumentDiagnosticParams{TextDocument: lsp.TextDocumentIdentifier{URI: lsp.FileURI(path)}}, &rep)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		inst.fail(fmt.Errorf("did not answer textDocument/diagnostic on %s within %v", path, s.reg.opts.RequestTimeout))
		return
	case err != nil:
		return
	}
	s.mu.Lock()
	fd := s.diags[path]
	if rep.Kind == "full" || fd == nil {
		fd = &fileDiags{items: rep.Items}
	}
	fd.version, fd.reflects, fd.at = v, st, time.Now()
	s.diags[path] = fd
	s.activity = fd.at
	s.mu.Unlock()
	s.reg.notify()
}

// report is what is known of path now. Diagnostics are settled when the
// server is idle — no progress token open and Quiet passed since it last
// said or was sent anything — and they reflect the latest version sent: a
// publish for that version, or, from a server that stays silent after a
// change (nothing to republish), Grace of idleness after it was sent.
func (s *Server) report(path string, disk Stamp, now time.Time) FileReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.reg.opts
	idle := s.up() && s.running() && len(s.progress) == 0 && now.Sub(s.activity) >= o.Quiet
	r := FileReport{Path: path, ServerID: s.id, Disk: disk}
	fd, d := s.diags[path], s.docs[path]
	if fd != nil {
		r.Diagnostics, r.Reflects = fd.items, fd.reflects
	}
	switch {
	case d != nil && d.open:
		caughtUp := fd != nil && fd.version == d.version && !fd.reflects.IsZero()
		if !caughtUp && idle && now.Sub(d.sent) >= o.Grace {
			caughtUp, r.Reflects = true, d.stamp
		}
		r.Settled = caughtUp && idle && r.Reflects == disk
	case fd != nil:
		r.Settled = idle && r.Reflects == disk
	}
	return r
}

// pushed lists the files the server reported on under dir (or all).
func (s *Server) pushed(under func(string) bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for p := range s.diags {
		if under(p) {
			out = append(out, p)
		}
	}
	return out
}

// diskChanged is the watcher's news of path: an open document is given
// its new content; any other file is announced with didChangeWatchedFiles
// (a go.mod, a header, a file another process wrote).
func (s *Server) diskChanged(path string, kind int) {
	s.mu.Lock()
	d, inst, up := s.docs[path], s.inst, s.up()
	s.mu.Unlock()
	if d != nil {
		_ = s.sync(path)
	}
	if up {
		_ = inst.conn.Notify("workspace/didChangeWatchedFiles", lsp.DidChangeWatchedFilesParams{
			Changes: []lsp.FileEvent{{URI: lsp.FileURI(path), Type: kind}},
		})
	}
}

// handler is what a server's process sends, applied to s. Messages of a
// process that is no longer s's current one are dropped.
type handler struct{ s *Server }

func (h handler) Notify(method string, params json.RawMessage) {
	s := h.s
	s.heardNow()
	switch method {
	case "textDocument/publishDiagnostics":
		var p lsp.PublishDiagnosticsParams
		if json.Unmarshal(params, &p) != nil {
			return
		}
		path, err := p.URI.Path()
		if err != nil {
			return
		}
		h.published(path, p)
	case "$/progress":
		var p lsp.ProgressParams
		if json.Unmarshal(params, &p) != nil {
			return
		}
		s.mu.Lock()
		switch p.Value.Kind {
		case "begin":
			s.progress[string(p.Token)] = true
		case "end":
			delete(s.progress, string(p.Token))
		}
		if s.up() {
			s.state = Ready
			if len(s.progress) > 0 {
				s.state = Indexing
			}
		}
		s.activity = time.Now()
		s.mu.Unlock()
		s.reg.notify()
	}
}

// published stores a push: with a version, it reflects the disk content
// that version carried; without, the latest version sent (servers handle
// messages in order); for a file lspd never opened, the disk as it is now.
func (h handler) published(path string, p lsp.PublishDiagnosticsParams) {
	s := h.s
	fd := &fileDiags{items: p.Diagnostics, at: time.Now()}
	s.mu.Lock()
	d := s.docs[path]
	switch {
	case d != nil && p.Version != nil:
		fd.version, fd.reflects = *p.Version, d.stamps[*p.Version]
	case d != nil && d.open:
		fd.version, fd.reflects = d.version, d.stamp
	default:
		s.mu.Unlock()
		_, st, err := readFile(path)
		if err != nil && !os.IsNotExist(err) {
			return
		}
		s.mu.Lock()
		fd.reflects = st
	}
	s.diags[path] = fd
	s.activity = fd.at
	s.mu.Unlock()
	s.reg.notify()
}

func (h handler) Request(method string, params json.RawMessage) (any, error) {
	s := h.s
	s.heardNow()
	switch method {
	case "window/workDoneProgress/create", "client/registerCapability", "client/unregisterCapability",
		"window/showMessageRequest", "workspace/diagnostic/refresh", "workspace/semanticTokens/refresh",
		"workspace/inlayHint/refresh", "workspace/codeLens/refresh":
		return nil, nil
	case "workspace/workspaceFolders":
		return []lsp.WorkspaceFolder{{URI: lsp.FileURI(s.root), Name: s.root}}, nil
	case "workspace/configuration":
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		_ = json.Unmarshal(params, &p)
		s.mu.Lock()
		settings := s.cfg.Settings
		s.mu.Unlock()
		var all map[string]json.RawMessage
		_ = json.Unmarshal(settings, &all)
		out := make([]json.RawMessage, len(p.Items))
		for i, it := range p.Items {
			switch v, ok := all[it.Section]; {
			case ok:
				out[i] = v
			case it.Section == "" && len(settings) > 0:
				out[i] = settings
			default:
				out[i] = json.RawMessage("null")
			}
		}
		return out, nil
	}
	return nil, &lsp.ResponseError{Code: lsp.MethodNotFound, Message: "lspd does not handle " + method}
}
