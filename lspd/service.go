// Package lspd is the language server daemon: a thin gRPC adapter
// (LanguageServerService) over package servers, which runs the real
// language servers and keeps their diagnostics with the disk version they
// reflect. Domain errors are translated to gRPC codes by the shared server
// chain (internal/daemon).
//
// Language servers run what a workspace's files tell them to (pylsp's
// plugins and configuration, gopls's `go list` and cgo, clangd's compile
// flags), and configure_language_server sets the command itself. So
// where a server runs follows from who asked (confiner): a sandboxed
// agent's calls reach servers in that tab's own sandbox, every other
// agent's calls servers in a read-only sandbox, and only the human's own
// calls servers that run as the user. Servers are keyed by (language,
// workspace root, confinement), so a workspace shared by a sandboxed tab
// and anyone else never gets an unconfined server for an agent; and an
// agent's configuration applies to the one server of its workspace in its
// own confinement, until lspd stops (servers.Registry.Configure).
//
// What holds for the read-only sandbox, the one lspd computes itself
// (servers.ReadOnly, from sandbox.Compute): its servers write only the
// temporary directories and open no terminal device. Where the machine
// allows the namespace walls (sandbox.ProbeWalls, probed once) it has
// them as a tab has: a private /dev with no other terminal, a private
// /tmp of each server process's own under the runtime directory
// (tmp/lspd/), the runtime directories hidden (the daemons', holder's and
// editor's sockets, the session bus), the sockets of the home directory
// and /run masked, every mount read-only but the temporary directories;
// the server's workspace and program stay in view, read-only. Where it
// does not, the server runs under Landlock alone and its Label says "no
// walls": writes are limited as above, but path sockets stay reachable
// (as in a tab without walls).
//
// What an agent sees: list_language_servers, restart_language_server,
// configure_language_server's server_id and list_diagnostics reach only
// the servers of the caller's own confinement (servers.Scope) — another
// tab's servers, roots and commands are not its to see or disturb. The
// human (outside Phantom) sees and restarts every server.
package lspd

import (
	"context"
	"time"

	"github.com/phantom-dev/phantom/lspd/servers"
	lspv1 "github.com/phantom-dev/phantom/proto/phantom/lsp/v1"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// ConfigureTimeout bounds configure_language_server: trying the new
// configuration, restarting the servers it applies to and waiting for the
// caller's (its tool option states it).
const ConfigureTimeout = 150 * time.Second

// Service implements lspv1.LanguageServerServiceServer.
type Service struct {
	lspv1.UnimplementedLanguageServerServiceServer
	reg  *servers.Registry
	conf confiner
}

// NewService serves reg; describe (nil: no terminald) tells which tabs
// are sandboxed and how, and machine what the read-only sandbox is built
// from (machineOf).
func NewService(reg *servers.Registry, describe DescribeFunc, machine func() servers.Machine) *Service {
	return &Service{reg: reg, conf: confiner{describe: describe, canSandbox: sandbox.ABI() >= sandbox.MinABI, machine: machine}}
}

// ListDiagnostics reports diagnostics, fresh from disk.
func (s *Service) ListDiagnostics(ctx context.Context, r *lspv1.ListDiagnosticsRequest) (*lspv1.ListDiagnosticsResponse, error) {
	conf, _, err := s.conf.of(ctx)
	if err != nil {
		return nil, err
	}
	rep, err := s.reg.Diagnostics(ctx, servers.Query{
		Path: r.GetPath(), Dir: r.GetCallerDirectory(), Wait: time.Duration(r.GetWaitMs()) * time.Millisecond, Conf: conf,
	})
	if err != nil {
		return nil, err
	}
	return toDiagnosticsResponse(rep, r.GetMinSeverity()), nil
}

// ListLanguageServers lists the servers the caller may see: an agent's
// own confinement's, every one for the human.
func (s *Service) ListLanguageServers(ctx context.Context, _ *lspv1.ListLanguageServersRequest) (*lspv1.ListLanguageServersResponse, error) {
	infos := s.reg.List(scopeOf(ctx))
	out := &lspv1.ListLanguageServersResponse{Servers: make([]*lspv1.LanguageServer, len(infos)), Languages: s.reg.Languages()}
	for i, in := range infos {
		out.Servers[i] = toServer(in)
	}
	return out, nil
}

// RestartLanguageServer restarts one server the caller may see: an agent
// restarts only its own confinement's servers.
func (s *Service) RestartLanguageServer(ctx context.Context, r *lspv1.RestartLanguageServerRequest) (*lspv1.RestartLanguageServerResponse, error) {
	in, err := s.reg.Restart(ctx, r.GetServerId(), scopeOf(ctx))
	if err != nil {
		return nil, err
	}
	return &lspv1.RestartLanguageServerResponse{Server: toServer(in)}, nil
}

// ConfigureLanguageServer tries, saves and applies a configuration.
func (s *Service) ConfigureLanguageServer(ctx context.Context, r *lspv1.ConfigureLanguageServerRequest) (*lspv1.ConfigureLanguageServerResponse, error) {
	conf, forAgent, err := s.conf.of(ctx)
	if err != nil {
		return nil, err
	}
	ch := fromConfigure(r)
	ch.Conf, ch.ForAgent = conf, forAgent
	ctx, cancel := context.WithTimeout(ctx, ConfigureTimeout)
	defer cancel()
	c, err := s.reg.Configure(ctx, ch)
	if err != nil {
		return nil, err
	}
	return &lspv1.ConfigureLanguageServerResponse{
		Language: c.Language, Command: c.Command, Server: toServer(c.Server), Restarted: c.Restarted, AppliesTo: c.AppliesTo,
	}, nil
}
