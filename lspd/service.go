// Package lspd is the language server daemon: a thin gRPC adapter
// (LanguageServerService) over package servers, which runs the real
// language servers and keeps their diagnostics with the disk version they
// reflect. Domain errors are translated to gRPC codes by the shared server
// chain (internal/daemon).
package lspd

import (
	"context"
	"time"

	"github.com/phantom-dev/phantom/lspd/servers"
	lspv1 "github.com/phantom-dev/phantom/proto/phantom/lsp/v1"
)

// Service implements lspv1.LanguageServerServiceServer.
type Service struct {
	lspv1.UnimplementedLanguageServerServiceServer
	reg *servers.Registry
}

// NewService serves reg.
func NewService(reg *servers.Registry) *Service { return &Service{reg: reg} }

// ListDiagnostics reports diagnostics, fresh from disk.
func (s *Service) ListDiagnostics(ctx context.Context, r *lspv1.ListDiagnosticsRequest) (*lspv1.ListDiagnosticsResponse, error) {
	rep, err := s.reg.Diagnostics(ctx, servers.Query{
		Path: r.GetPath(), Dir: r.GetCallerDirectory(), Wait: time.Duration(r.GetWaitMs()) * time.Millisecond,
	})
	if err != nil {
		return nil, err
	}
	return toDiagnosticsResponse(rep, r.GetMinSeverity()), nil
}

// ListLanguageServers lists the servers.
func (s *Service) ListLanguageServers(context.Context, *lspv1.ListLanguageServersRequest) (*lspv1.ListLanguageServersResponse, error) {
	infos := s.reg.List()
	out := &lspv1.ListLanguageServersResponse{Servers: make([]*lspv1.LanguageServer, len(infos)), Languages: s.reg.Languages()}
	for i, in := range infos {
		out.Servers[i] = toServer(in)
	}
	return out, nil
}

// RestartLanguageServer restarts one server.
func (s *Service) RestartLanguageServer(ctx context.Context, r *lspv1.RestartLanguageServerRequest) (*lspv1.RestartLanguageServerResponse, error) {
	in, err := s.reg.Restart(ctx, r.GetServerId())
	if err != nil {
		return nil, err
	}
	return &lspv1.RestartLanguageServerResponse{Server: toServer(in)}, nil
}

// ConfigureLanguageServer tries, saves and applies a configuration.
func (s *Service) ConfigureLanguageServer(ctx context.Context, r *lspv1.ConfigureLanguageServerRequest) (*lspv1.ConfigureLanguageServerResponse, error) {
	c, err := s.reg.Configure(ctx, fromConfigure(r))
	if err != nil {
		return nil, err
	}
	return &lspv1.ConfigureLanguageServerResponse{
		Language: c.Language, Command: c.Command, Server: toServer(c.Server), Restarted: c.Restarted,
	}, nil
}
