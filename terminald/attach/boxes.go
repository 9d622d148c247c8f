package attach

import (
	"fmt"
	"strings"

	"github.com/phantom-dev/phantom/internal/config"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// The boxes drawn over the tab besides the permission sheet: the key list
// (prefix ?) and the tree of windows and tabs (prefix w, tree.go).

// keyList is the key list prefix ? shows, each entry a key and what it
// does: the bound commands of config.Commands (commands sharing a help
// text share a line), the keys bound to command lines with arguments,
// then the keys that are not commands.
func keyList(b config.Bindings) [][2]string {
	var list [][2]string
	row := map[string]int{} // the row of each help text
	for _, c := range config.Commands() {
		keys := strings.Join(b.KeysOf(c.Name), " ")
		i, seen := row[c.Help]
		switch {
		case keys == "":
		case seen:
			list[i][0] += " " + keys
		default:
			row[c.Help] = len(list)
			list = append(list, [2]string{keys, c.Help})
		}
	}
	for i := range list {
		if list[i][0] == "1 2 3 4 5 6 7 8 9" {
			list[i][0] = "1-9"
		}
		list[i][0] = "prefix " + list[i][0]
	}
	for _, kl := range b.WithArgs() {
		list = append(list, [2]string{"prefix " + kl[0], kl[1]})
	}
	return append(list,
		[2]string{"prefix twice", "sends the prefix to the tab"},
		[2]string{"copy mode", "arrows hjkl w b e W B E 0 $ g G, PgUp/PgDn, / ? n N"},
		[2]string{"", "v/space select, V lines, C-v block, y copy, q leave"},
		[2]string{"mouse", "click a tab; wheel scrolls; drag copies"},
	)
}

// overlayBox is the box the mode shows over the tab.
func (s *session) overlayBox() *sheetBox {
	switch s.mode {
	case modeHelp:
		return s.helpBox()
	case modeChoose:
		return s.chooseBox()
	case modeGrants:
		return s.grantsBox()
	case modeBuffers:
		return s.buffersBox()
	}
	return s.box()
}

// placeBox frames body with title and centres it in the tab area, cut to
// fit: the last rows are kept (they say which keys answer).
func (s *session) placeBox(body [][]screen.Cell, title string) *sheetBox {
	area := s.rows - 1
	inner := max(min(s.cols-4, 72), 1)
	if len(body) > area-2 {
		body = body[max(len(body)-(area-2), 0):]
	}
	b := &sheetBox{cells: boxRows(body, inner, title)}
	b.x, b.y = max((s.cols-(inner+4))/2, 0), max((area-len(b.cells))/2, 0)
	return b
}

// helpBox is the key list.
func (s *session) helpBox() *sheetBox {
	inner := max(min(s.cols-4, 72), 1)
	var body [][]screen.Cell
	const keyW = 19 // the key column; a longer key pushes its text along
	for _, k := range keyList(s.settings().Bindings) {
		key := k[0]
		pad := max(keyW-len([]rune(key)), 1)
		body = wrap(body, []span{{key, styleBold}, {fmt.Sprintf("%*s", pad, ""), stylePlain}, {k[1], stylePlain}}, inner, 1<<20)
	}
	for i, l := range legendLines(inner - keyW) {
		key := ""
		if i == 0 {
			key = "status line"
		}
		body = wrap(body, []span{{key, styleBold}, {strings.Repeat(" ", keyW-len(key)), stylePlain}, {l, stylePlain}}, inner, 1<<20)
	}
	body = wrap(body, []span{{"any key closes this list", styleDim}}, inner, 1<<20)
	return s.placeBox(body, fmt.Sprintf(" keys (prefix %s) ", prefixName(s.o.Prefix)))
}

// legendLines lays the legend of the status line's marks (markLegend)
// out in lines at most width cells wide, breaking between entries only.
func legendLines(width int) []string {
	var lines []string
	line := ""
	for _, m := range markLegend {
		e := m.mark + " " + m.means
		switch {
		case line == "":
			line = e
		case textWidth(line+"  "+e) <= width:
			line += "  " + e
		default:
			lines, line = append(lines, line), e
		}
	}
	return append(lines, line)
}

// prefixName writes the prefix key as config.json does.
func prefixName(p byte) string { return config.KeyName(string(rune(p))) }
