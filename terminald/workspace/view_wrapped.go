package workspace

import "github.com/phantom-dev/phantom/terminald/screen"

// HistoryWrapped is History with, for each line, whether the program's
// text ran on past the line's end (a soft wrap) rather than ending it:
// copy mode copies and searches such lines as one.
func (v *View) HistoryWrapped(top, n int) (lines [][]screen.Cell, wrapped []bool, total int) {
	t := v.t
	t.mu.Lock()
	defer t.mu.Unlock()
	sb := t.scr.ScrollbackLen()
	_, rows := t.scr.Size()
	total = sb + rows
	lines, wrapped = make([][]screen.Cell, n), make([]bool, n)
	for i := range lines {
		switch y := top + i; {
		case y < 0 || y >= total:
		case y < sb:
			lines[i], wrapped[i] = t.scr.ScrollbackRow(y)
		default:
			lines[i], wrapped[i] = t.scr.Row(y-sb), t.scr.RowWrapped(y-sb)
		}
	}
	return lines, wrapped, total
}
