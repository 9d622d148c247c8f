package editord

import (
	"fmt"
	"strconv"

	"github.com/phantom-dev/phantom/editord/editor"
	"github.com/phantom-dev/phantom/internal/errdefs"
	editorv1 "github.com/phantom-dev/phantom/proto/phantom/editor/v1"
)

// Converters between editor's types and the wire types.

func noEditor() error {
	return fmt.Errorf("this window has no editor running; open_file or reveal_line starts one: %w", errdefs.ErrFailedPrecondition)
}

func toFile(f editor.File) *editorv1.File {
	return &editorv1.File{TabId: strconv.Itoa(f.TabID), Path: f.Path, Modified: f.Modified, LineCount: int32(f.Lines)}
}

func toPane(p editor.Pane) *editorv1.Pane {
	return &editorv1.Pane{
		PaneId: strconv.Itoa(p.ID), Focused: p.Focused,
		Row: int32(p.Row), Col: int32(p.Col), Width: int32(p.Width), Height: int32(p.Height),
		File: toFile(p.File), CursorLine: int32(p.Cursor), FirstVisibleLine: int32(p.Top), LastVisibleLine: int32(p.Bottom),
	}
}

func toListPanes(s editor.State, terminal string) *editorv1.ListPanesResponse {
	out := &editorv1.ListPanesResponse{Running: true, TerminalId: terminal, Mode: s.Mode}
	for _, p := range s.Panes {
		out.Panes = append(out.Panes, toPane(p))
	}
	for _, f := range s.Tabs {
		out.Tabs = append(out.Tabs, toFile(f))
	}
	return out
}

func toOpened(o editor.Opened, s *editor.Session) *editorv1.Opened {
	return &editorv1.Opened{Pane: toPane(o.Pane), Created: o.Created, TerminalId: s.TerminalID, Started: s.Started, Notes: o.Notes}
}

func fromDirection(d string) editor.Split {
	if d == "below" {
		return editor.Below
	}
	return editor.Right
}
