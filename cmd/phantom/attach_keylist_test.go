package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// End-to-end tests of the key list (prefix ?) in a real outer terminal:
// it fits a tmux user's 80x24 whole, and a smaller terminal pages it.

// keyListLegend is the legend of the status line's marks as the key list
// writes it (status.go's markLegend).
var keyListLegend = []string{"* shown", "[2] 2 panes", "[2Z] zoomed", "● busy", "✓ exit 0", "✗3 exit 3",
	"✎ editor", "◆ agent working", "◇ agent idle", "! agent asks", "⚠ agent unsandboxed", ":3000 dev server"}

// keyListPage reads the key list's last line on screen: the rows shown
// and how many there are, ok false when it does not scroll.
var keyListPage = regexp.MustCompile(`(\d+)-(\d+)/(\d+): j/k`)

// TestAttachKeyList: at 80x24 prefix ? shows every key, prefix n p on
// its first row, and the whole legend, with nothing to scroll (j closes
// it); at 40x12 it starts at n p, says how to scroll, and Space and the
// wheel page down to the legend; q closes it.
func TestAttachKeyList(t *testing.T) {
	in := startPhantom(t)
	o := in.attachOuter(t, 80, 24, nil)
	o.waitFor("the status line", func(string) bool { return strings.Contains(o.status(), "1:") })

	o.prefix("?")
	o.waitText("any key closes this list")
	scr := o.screen()
	first := regexp.MustCompile(`keys: prefix C-\\, then[^\n]*\n[^\n]*│ n p +next / previous entry`)
	if !first.MatchString(scr) {
		t.Errorf("80x24: the list's first row is not prefix n p:\n%s", scr)
	}
	for _, want := range append([]string{"1-9", "( )", "C-arrows", "[ PPage", "q        leave copy mode", "copy mode", "status line"}, keyListLegend...) {
		if !strings.Contains(scr, want) {
			t.Errorf("80x24: the key list lacks %q:\n%s", want, scr)
		}
	}
	if keyListPage.MatchString(scr) {
		t.Errorf("80x24: the key list scrolls:\n%s", scr)
	}
	o.keys("j") // nothing to scroll: any key closes
	o.waitFor("the list closed", func(s string) bool { return !strings.Contains(s, "any key closes this list") })

	o.resize(40, 12)
	o.prefix("?") // the box follows the client's size, whenever it comes
	o.waitFor("the first page", func(s string) bool { return keyListPage.MatchString(s) })
	if scr := o.screen(); !first.MatchString(scr) || !strings.Contains(scr, "PgUp/PgDn Space") {
		t.Errorf("40x12: the first page does not start at n p or does not say how to scroll:\n%s", scr)
	}
	seen := map[string]bool{}
	last := 0
	for step := 0; ; step++ {
		scr := o.screen()
		for _, l := range keyListLegend {
			if strings.Contains(scr, l) {
				seen[l] = true
			}
		}
		m := keyListPage.FindStringSubmatch(scr)
		if m == nil {
			t.Fatalf("40x12: no page line after %d steps:\n%s", step, scr)
		}
		to, _ := strconv.Atoi(m[2])
		total, _ := strconv.Atoi(m[3])
		if to == total || step > 20 {
			break
		}
		if step%2 == 0 {
			o.keys("Space")
		} else {
			o.bytes([]byte("\x1b[<65;10;5M")) // the wheel, down
		}
		last = to
		o.waitFor("the next page", func(s string) bool {
			m := keyListPage.FindStringSubmatch(s)
			n := 0
			if m != nil {
				n, _ = strconv.Atoi(m[2])
			}
			return n > last
		})
	}
	for _, l := range keyListLegend {
		if !seen[l] {
			t.Errorf("40x12: paging never showed the legend's %q", l)
		}
	}
	o.keys("q")
	o.waitFor("the list closed", func(s string) bool { return !keyListPage.MatchString(s) })
	o.prefix("d")
	eventually(t, "the client to end", func() (bool, string) { done, _ := o.exited(); return done, o.screen() })
}
