package servers

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// MaxFiles bounds the files one directory query opens.
const MaxFiles = 200

// Query says which files' diagnostics to report.
type Query struct {
	// Path is a file or directory, absolute or relative to Dir; "" is Dir.
	Path string
	// Dir is the caller's directory.
	Dir string
	// Wait bounds how long to wait for every file to be settled.
	Wait time.Duration
	// Conf is the caller's confinement: the servers asked run in it.
	Conf Confinement
}

// Report answers a Query.
type Report struct {
	Files   []FileReport
	Settled bool
	Waited  time.Duration
	Notes   []string
}

// entry is a file a query reports on, and its server.
type entry struct {
	path string
	s    *Server
}

// Diagnostics reports the diagnostics of q's files. Freshness is the
// point: each file is read from disk and, if the server has another
// version, given to it first (didOpen or didChange); then the call waits,
// up to q.Wait, until every file's diagnostics reflect the disk version it
// read and its server settled. Each file's report says which disk version
// its diagnostics reflect, so an answer that ran out of time is still
// honest. A file changed on disk while waiting is given to its server
// again: the answer is about the disk as it is when the call returns.
func (r *Registry) Diagnostics(ctx context.Context, q Query) (Report, error) {
	start := time.Now()
	target, err := resolve(q.Path, q.Dir)
	if err != nil {
		return Report{}, err
	}
	fi, err := os.Stat(target)
	if err != nil {
		return Report{}, fmt.Errorf("path %s: %w", target, notFound(err))
	}
	var rep Report
	var files []string
	if fi.IsDir() {
		files, rep.Notes = r.sourceFiles(target)
	} else {
		files = []string{target}
	}
	var entries []entry
	seen := map[string]bool{}
	var servers []*Server
	for _, f := range files {
		s, err := r.serverFor(f, q.Conf)
		switch {
		case err != nil:
			return Report{}, err
		case s == nil:
			if !fi.IsDir() {
				return Report{}, fmt.Errorf("no language server is configured for %s (languages: %v): %w", f, r.Languages(), errdefs.ErrFailedPrecondition)
			}
			continue
		}
		if err := s.sync(f); err != nil {
			rep.Notes = append(rep.Notes, err.Error())
		}
		entries = append(entries, entry{f, s})
		seen[f] = true
		if !containsServer(servers, s) {
			servers = append(servers, s)
		}
	}
	if fi.IsDir() { // files the servers reported on that the walk left out
		under := func(p string) bool { return !seen[p] && strings.HasPrefix(p, target+string(filepath.Separator)) }
		// Only servers of the caller's own confinement answer: another
		// tab's servers are not the caller's to see (see Scope).
		for _, s := range r.snapshot(Own(q.Conf)) {
			for _, p := range s.pushed(under) {
				entries = append(entries, entry{p, s})
				seen[p] = true
			}
		}
	}
	for _, s := range servers {
		for _, e := range entries {
			if e.s == s {
				s.pullDiagnostics(ctx, e.path)
			}
		}
	}
	deadline := start.Add(q.Wait)
	for {
		changes := r.changes()
		// Before the servers' start errors are read: a first start that
		// ended after this is seen in the next round.
		pending := firstStartPending(servers)
		rep.Files = rep.Files[:0]
		rep.Settled = true
		// A server whose latest start failed will not settle: its files
		// are not waited for, and when it serves every file asked about,
		// the call fails at once with its error.
		broken := map[*Server]error{}
		working := false
		for _, e := range entries {
			err, known := broken[e.s]
			if !known {
				err = e.s.cannotStart()
				broken[e.s] = err
			}
			working = working || err == nil
		}
		for _, e := range entries {
			if err := broken[e.s]; err != nil && !working {
				return Report{}, err
			}
		}
		waiting := false
		for _, e := range entries {
			_, disk, err := readFile(e.path)
			if err != nil {
				disk = Stamp{}
			}
			fr := e.s.report(e.path, disk, time.Now())
			if !fr.Settled && err == nil && fr.Reflects != disk && e.s.knows(e.path) {
				_ = e.s.sync(e.path) // changed on disk meanwhile
			}
			rep.Settled = rep.Settled && fr.Settled
			waiting = waiting || !fr.Settled && broken[e.s] == nil
			rep.Files = append(rep.Files, fr)
		}
		now := time.Now()
		until := deadline
		if pending {
			until = later(deadline, start.Add(FirstStartWait))
		}
		if !waiting || !now.Before(until) {
			break
		}
		tick := time.NewTimer(min(until.Sub(now), 50*time.Millisecond))
		select {
		case <-changes:
		case <-tick.C:
		case <-ctx.Done():
			tick.Stop()
			return Report{}, ctx.Err()
		}
		tick.Stop()
	}
	for _, s := range servers {
		if err := s.cannotStart(); err != nil {
			rep.Notes = append(rep.Notes, err.Error()+"; its files are not settled")
		} else if info := s.Info(); info.State == Crashed || info.State == Starting && info.LastError != "" {
			rep.Notes = append(rep.Notes, fmt.Sprintf("language server %s is %s: %s", info.ID, info.State, info.LastError))
		}
	}
	if !rep.Settled && q.Wait > 0 && !time.Now().Before(deadline) {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the wait timed out: not every file settled within wait_ms (%d ms); the diagnostics of files with settled false may still change: call again to wait more",
			q.Wait.Milliseconds()))
	}
	sort.Slice(rep.Files, func(i, j int) bool { return rep.Files[i].Path < rep.Files[j].Path })
	rep.Waited = time.Since(start)
	return rep, nil
}

