package attach

import (
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// TestStatusLineGrantsRefused: a refused grants file is an alarm on the
// status line, wide or narrow, with or without sheets waiting.
func TestStatusLineGrantsRefused(t *testing.T) {
	text := func(cells []screen.Cell) string {
		var b strings.Builder
		for _, c := range cells {
			b.WriteString(c.String())
		}
		return b.String()
	}
	tests := []struct {
		name   string
		cols   int
		sheets int
		want   []string
	}{
		{"wide", 100, 0, []string{"grants.json refused (prefix s)", "main"}},
		{"wide with sheets", 120, 2, []string{"grants.json refused", "2 sheets"}},
		{"narrow", 30, 1, []string{"!grants", "!1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			si := StatusInfo{Window: "main", Tabs: []workspace.Terminal{{ID: "t1", Title: "bash", Idle: true}}, Focused: "t1",
				Sheets: tt.sheets, GrantsRefused: true}
			got := text(StatusLine(si, tt.cols))
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("status line %q lacks %q", got, w)
				}
			}
			si.GrantsRefused = false
			if got := text(StatusLine(si, tt.cols)); strings.Contains(got, "grants") {
				t.Errorf("status line %q shows the alarm without a problem", got)
			}
		})
	}
}

// TestStatusLineCutsLongMessage: a message longer than the room left is
// cut with an ellipsis, not dropped, and the line keeps its width.
func TestStatusLineCutsLongMessage(t *testing.T) {
	msg := "refused: grants.json is writable by its group or others (mode 0666), so they could grant agents anything; " +
		strings.Repeat("more words ", 20)
	for _, cols := range []int{80, 120} { // narrower, only the alarm fits
		si := StatusInfo{Window: "main", Tabs: []workspace.Terminal{{ID: "t1", Title: "bash", Idle: true}}, Focused: "t1",
			GrantsRefused: true, Right: msg}
		cells := StatusLine(si, cols)
		var b strings.Builder
		for _, c := range cells {
			b.WriteString(c.String())
		}
		got := b.String()
		if len(cells) != cols || !strings.Contains(got, "refused: grants") || !strings.Contains(got, "…") {
			t.Errorf("%d columns: status line %q (%d cells), want the message's start cut with …", cols, got, len(cells))
		}
	}
}
