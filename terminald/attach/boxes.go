package attach

import (
	"strings"

	"github.com/phantom-dev/phantom/internal/config"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// The boxes drawn over the tab besides the permission sheet: the key list
// (prefix ?, laid out in keylist.go) and the tree of windows and tabs
// (prefix w, tree.go).

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
		list[i][0] = "prefix " + shortKeys(list[i][0])
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
	return s.placeBoxWidth(body, title, max(min(s.cols-4, 72), 1))
}

// placeBoxWidth is placeBox for a box inner cells wide inside its border.
func (s *session) placeBoxWidth(body [][]screen.Cell, title string, inner int) *sheetBox {
	area := s.rows - 1
	if keep := max(area-2, 0); len(body) > keep {
		body = body[len(body)-keep:] // (a terminal of 1 or 2 rows has room for none)
	}
	b := &sheetBox{cells: boxRows(body, inner, title)}
	b.x, b.y = max((s.cols-(inner+4))/2, 0), max((area-len(b.cells))/2, 0)
	return b
}

// prefixName writes the prefix key as config.json does.
func prefixName(p byte) string { return config.KeyName(string(rune(p))) }