// FirstStartWait is how long a query waits, even without a wait of its
// own, for a server it started to initialize or fail to: a server that
// cannot start (its command is missing, it exits at once or during
// initialize) fails the query with its error rather than answering
// "not settled".
const FirstStartWait = 2 * time.Second

// firstStartPending reports whether a server's first start has not ended.
func firstStartPending(servers []*Server) bool {
	for _, s := range servers {
		s.mu.Lock()
		pending := s.finished == 0
		s.mu.Unlock()
		if pending {
			return true
		}
	}
	return false
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// knows reports whether lspd opened path in s.
func (s *Server) knows(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.docs[path] != nil
}

func containsServer(list []*Server, s *Server) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sourceFiles lists the files under dir that a configured server covers,
// skipping hidden and dependency directories, at most MaxFiles.
func (r *Registry) sourceFiles(dir string) ([]string, []string) {
	r.mu.Lock()
	configs := r.configs
	r.mu.Unlock()
	var files, notes []string
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case e.IsDir() && p != dir && skipDir(e.Name()):
			return filepath.SkipDir
		case !e.Type().IsRegular() || languageOf(configs, p) == "":
			return nil
		case len(files) == MaxFiles:
			notes = append(notes, fmt.Sprintf("only the first %d source files under %s are listed; ask about a subdirectory or a file", MaxFiles, dir))
			return filepath.SkipAll
		}
		files = append(files, p)
		return nil
	})
	return files, notes
}

// resolve makes path absolute against dir.
func resolve(path, dir string) (string, error) {
	switch {
	case path == "" && dir == "":
		return "", fmt.Errorf("path is required outside a Phantom tab: %w", errdefs.ErrInvalidArgument)
	case path == "":
		return filepath.Clean(dir), nil
	case filepath.IsAbs(path):
		return filepath.Clean(path), nil
	case dir == "":
		return "", fmt.Errorf("path %q is relative, and outside a Phantom tab there is no directory to take it from: %w", path, errdefs.ErrInvalidArgument)
	}
	return filepath.Join(dir, path), nil
}

func notFound(err error) error {
	if os.IsNotExist(err) {
		return fmt.Errorf("%w: %w", err, errdefs.ErrNotFound)
	}
	return err
}
