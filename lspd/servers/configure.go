package servers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// Change is a configure request.
type Change struct {
	// ServerID or Language names what to configure.
	ServerID, Language string
	// Update is merged over the language's current configuration.
	Update Config
	// Workspace (absolute, or relative to Dir; default Dir) is where the
	// new configuration is tried.
	Workspace, Dir string
}

// Configured says what Configure did.
type Configured struct {
	Language  string
	Command   []string
	Server    Info
	Restarted []string
}

// Configure tries the changed configuration by starting a server with it
// in the workspace; only when it initializes is it saved and used: the
// language's running servers restart with it. A configuration that fails
// to start is reported and the previous one stays in force.
func (r *Registry) Configure(ctx context.Context, c Change) (Configured, error) {
	lang := c.Language
	if c.ServerID != "" {
		s, err := r.get(c.ServerID)
		if err != nil {
			return Configured{}, err
		}
		if lang != "" && lang != s.language {
			return Configured{}, fmt.Errorf("server_id %s is a %s server, not %s: %w", c.ServerID, s.language, lang, errdefs.ErrInvalidArgument)
		}
		lang = s.language
		if c.Workspace == "" {
			c.Workspace = s.root
		}
	}
	if lang == "" {
		return Configured{}, fmt.Errorf("give server_id or language: %w", errdefs.ErrInvalidArgument)
	}
	dir, err := resolve(c.Workspace, c.Dir)
	if err != nil {
		return Configured{}, fmt.Errorf("workspace: %w", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return Configured{}, fmt.Errorf("workspace %s is not a directory: %w", dir, errdefs.ErrInvalidArgument)
	}
	r.mu.Lock()
	old, known := r.configs[lang]
	r.mu.Unlock()
	if !known && len(c.Update.Extensions) == 0 {
		return Configured{}, fmt.Errorf("language %q is new: give its extensions: %w", lang, errdefs.ErrInvalidArgument)
	}
	next := old.Merge(c.Update)
	if len(c.Update.Command) > 0 {
		next.Command = c.Update.Command // args replace the old ones with a new command
	}
	if err := next.Check(lang); err != nil {
		return Configured{}, fmt.Errorf("%w: %w", err, errdefs.ErrInvalidArgument)
	}
	root := findRoot(next.RootMarkers, filepath.Clean(dir))
	if err := r.try(ctx, next, root); err != nil {
		return Configured{}, fmt.Errorf("the new configuration of %s (%s) did not start in %s, so the previous one (%s) is kept: %v: %w",
			lang, strings.Join(next.Command, " "), root, strings.Join(old.Command, " "), err, errdefs.ErrFailedPrecondition)
	}
	if err := r.state.save(lang, next); err != nil {
		return Configured{}, err
	}
	r.mu.Lock()
	r.configs[lang] = next
	var restart []*Server
	for _, s := range r.servers {
		if s.language == lang {
			restart = append(restart, s)
		}
	}
	r.mu.Unlock()
	out := Configured{Language: lang, Command: next.Command}
	for _, s := range restart {
		s.mu.Lock()
		s.cfg = next
		s.mu.Unlock()
		before := s.Info().Restarts
		s.Restart()
		out.Restarted = append(out.Restarted, s.id)
		_ = r.waitUp(ctx, s, before+1)
	}
	r.mu.Lock()
	s, err := r.ensureLocked(lang, root, next)
	r.mu.Unlock()
	if err != nil {
		return out, err
	}
	if err := r.waitUp(ctx, s, 0); err != nil {
		return out, err
	}
	out.Server = s.Info()
	return out, nil
}

// try starts cfg's server in root, initializes it and stops it.
func (r *Registry) try(ctx context.Context, cfg Config, root string) error {
	inst, err := launch(r.opts.Reaper, cfg, root, handler{s: &Server{reg: r, cfg: cfg, root: root, docs: map[string]*doc{}, diags: map[string]*fileDiags{}, progress: map[string]bool{}}})
	if err != nil {
		return err
	}
	timeout := r.opts.StartTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, max(timeoutUntil(d), 0))
	}
	if _, err := inst.initialize(cfg, root, timeout); err != nil {
		inst.kill()
		<-inst.exited
		return err
	}
	inst.shutdown(r.opts.ShutdownGrace)
	return nil
}
