package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// Confinement is the sandbox the git commands of one request run in, and
// with them everything git runs: hooks, filters, fsmonitor, textconv,
// credential helpers, ssh commands, diff drivers. The repository's own
// configuration decides what those are, and an agent may have written it,
// so for an agent's call they run no freer than the agent itself.
//
// Which confinement a caller gets is gitd's decision (gitd/sandbox.go);
// this package only applies it to every git it runs for the request
// (WithConfinement), and widens it for the steps that change a repository
// by exactly what that step must write (grant).
type Confinement struct {
	// Launcher is the sandbox launcher (the phantom binary), which applies
	// Rules and execs git: sandbox.Rules.Argv.
	Launcher string
	// Rules confine git; nil runs git as gitd itself, for callers that are
	// not sandboxed (the human, a plain shell tab).
	Rules *sandbox.Rules
}

// Unconfined runs git as gitd itself.
var Unconfined = Confinement{}

// Confined reports whether git runs in a sandbox.
func (c Confinement) Confined() bool { return c.Rules != nil }

// argv is the command line that runs bin with args under c.
func (c Confinement) argv(bin string, args []string) []string {
	cmd := append([]string{bin}, args...)
	if !c.Confined() {
		return cmd
	}
	return c.Rules.Argv(c.Launcher, cmd)
}

// widened returns c also allowing git to write the directory trees dirs;
// an unconfined c stays as it is.
func (c Confinement) widened(dirs ...string) Confinement {
	if !c.Confined() {
		return c
	}
	r := *c.Rules
	r.WriteDirs = slices.Clone(r.WriteDirs)
	for _, d := range dirs {
		if !slices.Contains(r.WriteDirs, d) {
			r.WriteDirs = append(r.WriteDirs, d)
		}
	}
	c.Rules = &r
	return c
}

type confinementKey struct{}

// WithConfinement returns ctx whose git commands all run under c: set once
// per request, before the first git, so that one request never mixes
// confinements.
func WithConfinement(ctx context.Context, c Confinement) context.Context {
	return context.WithValue(ctx, confinementKey{}, c)
}

// confinementOf returns the confinement of ctx's request; Unconfined when
// none was set (gitd's own work and the human's calls).
func confinementOf(ctx context.Context) Confinement {
	c, _ := ctx.Value(confinementKey{}).(Confinement)
	return c
}

// refStores are the parts of a repository's common git directory that
// adding, removing or tidying worktrees writes: each worktree's
// administrative directory, branches and their reflogs. The rest — the
// config, hooks/ and info/, which decide what git runs — stays read-only
// to a sandboxed caller that could not write it before.
var refStores = []string{"worktrees", "refs", "logs"}

// grant returns ctx for one step of a request that changes repository r:
// its confinement widened by what the human granted that call, the
// directories dirs the step creates or removes entries in (the new
// worktree; the parent of a worktree being removed or moved) and the
// repository's refStores. Missing refStores are created first, as git
// would create them; missing or relative dirs are left out. An unconfined request is
// returned as it is.
func grant(ctx context.Context, r *repo, dirs ...string) (context.Context, error) {
	c := confinementOf(ctx)
	if !c.Confined() {
		return ctx, nil
	}
	var allow []string
	for _, s := range refStores {
		d := filepath.Join(r.commonDir, s)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return ctx, fmt.Errorf("prepare %s for a sandboxed git: %w", d, err)
		}
		allow = append(allow, realPath(d))
	}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			allow = append(allow, realPath(d))
		}
	}
	return WithConfinement(ctx, c.widened(allow...)), nil
}
