package attach

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/phantom-dev/phantom/terminald/workspace"
)

// fakeSheets is a queue of sheets; an answer takes the head off.
type fakeSheets struct {
	mu      sync.Mutex
	queue   []*Sheet
	changed chan struct{}
	answers []string // "id decision scope"
}

func newFakeSheets() *fakeSheets { return &fakeSheets{changed: make(chan struct{})} }

func (f *fakeSheets) Current() (*Sheet, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queue) == 0 {
		return nil, 0
	}
	s := *f.queue[0]
	s.WaitingBehind = len(f.queue) - 1
	return &s, len(f.queue)
}

func (f *fakeSheets) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

func (f *fakeSheets) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeSheets) push(s *Sheet) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = append(f.queue, s)
	f.notifyLocked()
}

// withdraw drops sheet id, as authz does when its connection closes.
func (f *fakeSheets) withdraw(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = slices.DeleteFunc(f.queue, func(s *Sheet) bool { return s.ID == id })
	f.notifyLocked()
}

// replace puts next where sheet id was, in one change: a withdrawn sheet
// and the one that takes its place on screen.
func (f *fakeSheets) replace(id string, next *Sheet) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.IndexFunc(f.queue, func(s *Sheet) bool { return s.ID == id })
	f.queue[i] = next
	f.notifyLocked()
}

func (f *fakeSheets) Answer(_ context.Context, id string, d Decision, scope Scope) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queue) == 0 || f.queue[0].ID != id {
		return fmt.Errorf("no sheet %s on screen", id)
	}
	f.answers = append(f.answers, fmt.Sprintf("%s %s %s", id, d, scope))
	f.queue = f.queue[1:]
	f.notifyLocked()
	return nil
}

func (f *fakeSheets) answered() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.answers)
}

func readSheet(id string) *Sheet {
	return &Sheet{ID: id, Client: "claude", TabID: "t3", TabTitle: "build", Capability: "read",
		Reach: ScopeGroup, Tool: "read_output", Subject: "tab t5 (server logs)", Project: "/src/app",
		Deadline: time.Now().Add(42 * time.Second)}
}

