package attach

import (
	"strings"
	"testing"
)

// TestSheetBoxSmallScreenKeepsKeys: however small the client, the box's
// last rows say which keys answer.
func TestSheetBoxSmallScreenKeepsKeys(t *testing.T) {
	for _, sz := range []struct{ cols, rows int }{{30, 8}, {30, 6}, {40, 8}, {24, 10}, {80, 8}} {
		s, _ := bareSession(readSheet("s1"), sz.cols, sz.rows)
		s.box()
		s.age()
		b := s.box()
		var text []string
		for _, r := range b.cells {
			var sb strings.Builder
			for _, c := range r {
				sb.WriteString(c.String())
			}
			text = append(text, sb.String())
		}
		all := strings.Join(text, "\n")
		if !strings.Contains(all, "deny") || !strings.Contains(all, "Esc") {
			t.Errorf("%dx%d: the box lost its keys:\n%s", sz.cols, sz.rows, all)
		}
		if len(b.cells) > sz.rows-1 || b.y+len(b.cells) > sz.rows-1 {
			t.Errorf("%dx%d: the box has %d rows at %d, more than the %d-row area:\n%s", sz.cols, sz.rows, len(b.cells), b.y, sz.rows-1, all)
		}
	}
}
