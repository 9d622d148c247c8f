package attach

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// The grants view's box: the grants, two rows each (who may do what, how
// far; then the program or the once call, and the project), then the
// audit log's last decisions, one row each, newest first, then the keys.
// Rows are cut to the box's width with "…", never wrapped, so that the
// highlight and the scrolling count whole grants. When the box is short
// the decisions give way first, but keep a third of the room.

// grantsWidth is the widest the box's inside gets.
const grantsWidth = 100

// grantsBox is the view's box for the current state.
func (s *session) grantsBox() *sheetBox {
	gv := &s.gv
	area := s.rows - 1
	inner := max(min(s.cols-4, grantsWidth), 1)
	avail := max(area-2, 1)                             // inside the border
	keys := wrap(nil, s.grantsKeysLine(), inner, avail) // wrapped, not cut: they must all show

	var top, bottom [][]screen.Cell
	top = append(top, clipRow([]span{{"Grants", styleBold}, {" — standing (always) and once; an agent is asked again once its grant is revoked", styleDim}}, inner))
	grantRows := s.grantRows(inner)
	decRows := s.decisionRows(inner)
	bottom = append(bottom, nil, clipRow([]span{{"Last decisions", styleBold}, {" (audit log, newest first; phantom audit shows all)", styleDim}}, inner))

	// Room: the fixed rows (headers, the blank between, the keys), then
	// the grants, then the decisions with at least a third of what is left.
	room := max(avail-len(top)-len(bottom)-1-len(keys), 0) // a blank before the keys
	decRoom := max(min(len(decRows), max(room-len(grantRows), room/3)), 0)
	grRoom := max(room-decRoom, 0)
	if grRoom < len(grantRows) && len(gv.grants) > 0 {
		grRoom -= grRoom % 2 // whole grants
	}

	body := append(top, s.scrollGrants(grantRows, grRoom)...)
	if room-grRoom > 0 {
		body = append(body, bottom...)
		body = append(body, decRows[:decRoom]...)
	}
	body = append(append(body, nil), keys...)
	if len(body) > avail { // a tiny client: the keys still show
		body = body[len(body)-avail:]
	}
	b := &sheetBox{cells: boxRows(body, inner, " grants (prefix "+s.grantsKey()+") ")}
	b.x, b.y = max((s.cols-(inner+4))/2, 0), max((area-len(b.cells))/2, 0)
	return b
}

// grantsKey is the key that opens the view, as the key list writes it.
func (s *session) grantsKey() string {
	if k := s.settings().Bindings.KeysOf("grants"); len(k) > 0 {
		return k[0]
	}
	return "g"
}

// grantRows are the rows of the grants, two per grant, the highlighted
// one in inverse video; or one row saying why there are none.
func (s *session) grantRows(width int) [][]screen.Cell {
	gv := &s.gv
	switch {
	case gv.listErr != "":
		return [][]screen.Cell{clipRow([]span{{"cannot list the grants: " + Visible(gv.listErr), styleAlarm}}, width)}
	case !gv.loaded:
		return [][]screen.Cell{clipRow([]span{{"reading the grants…", styleDim}}, width)}
	case len(gv.grants) == 0:
		return [][]screen.Cell{clipRow([]span{{"No grants: agents are asked before anything sensitive.", stylePlain}}, width)}
	}
	var rows [][]screen.Cell
	for i, g := range gv.grants {
		st, kst := stylePlain, styleBold
		if i == gv.chosen {
			st, kst = styleChosen, styleChosen
		}
		kind := "once"
		switch {
		case g.Pending:
			kind = "always, PENDING (phantom grants accept " + Visible(g.ID) + ")"
		case g.Always:
			kind = "always"
		}
		first := []span{{Visible(g.ID), kst}, {"  " + kind + "  ", st}, {Visible(g.Client), kst},
			{" may " + Visible(g.Capability) + ", scope " + g.Scope.String(), st}}
		var second []string
		switch {
		case !g.Always:
			second = append(second, "only "+Visible(g.Call))
		case g.Program == "":
			second = append(second, "for no program (written before grants named one): covers nothing; revoke it")
		default:
			second = append(second, "program "+Visible(g.Program))
		}
		if g.Project != "" {
			second = append(second, "project "+Visible(g.Project))
		}
		rows = append(rows, fillRow(clipRow(first, width), width, st),
			fillRow(clipRow([]span{{"    " + strings.Join(second, " · "), st}}, width), width, st))
	}
	return rows
}

