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
	// Update is merged over the configuration in force.
	Update Config
	// Workspace (absolute, or relative to Dir; default Dir) is where the
	// new configuration is tried — and, for an agent, the one workspace
	// it applies to.
	Workspace, Dir string
	// ForAgent is true for an agent's call: the configuration applies to
	// the server of the workspace's root in Conf only, until lspd stops,
	// and is not saved. Otherwise (the human's own call) it applies to
	// every workspace of the language and is saved.
	ForAgent bool
	// Conf is the caller's confinement, where the configuration is tried
	// and, for an agent, the only one it applies to.
	Conf Confinement
}

// Configured says what Configure did.
type Configured struct {
	Language string
	Command  []string
	Server   Info
	// AppliesTo says in words which servers the configuration applies
	// to, and until when.
	AppliesTo string
	Restarted []string
}

// override is an agent's configuration of one server.
type override struct {
	cfg  Config
	note string
}

// overrideNote says whose configuration the server id runs, "" for the
// language's own.
func (r *Registry) overrideNote(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.overrides[id].note
}

// Configure tries the changed configuration by starting a server with it
// in the workspace, in the caller's confinement; only when it initializes
// is it used, and a configuration that fails to start is reported while
// the previous one stays in force.
//
// What it applies to is what the sheet showed (authz/policy words it):
// an agent's configuration applies to the one server of that workspace
// root running in the agent's own confinement — not to the language's
// other workspaces, not to other tabs' servers of the same workspace —
// until lspd stops, and is never saved; it can neither add a language nor
// change a language's file extensions, which would reach files the sheet
// did not name. Only the human's own call (from outside Phantom, not
// through the gateway) changes the language everywhere and saves it.
func (r *Registry) Configure(ctx context.Context, c Change) (Configured, error) {
	lang := c.Language
	if c.ServerID != "" {
		// An agent names only a server of its own confinement.
		s, err := r.get(c.ServerID, ScopeOf(c.Conf, c.ForAgent))
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
	base, known := r.configs[lang]
	r.mu.Unlock()
	switch {
	case c.ForAgent && !known:
		return Configured{}, fmt.Errorf("language %q has no server configuration (languages: %v); an agent configures the server of one workspace of a known language, and only the human adds languages (config.json's language_servers): %w",
			lang, r.Languages(), errdefs.ErrInvalidArgument)
	case c.ForAgent && len(c.Update.Extensions) > 0:
		return Configured{}, fmt.Errorf("extensions: an agent's configuration applies to one workspace's server and cannot change which files language %q covers; the human sets that in config.json's language_servers: %w",
			lang, errdefs.ErrInvalidArgument)
	case !known && len(c.Update.Extensions) == 0:
		return Configured{}, fmt.Errorf("language %q is new: give its extensions: %w", lang, errdefs.ErrInvalidArgument)
	}
	root := findRoot(base.Merge(c.Update).RootMarkers, filepath.Clean(dir))
	conf := c.Conf
	if !c.ForAgent {
		conf = Unconfined
	}
	id := serverID(lang, root, conf.Key)
	r.mu.Lock()
	old := base
	if c.ForAgent {
		old = r.configLocked(id, lang)
	}
	r.mu.Unlock()
	next := old.Merge(c.Update)
	if len(c.Update.Command) > 0 {
		next.Command = c.Update.Command // args replace the old ones with a new command
	}
	if err := next.Check(lang); err != nil {
		return Configured{}, fmt.Errorf("%w: %w", err, errdefs.ErrInvalidArgument)
	}
	if err := r.try(ctx, next, root, conf); err != nil {
		return Configured{}, fmt.Errorf("the new configuration of %s (%s) did not start in %s %s, so the previous one (%s) is kept: %v: %w",
			lang, strings.Join(next.Command, " "), root, conf.Label, strings.Join(old.Command, " "), err, errdefs.ErrFailedPrecondition)
	}
	out := Configured{Language: lang, Command: next.Command}
	var restart []*Server
	if c.ForAgent {
		out.AppliesTo = fmt.Sprintf("the %s server of workspace %s only, running %s, until Phantom stops (not saved)", lang, root, conf.Label)
		r.mu.Lock()
		r.overrides[id] = override{cfg: next, note: "an agent's configuration of this workspace's server, until Phantom stops"}
		if s, ok := r.servers[id]; ok {
			restart = append(restart, s)
		}
		r.mu.Unlock()
	} else {
		if err := r.state.save(lang, next); err != nil {
			return Configured{}, err
		}
		out.AppliesTo = fmt.Sprintf("every %s workspace whose server no agent configured, saved", lang)
		r.mu.Lock()
		r.configs[lang] = next
		for sid, s := range r.servers {
			if _, over := r.overrides[sid]; s.language == lang && !over {
				restart = append(restart, s)
			}
		}
		r.mu.Unlock()
	}
	for _, s := range restart {
		s.mu.Lock()
		s.cfg = next
		s.mu.Unlock()
		after := s.Restart()
		out.Restarted = append(out.Restarted, s.id)
		_ = r.awaitStart(ctx, s, after)
	}
	r.mu.Lock()
	s, err := r.ensureLocked(lang, root, conf)
	r.mu.Unlock()
	if err != nil {
		return out, err
	}
	if err := r.awaitStart(ctx, s, 0); err != nil {
		return out, err
	}
	out.Server = s.Info()
	return out, nil
}

// try starts cfg's server in root in conf, initializes it and stops it.
func (r *Registry) try(ctx context.Context, cfg Config, root string, conf Confinement) error {
	inst, err := launch(r.opts.Reaper, r.opts.Launcher, cfg, root, conf, handler{s: &Server{reg: r, cfg: cfg, root: root, docs: map[string]*doc{}, diags: map[string]*fileDiags{}, progress: map[string]bool{}}})
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
