package lspd

import (
	"context"
	"fmt"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/lspd/servers"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// describeTimeout bounds asking terminald for a tab's sandbox.
const describeTimeout = 5 * time.Second

// DescribeFunc says whether tab's programs run in a sandbox and with which
// launcher rule flags: terminald's DescribeSandbox.
type DescribeFunc func(ctx context.Context, tab string) (sandboxed bool, flags []string, err error)

// DescribeWith asks terminald's DescribeSandbox through tc.
func DescribeWith(tc terminalv1.TerminalServiceClient) DescribeFunc {
	return func(ctx context.Context, tab string) (bool, []string, error) {
		ctx, cancel := context.WithTimeout(ctx, describeTimeout)
		defer cancel()
		resp, err := tc.DescribeSandbox(ctx, &terminalv1.DescribeSandboxRequest{TabId: tab})
		if err != nil {
			return false, nil, err
		}
		return resp.GetSandboxed(), resp.GetFlags(), nil
	}
}

// confiner decides where the language servers of a call run: the
// decision of invariants 1 and 2 for language servers, written down in
// the package doc of servers and here.
//
//   - The human's own call (outside Phantom, not made for an agent) gets
//     servers running as the user, outside any sandbox.
//   - A call of an agent in a sandboxed tab gets servers in that tab's own
//     sandbox, its rules as terminald describes them.
//   - A call of any other agent — an unsandboxed tab, a process that left
//     its tab, an agent in no tab — gets servers in a read-only sandbox
//     (servers.ReadOnly), at least as tight as every tab's.
//
// So no agent's call ever reaches a server running outside a sandbox:
// whatever a workspace's files make a server run (pylsp plugins and
// configuration, gopls's `go list` and cgo, clangd's compile flags, a
// command configure_language_server set), it runs confined, wherever the
// workspace is and whoever else can write it. Only where the kernel
// cannot sandbox at all (no Landlock ABI 6), where tabs are not
// sandboxed either, do agents' servers run as the user, and their Label
// says so.
type confiner struct {
	describe DescribeFunc
	// canSandbox is whether the kernel can confine (sandbox.ABI() >=
	// sandbox.MinABI).
	canSandbox bool
	// machine describes the instance for the read-only sandbox, whether
	// the walls can be built included (machineOf).
	machine func() servers.Machine
}

// callerOf is the caller of ctx, the key of its confinement and whether
// it is an agent: the key follows from the caller alone (its tab, or
// OutsideTabs), before anyone asks terminald how that tab is sandboxed.
func callerOf(ctx context.Context) (guard.Caller, string, bool) {
	caller, ok := guard.CallerFrom(ctx)
	if !ok || !caller.ForAgent {
		return caller, "", false
	}
	if caller.TabID == "" {
		return caller, servers.OutsideTabs, true
	}
	return caller, caller.TabID, true
}

// scopeOf is which servers the caller of ctx may see and restart: an
// agent those of its own confinement (by key, which needs no word from
// terminald), the human every one.
func scopeOf(ctx context.Context) servers.Scope {
	_, key, agent := callerOf(ctx)
	return servers.ScopeOf(servers.Confinement{Key: key}, agent)
}

// of returns the confinement of the call in ctx and whether it is an
// agent's. A tab whose sandbox cannot be learnt fails closed.
func (c confiner) of(ctx context.Context) (servers.Confinement, bool, error) {
	caller, key, agent := callerOf(ctx)
	if !agent {
		return servers.Unconfined, false, nil
	}
	if caller.TabID != "" {
		if c.describe == nil {
			return servers.Confinement{}, true, fmt.Errorf("lspd cannot ask terminald how tab %s is sandboxed, so it starts no language server for it: %w", caller.TabID, errdefs.ErrUnavailable)
		}
		sandboxed, flags, err := c.describe(ctx, caller.TabID)
		if err != nil {
			return servers.Confinement{}, true, fmt.Errorf("cannot learn how tab %s is sandboxed, so no language server is started for it: %v: %w", caller.TabID, err, errdefs.ErrUnavailable)
		}
		if sandboxed {
			conf, err := servers.InSandbox(caller.TabID, flags)
			if err != nil {
				return servers.Confinement{}, true, fmt.Errorf("%v: %w", err, errdefs.ErrFailedPrecondition)
			}
			return conf, true, nil
		}
	}
	if !c.canSandbox {
		return servers.Confinement{Key: key, Label: "as you, outside any sandbox (" + sandbox.Unavailable(sandbox.ABI()) + ")"}, true, nil
	}
	conf, err := servers.ReadOnly(key, c.machine())
	if err != nil {
		return servers.Confinement{}, true, fmt.Errorf("%v: %w", err, errdefs.ErrFailedPrecondition)
	}
	return conf, true, nil
}
