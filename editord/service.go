// Package editord is the editor daemon: a thin gRPC adapter
// (EditorService) over package editor, which keeps one real Neovim per
// Phantom window and does what agents ask of it. Domain errors are
// translated to gRPC codes by the shared server chain (internal/daemon).
//
// No deputy: a caller in a sandboxed tab never drives the window's own
// editor — the one the human opened with `phantom edit`, or one started
// for an unsandboxed caller — because that Neovim runs as the human,
// unconfined, and an agent steering it would act through it beyond its
// sandbox. It gets an editor of its own instead, one per sandboxed tab and
// window, which terminald starts under the tab's sandbox and which listens
// in a directory of its own on the host
// (paths.Layout.SandboxedEditorSocket) that the sandbox keeps writable.
// Only a Neovim there that runs in a sandboxed tab of the window is ever
// adopted (see editor.Manager).
package editord

import (
	"context"

	"github.com/phantom-dev/phantom/editord/editor"
	"github.com/phantom-dev/phantom/internal/guard"
	editorv1 "github.com/phantom-dev/phantom/proto/phantom/editor/v1"
)

// Service implements editorv1.EditorServiceServer.
type Service struct {
	editorv1.UnimplementedEditorServiceServer
	m *editor.Manager
}

// NewService serves m.
func NewService(m *editor.Manager) *Service { return &Service{m: m} }

// callerRequest is every request: each carries the caller fields the
// gateway fills in.
type callerRequest interface {
	GetCallerTabId() string
	GetCallerDirectory() string
}

// caller is whose window a call acts on. For an agent — through the
// gateway, or straight from a process inside Phantom — that is the tab the
// guard placed it in from the kernel's word; the request's fields are
// trusted only from the human's own tools outside Phantom, which may name
// any tab.
func caller(ctx context.Context, r callerRequest) editor.Caller {
	if c, ok := guard.CallerFrom(ctx); ok && c.ForAgent {
		dir := ""
		if c.TabID == r.GetCallerTabId() {
			dir = r.GetCallerDirectory() // the gateway's, for the same tab
		}
		return editor.Caller{TabID: c.TabID, Dir: dir}
	}
	return editor.Caller{TabID: r.GetCallerTabId(), Dir: r.GetCallerDirectory()}
}

// ListPanes describes the caller window's editor, without starting one.
func (s *Service) ListPanes(ctx context.Context, r *editorv1.ListPanesRequest) (*editorv1.ListPanesResponse, error) {
	ses, err := s.m.Lookup(ctx, caller(ctx, r))
	if err != nil || ses == nil {
		return &editorv1.ListPanesResponse{}, err
	}
	st, err := ses.State(ctx)
	if err != nil {
		return nil, err
	}
	return toListPanes(st, ses.TerminalID), nil
}

// OpenFile opens a file in the focused pane.
func (s *Service) OpenFile(ctx context.Context, r *editorv1.OpenFileRequest) (*editorv1.OpenFileResponse, error) {
	ses, err := s.m.Ensure(ctx, caller(ctx, r))
	if err != nil {
		return nil, err
	}
	o, err := ses.Open(ctx, editor.OpenSpec{Path: r.GetPath(), Dir: ses.Dir, Line: int(r.GetLine()), Create: r.GetCreate()})
	if err != nil {
		return nil, err
	}
	return &editorv1.OpenFileResponse{Opened: toOpened(o, ses)}, nil
}

// OpenFileInSplit opens a file in a new split.
func (s *Service) OpenFileInSplit(ctx context.Context, r *editorv1.OpenFileInSplitRequest) (*editorv1.OpenFileInSplitResponse, error) {
	ses, err := s.m.Ensure(ctx, caller(ctx, r))
	if err != nil {
		return nil, err
	}
	o, err := ses.Open(ctx, editor.OpenSpec{Path: r.GetPath(), Dir: ses.Dir, Line: int(r.GetLine()),
		Create: r.GetCreate(), Split: fromDirection(r.GetDirection())})
	if err != nil {
		return nil, err
	}
	return &editorv1.OpenFileInSplitResponse{Opened: toOpened(o, ses)}, nil
}

// FocusTab shows and focuses a tab.
func (s *Service) FocusTab(ctx context.Context, r *editorv1.FocusTabRequest) (*editorv1.FocusTabResponse, error) {
	ses, err := s.m.Lookup(ctx, caller(ctx, r))
	if err != nil {
		return nil, err
	}
	if ses == nil {
		return nil, noEditor()
	}
	p, err := ses.FocusTab(ctx, r.GetTabId())
	if err != nil {
		return nil, err
	}
	return &editorv1.FocusTabResponse{Pane: toPane(p)}, nil
}

// CloseTab closes a tab, keeping unsaved changes.
func (s *Service) CloseTab(ctx context.Context, r *editorv1.CloseTabRequest) (*editorv1.CloseTabResponse, error) {
	ses, err := s.m.Lookup(ctx, caller(ctx, r))
	if err != nil {
		return nil, err
	}
	if ses == nil {
		return nil, noEditor()
	}
	f, kept, err := ses.CloseTab(ctx, r.GetTabId(), r.GetForce())
	if err != nil {
		return nil, err
	}
	return &editorv1.CloseTabResponse{Closed: toFile(f), ChangesKeptHidden: kept}, nil
}

// RevealLine shows, centres and marks a line.
func (s *Service) RevealLine(ctx context.Context, r *editorv1.RevealLineRequest) (*editorv1.RevealLineResponse, error) {
	ses, err := s.m.Ensure(ctx, caller(ctx, r))
	if err != nil {
		return nil, err
	}
	o, err := ses.Reveal(ctx, editor.RevealSpec{Path: r.GetPath(), Dir: ses.Dir, TabID: r.GetTabId(),
		Line: int(r.GetLine()), Message: r.GetMessage()})
	if err != nil {
		return nil, err
	}
	return &editorv1.RevealLineResponse{Opened: toOpened(o, ses), Line: int32(o.Line)}, nil
}