func sheetClient(t *testing.T) (*fakeClient, *fakeSheets) {
	ws := newWorkspace(t)
	if _, err := ws.Create(workspace.CreateSpec{Directory: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	f := newFakeSheets()
	c := startClientWith(t, Options{Workspace: ws, Sheets: f}, Hello{Cols: 100, Rows: 30})
	c.waitText("1:")
	return c, f
}

func (c *fakeClient) waitNoText(s string) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%q gone", s), func(text string) bool { return !strings.Contains(text, s) })
}

// waitArmed waits until the box's answer keys are armed.
func (c *fakeClient) waitArmed() {
	c.t.Helper()
	c.waitFor("the keys to arm", func(s string) bool { return strings.Contains(s, "d deny  ") && !strings.Contains(s, armingText) })
}

func (c *fakeClient) waitAnswers(f *fakeSheets, want ...string) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Equal(f.answered(), want) {
		if time.Now().After(deadline) {
			c.t.Fatalf("answers %q, want %q; the client shows:\n%s", f.answered(), want, c.text())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSheetMarkerIsLive(t *testing.T) {
	c, f := sheetClient(t)
	f.push(readSheet("s1"))
	c.waitFor("the marker", func(string) bool { return strings.Contains(c.row(29), "1 sheet (prefix s)") })
	f.push(readSheet("s2"))
	c.waitFor("two sheets", func(string) bool { return strings.Contains(c.row(29), "2 sheets") })
	f.withdraw("s1")
	f.withdraw("s2")
	c.waitFor("no marker", func(string) bool { return !strings.Contains(c.row(29), "sheet") })
}

func TestSheetBoxAnswers(t *testing.T) {
	c, f := sheetClient(t)
	c.send("echo mark-$((40+2))\r")
	c.waitText("mark-42")
	f.push(readSheet("s1"))
	run := readSheet("s2")
	run.Capability, run.Reach, run.Tool, run.Subject = "run", ScopeTab, "run_command", "make test"
	f.push(run)

	c.send("\x1cs")
	for _, want := range []string{
		"claude in tab t3 (build) wants to READ", "reach: group", "read_output: tab t5 (server logs)",
		"project /src/app", "s left — 1 more waiting",
	} {
		c.waitText(want)
	}
	c.waitArmed()
	// The box's scopes start at the reach: never narrower.
	c.waitFor("scopes group and all", func(s string) bool {
		return strings.Contains(s, "scope:  group   all") && !strings.Contains(s, "tab  ")
	})
	// Keys in the box never reach the tab.
	c.send("zzz")
	c.send("s") // group → all
	c.send("s") // all → back to the reach
	c.send("\t")
	c.send("a")
	c.waitAnswers(f, "s1 allowed always all")

	// The next sheet follows in the box, its scope starting at its reach;
	// its keys arm anew.
	c.waitText("wants to RUN")
	c.waitText("run_command: make test")
	c.waitArmed()
	c.send("d")
	c.waitAnswers(f, "s1 allowed always all", "s2 denied tab")
	c.waitNoText("permission sheet")
	c.waitText("mark-42")
	c.send("\r")
	time.Sleep(200 * time.Millisecond)
	if strings.Contains(c.text(), "zzz") {
		t.Errorf("keys typed into the box reached the tab:\n%s", c.text())
	}

	// Once, after widening: once is the call on the sheet, so it goes out
	// at the call's reach, not at the widened scope.
	again := *run
	again.ID = "s3"
	f.push(&again)
	c.send("\x1cs")
	c.waitText("run_command: make test")
	c.waitArmed()
	c.send("so")
	c.waitAnswers(f, "s1 allowed always all", "s2 denied tab", "s3 allowed once tab")
	c.waitNoText("permission sheet")
}

func TestSheetBoxEscAndWithdraw(t *testing.T) {
	c, f := sheetClient(t)
	c.send("\x1cs")
	c.waitText("no permission sheet waiting")

	f.push(readSheet("s1"))
	c.send("\x1cs")
	c.waitText("wants to READ")
	c.send("\x1b")
	c.waitNoText("wants to READ")
	if got := f.answered(); len(got) != 0 {
		t.Fatalf("Esc answered: %q", got)
	}
	if !strings.Contains(c.row(29), "1 sheet") {
		t.Errorf("after Esc the sheet still waits; status line %q", c.row(29))
	}

	// Withdrawn while the box is open: the box closes by itself.
	c.send("\x1cs")
	c.waitText("wants to READ")
	f.withdraw("s1")
	c.waitNoText("wants to READ")
	c.waitText("withdrawn")
}

// TestSheetKeysWaitToArm: keys pressed before the box has shown its
// content for a second do nothing, and a sheet that replaces a withdrawn
// one on screen cannot be answered by a key meant for the first.
func TestSheetKeysWaitToArm(t *testing.T) {
	c, f := sheetClient(t)
	first := readSheet("s1")
	first.Deadline = time.Time{} // no countdown to redraw the box: it arms all the same
	f.push(first)
	c.send("\x1cs")
	c.waitText(armingText)
	c.send("a")
	c.waitArmed()
	if got := f.answered(); len(got) != 0 {
		t.Fatalf("a key pressed before the keys armed answered: %q", got)
	}

	// Withdrawn and replaced at once by a dangerous one: the key meant for
	// the first must not approve the second.
	run := readSheet("s2")
	run.Capability, run.Reach, run.Tool, run.Subject = "run", ScopeAll, "run_command", `"git push --force" typed into tab t1`
	f.replace("s1", run)
	c.send("a")
	c.waitText("git push --force")
	c.waitText(armingText)
	c.waitArmed()
	if got := f.answered(); len(got) != 0 {
		t.Fatalf("the replacing sheet was answered by a key meant for the withdrawn one: %q", got)
	}
	c.send("o")
	c.waitAnswers(f, "s2 allowed once all")
}

// TestSheetBoxShowsWholeSubject: a long subject wraps over as many rows
// as it needs, to its last character.
func TestSheetBoxShowsWholeSubject(t *testing.T) {
	c, f := sheetClient(t)
	run := readSheet("s1")
	run.Tool, run.Subject = "run_command", `"make test" + 3000 spaces + "`+strings.Repeat("x", 400)+`; echo PWNED" typed into tab t2`
	f.push(run)
	c.send("\x1cs")
	c.waitText("; echo PWNED\" typed into tab t2")
	c.waitArmed()
	c.send("o")
	c.waitAnswers(f, "s1 allowed once group")
}

// TestSheetBoxTooSmall: a request the box cannot show whole says how much
// is missing, and only deny works.
func TestSheetBoxTooSmall(t *testing.T) {
	c, f := sheetClient(t)
	run := readSheet("s1")
	run.Tool, run.Subject = "run_command", strings.Repeat("y", 2987)+"END"
	f.push(run)
	c.send("\x1cs")
	// who, reach, 42 rows of "run_command: " and the subject, project: 45
	// rows; 27 fit in a 30-row client, less the note and the keys.
	c.waitText("… 20 more lines — answer with phantom sheet, which shows it all")
	c.waitArmed()
	if strings.Contains(c.text(), "END") || strings.Contains(c.text(), "o once") {
		t.Fatalf("the box shows the end of a request it says it cannot show, or offers allow:\n%s", c.text())
	}
	c.send("a")
	c.waitText("allow refused: the box cannot show the whole request")
	c.send("o")
	c.send("d")
	c.waitAnswers(f, "s1 denied group")
}

// bareSession is a session with the box open on sh, without a workspace:
// for driving the box and its keys directly.
func bareSession(sh *Sheet, cols, rows int) (*session, *fakeSheets) {
	f := newFakeSheets()
	f.push(sh)
	return &session{o: Options{Sheets: f, Prefix: DefaultPrefix}, cols: cols, rows: rows, mode: modeSheet,
		sheet: sh, scope: max(sh.Reach, ScopeTab), answers: make(chan answerResult, 1)}, f
}

// age makes the box look as if it had shown its content for armDelay,
// and redraws it.
func (s *session) age() {
	s.boxCache.since = s.boxCache.since.Add(-armDelay)
	s.box()
}

func TestSheetKeysTable(t *testing.T) {
	long := readSheet("s1")
	long.Subject = strings.Repeat("z", 4000)
	tests := []struct {
		name    string
		sheet   *Sheet
		prepare func(s *session)
		keys    string
		want    string // the answer sent; "" for none
	}{
		{"armed: once", readSheet("s1"), func(s *session) { s.box(); s.age() }, "o", "s1 allowed once group"},
		{"armed: always, widened", readSheet("s1"), func(s *session) { s.box(); s.age() }, "sa", "s1 allowed always all"},
		{"armed: deny", readSheet("s1"), func(s *session) { s.box(); s.age() }, "d", "s1 denied group"},
		{"never drawn", readSheet("s1"), func(*session) {}, "o", ""},
		{"drawn just now", readSheet("s1"), func(s *session) { s.box() }, "dao", ""},
		{"content changed since drawn", readSheet("s1"), func(s *session) {
			s.box()
			s.age()
			other := *s.sheet
			other.Subject = "tab t1 (human)"
			s.sheet = &other
		}, "o", ""},
		{"same content, new countdown", readSheet("s1"), func(s *session) {
			s.box()
			s.age()
			later := *s.sheet
			later.Deadline, later.WaitingBehind = later.Deadline.Add(-time.Second), 3
			s.sheet = &later
		}, "o", "s1 allowed once group"},
		{"resized since drawn", readSheet("s1"), func(s *session) { s.box(); s.age(); s.cols = 90 }, "o", ""},
		{"incomplete: allow refused", long, func(s *session) { s.box(); s.age() }, "ao", ""},
		{"incomplete: deny works", long, func(s *session) { s.box(); s.age() }, "d", "s1 denied group"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, f := bareSession(tt.sheet, 100, 30)
			tt.prepare(s)
			s.sheetKeys([]byte(tt.keys))
			s.bg.Wait()
			var got []string
			if s.answering != "" {
				s.answerDone(<-s.answers)
				got = f.answered()
			}
			if want := []string{tt.want}; (tt.want == "" && len(got) != 0) || (tt.want != "" && !slices.Equal(got, want)) {
				t.Errorf("answers %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSheetBoxRendering checks what the box shows of awkward requests,
// cell by cell: everything, wrapped, and nothing raw that could act on
// the human's terminal.
func TestSheetBoxRendering(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(*Sheet)
		cols     int
		rows     int
		want     []string // substrings of the box's text, rows joined
		complete bool
	}{
		{"plain", func(*Sheet) {}, 100, 30, []string{"claude in tab t3 (build) wants to READ", "read_output: tab t5 (server logs)"}, true},
		{"escapes and bidi", func(s *Sheet) {
			s.Client = "cl\x1b]0;x\aaude"
			s.TabTitle = "\u202ebuild"
			s.Subject = "rm\u200b -rf \u2066/\u2069 \u009b2J"
		}, 100, 30, []string{`cl\x1b]0;x\aaude`, `\u202ebuild`, `rm\u200b -rf \u2066/\u2069 \u009b2J`}, true},
		{"wide characters wrap whole", func(s *Sheet) { s.Subject = strings.Repeat("界", 100) + "END" }, 40, 30,
			[]string{"界界END"}, true},
		{"too small", func(s *Sheet) { s.Subject = strings.Repeat("w", 900) }, 40, 12, []string{"more lines — answer with phantom sheet"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := readSheet("s1")
			tt.edit(sh)
			s, _ := bareSession(sh, tt.cols, tt.rows)
			b := s.box()
			if b.complete != tt.complete {
				t.Errorf("complete = %v, want %v", b.complete, tt.complete)
			}
			if len(b.cells) > tt.rows-1 {
				t.Errorf("the box has %d rows, more than the %d of the tab area", len(b.cells), tt.rows-1)
			}
			var text strings.Builder
			for _, row := range b.cells {
				for _, c := range row {
					for _, r := range c.String() {
						if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
							t.Errorf("the box carries %U raw", r)
						}
					}
					text.WriteString(c.String())
				}
			}
			flat := strings.NewReplacer("│", "", " ", "").Replace(text.String())
			for _, w := range tt.want {
				if !strings.Contains(flat, strings.ReplaceAll(w, " ", "")) {
					t.Errorf("the box does not show %q:\n%s", w, text.String())
				}
			}
		})
	}
}

func TestVisible(t *testing.T) {
	tests := []struct{ in, want string }{
		{"make test", "make test"},
		{"a\x1b[2Jb", `a\x1b[2Jb`},
		{"\u202eevil\u202c", `\u202eevil\u202c`},
		{"zero\u200bwidth\ufeff", `zero\u200bwidth\ufeff`},
		{"nb\u00a0sp\u2800", `nb\u00a0sp\u2800`},
		{"line\u2028sep", `line\u2028sep`},
		{"c1\u009bx", `c1\u009bx`},
		{"bad\xffutf8", "bad\ufffdutf8"},
		{"e\u0301\u0301\u0301\u0301", "e\u0301\u0301\u0301" + `\u0301`},
		{"界 ok", "界 ok"},
	}
	for _, tt := range tests {
		if got := Visible(tt.in); got != tt.want {
			t.Errorf("Visible(%+q) = %+q, want %+q", tt.in, got, tt.want)
		}
	}
}

func TestWrapCount(t *testing.T) {
	tests := []struct {
		name         string
		text         string
		width, limit int
		rows, total  int
	}{
		{"fits", "abc", 5, 10, 1, 1},
		{"exactly full", "abcde", 5, 10, 1, 1},
		{"wraps", "abcdef", 5, 10, 2, 2},
		{"counted past the limit", strings.Repeat("a", 100), 10, 3, 3, 10},
		{"wide at the edge moves down", "abcd界", 5, 10, 2, 2},
		{"marks stay on their character", "e\u0301e\u0301", 2, 10, 1, 1},
		{"marks on a wide character", "界\u0301", 2, 10, 1, 1},
		{"breaks before a word", "ab cdef", 5, 10, 2, 2},
		{"a word too long for a row breaks in it", "abcdefghij", 4, 10, 3, 3},
		{"spaces are kept", "ab     cd", 4, 10, 3, 3},
		{"a long word starts where it is", "ab cdefghij", 4, 10, 3, 3},
		{"empty", "", 5, 10, 1, 1},
	}
	for _, tt := range tests {
		rows, total := wrapCount(nil, []span{{tt.text, stylePlain}}, tt.width, tt.limit)
		if len(rows) != tt.rows || total != tt.total {
			t.Errorf("%s: %d rows built, %d in all; want %d and %d", tt.name, len(rows), total, tt.rows, tt.total)
		}
		var kept strings.Builder
		for _, r := range rows {
			if len(r) > tt.width {
				t.Errorf("%s: a row %d cells wide, more than %d", tt.name, len(r), tt.width)
			}
			for _, c := range r {
				kept.WriteString(c.String())
			}
		}
		if len(rows) == tt.total && kept.String() != tt.text {
			t.Errorf("%s: rows hold %q, want every character of %q", tt.name, kept.String(), tt.text)
		}
	}
}
