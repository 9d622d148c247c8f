package terminald

import (
	"context"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// KeepCommand marks, unmarks or reports the command a tab runs again when
// the saved session is restored (workspace.KeepCommand). The guard
// refuses it to every process inside Phantom.
func (s *Service) KeepCommand(_ context.Context, r *terminalv1.KeepCommandRequest) (*terminalv1.KeepCommandResponse, error) {
	id := r.GetTerminalId()
	if r.Command == nil {
		k, err := s.ws.KeptCommandOf(id)
		if err != nil {
			return nil, err
		}
		resp := &terminalv1.KeepCommandResponse{}
		if k != nil {
			resp.Command, resp.Directory, resp.Previous = k.Line, k.Dir, k.Line
		}
		return resp, nil
	}
	now, before, err := s.ws.KeepCommand(id, r.GetCommand())
	if err != nil {
		return nil, err
	}
	resp := &terminalv1.KeepCommandResponse{}
	if now != nil {
		resp.Command, resp.Directory = now.Line, now.Dir
	}
	if before != nil {
		resp.Previous = before.Line
	}
	return resp, nil
}

// RestoreSession restores the saved session into a workspace with no tab
// yet (workspace.RestoreSaved); `phantom up` calls it. The guard refuses
// it to every process inside Phantom.
func (s *Service) RestoreSession(context.Context, *terminalv1.RestoreSessionRequest) (*terminalv1.RestoreSessionResponse, error) {
	rep := s.ws.RestoreSaved()
	return &terminalv1.RestoreSessionResponse{File: rep.File, Tabs: int32(rep.Tabs), Windows: int32(rep.Windows),
		Reran: rep.Reran, Warnings: rep.Warnings}, nil
}
