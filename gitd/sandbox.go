package gitd

import (
	"context"
	"fmt"

	"github.com/phantom-dev/phantom/gitd/worktree"
	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// The one place where gitd decides how the git of a call runs (invariant
// 2, "no deputy"). git runs what the repository configures — hooks,
// filters, fsmonitor, textconv, credential helpers, ssh commands — and an
// agent may have written that configuration, so git and all it runs get
// the caller's standing:
//
//   - the human, a daemon, a plain (unsandboxed) shell tab, and an agent
//     that runs outside Phantom: git runs as gitd itself, as before;
//   - an agent in a sandboxed tab, through the gateway or straight from
//     the tab: git runs under that tab's own rules (terminald's
//     DescribeSandbox), widened for the steps that change the repository
//     by exactly what the call was granted (worktree.grant: the worktree
//     added or removed, the repository's refs, reflogs and worktree
//     records — never its config or hooks);
//   - an agent inside Phantom in no tab (it double-forked out of its
//     tab's tree, so nobody can tell which sandbox it had): the tightest
//     sandbox, which writes nothing but /dev/null. Whatever such a call
//     would change then fails in git.
//
// Every git of one request runs under the confinement chosen once, at the
// start of the request. gitd's own work (none today besides the calls)
// would run unconfined: it has no caller whose repository config it acts
// on.

// tightest is the sandbox of an agent whose tab is unknown: no writable
// tree at all.
var tightest = sandbox.Rules{Devices: []string{"/dev/null"}}

// tabSandbox tells how tab's programs are confined: its rules and whether
// it is sandboxed at all (terminald's DescribeSandbox).
type tabSandbox func(ctx context.Context, tab string) (sandbox.Rules, bool, error)

// confinement decides how the git of a call by c runs; placed is false
// when no guard placed the caller, which fails closed. launcher is the
// sandbox launcher (sandbox.SelfLauncher: gitd runs as `phantom daemon
// gitd`).
func confinement(ctx context.Context, c guard.Caller, placed bool, describe tabSandbox, launcher string) (worktree.Confinement, error) {
	if !placed {
		return worktree.Confinement{}, fmt.Errorf("gitd cannot tell who calls (no guard placed the caller), so it runs no git for it: %w", errdefs.ErrPermissionDenied)
	}
	var rules sandbox.Rules
	switch {
	case !c.ForAgent:
		return worktree.Unconfined, nil
	case c.TabID != "":
		r, sandboxed, err := describe(ctx, c.TabID)
		if err != nil {
			return worktree.Confinement{}, fmt.Errorf("cannot tell how tab %s is sandboxed, so gitd runs no git for it: %w: %w", c.TabID, err, errdefs.ErrUnavailable)
		}
		if !sandboxed {
			return worktree.Unconfined, nil
		}
		rules = r
	case c.Inside || c.LeftTab:
		rules = tightest
	default:
		// An agent outside Phantom runs as the human already.
		return worktree.Unconfined, nil
	}
	if launcher == "" {
		return worktree.Confinement{}, fmt.Errorf("gitd must run git in the caller's sandbox but cannot find its own executable, the sandbox launcher: %w", errdefs.ErrFailedPrecondition)
	}
	return worktree.Confinement{Launcher: launcher, Rules: &rules}, nil
}

// confine returns ctx with the confinement of its caller for every git of
// the request, or why no git may run for it. A Service without a
// describer (tests of the adapter) runs git unconfined.
func (s *Service) confine(ctx context.Context) (context.Context, error) {
	if s.describe == nil {
		return ctx, nil
	}
	c, placed := guard.CallerFrom(ctx)
	conf, err := confinement(ctx, c, placed, s.describe, s.launcher)
	if err != nil {
		return ctx, err
	}
	return worktree.WithConfinement(ctx, conf), nil
}
