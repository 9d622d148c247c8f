package lspd

import (
	"encoding/json"
	"strings"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/lspd/lsp"
	"github.com/phantom-dev/phantom/lspd/servers"
	lspv1 "github.com/phantom-dev/phantom/proto/phantom/lsp/v1"
)

// Converters between the servers package's types and the wire types.

var states = map[servers.State]lspv1.ServerState{
	servers.Starting: lspv1.ServerState_SERVER_STATE_STARTING,
	servers.Indexing: lspv1.ServerState_SERVER_STATE_INDEXING,
	servers.Ready:    lspv1.ServerState_SERVER_STATE_READY,
	servers.Crashed:  lspv1.ServerState_SERVER_STATE_CRASHED,
	servers.Stopped:  lspv1.ServerState_SERVER_STATE_STOPPED,
}

func toServer(in servers.Info) *lspv1.LanguageServer {
	return &lspv1.LanguageServer{
		Id: in.ID, Language: in.Language, Root: in.Root, Command: in.Command, Pid: int32(in.PID),
		State: states[in.State], Restarts: int32(in.Restarts), LastError: in.LastError,
		MemoryBytes: in.MemoryBytes, OpenFiles: int32(in.OpenFiles), Sandbox: in.Sandbox, Configured: in.Configured,
	}
}

func toDisk(s servers.Stamp) *lspv1.DiskVersion {
	if s.IsZero() {
		return nil
	}
	return &lspv1.DiskVersion{Size: s.Size, MtimeUnixNano: s.MTime, Sha256: s.Hash}
}

// toDiagnosticsResponse converts rep, keeping diagnostics at least as
// severe as min (LSP counts 1 = error up to 4 = hint; a diagnostic
// without a severity is kept).
func toDiagnosticsResponse(rep servers.Report, min lspv1.Severity) *lspv1.ListDiagnosticsResponse {
	out := &lspv1.ListDiagnosticsResponse{Settled: rep.Settled, WaitedMs: uint32(rep.Waited.Milliseconds()), Notes: rep.Notes}
	for _, f := range rep.Files {
		fd := &lspv1.FileDiagnostics{
			Path: f.Path, ServerId: f.ServerID, Disk: toDisk(f.Disk), Reflects: toDisk(f.Reflects),
			Current: f.Current(), Settled: f.Settled,
		}
		for _, d := range f.Diagnostics {
			if min != lspv1.Severity_SEVERITY_UNSPECIFIED && d.Severity != 0 && d.Severity > int(min) {
				continue
			}
			fd.Diagnostics = append(fd.Diagnostics, toDiagnostic(d))
		}
		out.Files = append(out.Files, fd)
	}
	return out
}

func toDiagnostic(d lsp.Diagnostic) *lspv1.Diagnostic {
	code := strings.Trim(string(d.Code), `"`)
	if code == "null" {
		code = ""
	}
	return &lspv1.Diagnostic{
		Line: d.Range.Start.Line + 1, Column: d.Range.Start.Character + 1,
		EndLine: d.Range.End.Line + 1, EndColumn: d.Range.End.Character + 1,
		Severity: lspv1.Severity(d.Severity), Message: d.Message, Source: d.Source, Code: code,
	}
}

func fromConfigure(r *lspv1.ConfigureLanguageServerRequest) servers.Change {
	var cmd []string
	if r.GetCommand() != "" {
		cmd = append([]string{r.GetCommand()}, r.GetArgs()...)
	}
	return servers.Change{
		ServerID: r.GetServerId(), Language: r.GetLanguage(),
		Update: servers.Config{
			Command: cmd, Env: r.GetEnv(), Extensions: r.GetExtensions(),
			InitializationOptions: raw(r.GetInitializationOptions()), Settings: raw(r.GetSettings()),
		},
		Workspace: r.GetWorkspace(), Dir: r.GetCallerDirectory(),
	}
}

func raw(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// fromSettings converts config.json's language_servers.
func fromSettings(in map[string]config.LanguageServer) map[string]servers.Config {
	out := make(map[string]servers.Config, len(in))
	for lang, c := range in {
		out[lang] = servers.Config{
			Command: c.Command, Env: c.Env, Extensions: c.Extensions,
			InitializationOptions: c.InitializationOptions, Settings: c.Settings,
		}
	}
	return out
}