// scrollGrants keeps room rows of the grants' rows, scrolled to show the
// highlighted grant.
func (s *session) scrollGrants(rows [][]screen.Cell, room int) [][]screen.Cell {
	if len(rows) <= room {
		return rows
	}
	if room <= 0 {
		return nil
	}
	per := room / 2 // grants that fit
	if per == 0 {
		return rows[2*s.gv.chosen : 2*s.gv.chosen+1]
	}
	first := max(min(s.gv.chosen-per/2, len(s.gv.grants)-per), 0)
	return rows[2*first : 2*first+2*per]
}

// decisionRows are the audit log's decisions, one row each.
func (s *session) decisionRows(width int) [][]screen.Cell {
	gv := &s.gv
	switch {
	case gv.auditErr != "":
		return [][]screen.Cell{clipRow([]span{{"cannot read the audit log: " + Visible(gv.auditErr), styleAlarm}}, width)}
	case !gv.loaded:
		return [][]screen.Cell{clipRow([]span{{"reading the audit log…", styleDim}}, width)}
	case len(gv.decisions) == 0:
		return [][]screen.Cell{clipRow([]span{{"no decisions in the audit log yet", styleDim}}, width)}
	}
	now := time.Now()
	var rows [][]screen.Cell
	for _, d := range gv.decisions {
		rows = append(rows, clipRow(decisionLine(d, now), width))
	}
	return rows
}

// decisionLine is one decision: when, what, who (and from which tab),
// which tool, on what.
func decisionLine(d AuditDecision, now time.Time) []span {
	when := d.Time.Local().Format("15:04:05")
	if y, m, day := d.Time.Local().Date(); y != now.Year() || m != now.Month() || day != now.Day() {
		when = d.Time.Local().Format("01-02 15:04")
	}
	ost := styleBold
	if d.Outcome != "allowed" {
		ost = styleAlarm
	}
	who := Visible(d.Client)
	if who == "" {
		who = "-"
	}
	if d.Tab != "" {
		who += " in " + Visible(d.Tab)
	}
	l := []span{{when + "  ", styleDim}, {fmt.Sprintf("%-11s", d.Outcome), ost}, {" " + who, stylePlain}}
	if d.Tool != "" {
		l = append(l, span{" " + Visible(d.Tool), styleBold})
	}
	if d.Target != "" {
		l = append(l, span{" → " + Visible(d.Target), stylePlain})
	}
	if d.What != "" {
		l = append(l, span{": " + Visible(d.What), stylePlain})
	}
	if d.Repeated > 0 {
		l = append(l, span{fmt.Sprintf(" (+%d like it)", d.Repeated), styleDim})
	}
	return l
}

// grantsKeysLine says which keys work: the question while one is asked.
func (s *session) grantsKeysLine() []span {
	gv := &s.gv
	if gv.confirm != "" {
		l := []span{{"revoke " + Visible(gv.confirm), styleAlarm}}
		for _, g := range gv.grants {
			if g.ID == gv.confirm {
				l = append(l, span{" (" + Visible(g.Client) + " may " + Visible(g.Capability) + ", scope " + g.Scope.String() + ")", stylePlain})
			}
		}
		return append(l, span{"? ", styleAlarm}, span{"y", styleBold}, span{" revoke, any other key keeps it", stylePlain})
	}
	if r := cmp.Or(gv.revoking, gv.queued); r != "" {
		return []span{{"revoking " + Visible(r) + "…", stylePlain}}
	}
	return []span{{"↑↓", styleBold}, {" select  ", stylePlain}, {"d", styleBold}, {"/", stylePlain}, {"x", styleBold},
		{" revoke  ", stylePlain}, {"r", styleBold}, {" refresh  ", stylePlain}, {"Esc", styleBold}, {" close", stylePlain}}
}

// clipRow lays l out on one row width cells wide, cut with "…" when it
// does not fit.
func clipRow(l []span, width int) []screen.Cell {
	rows, _ := wrapCount(nil, l, 1<<20, 1)
	if len(rows) == 0 {
		return nil
	}
	row := rows[0]
	if len(row) <= width {
		return row
	}
	cut := max(width-1, 0)
	if cut > 0 && cut < len(row) && row[cut].Width == 0 && row[cut-1].Width == 2 {
		cut-- // do not split a wide character
	}
	st := stylePlain
	if cut > 0 {
		st = row[cut-1].Style
	}
	return append(row[:cut:cut], screen.Cell{Rune: '…', Width: 1, Style: st})
}

// fillRow pads row to width cells in style st, so that a highlight spans
// the box.
func fillRow(row []screen.Cell, width int, st screen.Style) []screen.Cell {
	for len(row) < width {
		row = append(row, screen.Cell{Rune: ' ', Width: 1, Style: st})
	}
	return row
}
