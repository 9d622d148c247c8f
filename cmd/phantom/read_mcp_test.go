package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/testenv"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald"
	"github.com/phantom-dev/phantom/terminald/screen"
)

// readPage is a read_output result's structuredContent.
type readPage struct {
	Lines           []string `json:"lines"`
	FirstSeq        string   `json:"first_seq"`
	FirstLineOffset string   `json:"first_line_offset"`
	LastLineCut     bool     `json:"last_line_cut"`
	NextCursor      string   `json:"next_cursor"`
	More            bool     `json:"more"`
	OlderCursor     string   `json:"older_cursor"`
	TrimmedLines    string   `json:"trimmed_lines"`
	Note            string   `json:"note"`
}

// size is the page's text as read_output bounds it: each line plus its
// break.
func (p readPage) size() int {
	n := 0
	for _, l := range p.Lines {
		n += len(l) + 1
	}
	return n
}

// readPagesFile reads the pages a test agent's pages step wrote.
func readPagesFile(t *testing.T, path string) []readPage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []readPage
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var p readPage
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// joinPages puts pages given oldest first back into lines, joining the
// parts of a line cut at a page's end, and checks that every page keeps
// to bound and that the line numbers follow each other.
func joinPages(t *testing.T, pages []readPage, bound int) []string {
	t.Helper()
	var out []string
	cut := false
	next := uint64(0)
	for i, p := range pages {
		if p.size() > bound {
			t.Fatalf("page %d holds %d bytes, over the bound %d", i, p.size(), bound)
		}
		if len(p.Lines) == 0 {
			continue
		}
		seq, _ := strconv.ParseUint(p.FirstSeq, 10, 64)
		off, _ := strconv.ParseUint(cmpOr(p.FirstLineOffset, "0"), 10, 64)
		lines := p.Lines
		if len(out) > 0 {
			switch {
			case cut && off > 0 && seq == next-1:
				out[len(out)-1] += lines[0]
				lines = lines[1:]
			case cut || off > 0 || seq != next:
				t.Fatalf("page %d starts at line %d byte %d, after line %d (cut %v)", i, seq, off, next-1, cut)
			}
		}
		out = append(out, lines...)
		next = seq + uint64(len(p.Lines))
		cut = p.LastLineCut
		if cut && !strings.Contains(p.Note, "cut") {
			t.Errorf("page %d cuts its last line but its note does not say so: %q", i, p.Note)
		}
	}
	return out
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// sameLines reports the first difference between got and want.
func sameLines(got, want []string) error {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Errorf("line %d of %d differs: got %d bytes %.80q…, want %d bytes %.80q…", i, len(want), len(got[i]), got[i], len(want[i]), want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("got %d lines, want %d", len(got), len(want))
	}
	return nil
}

// readTestData writes the files the read tests print in tabs and returns
// what each tab will show, line by line: a.txt, >8 MB of lines of varied
// length and script; b.txt, a line of several MiB between two short ones;
// c.bin, 10 MiB of random bytes (its expected lines come from a screen fed
// the same bytes, see randomLines).
func readTestData(t *testing.T, dir string, nLines int) (a, b []string) {
	t.Helper()
	r := rand.New(rand.NewSource(12))
	words := []string{"error:", "ok", "résumé", "日本語", "über", "go test ./...", "--- FAIL", "x=1", "παράδειγμα", "→", "done."}
	var buf bytes.Buffer
	for i := range nLines {
		var l strings.Builder
		fmt.Fprintf(&l, "%06d", i)
		for w := r.Intn(24); w > 0; w-- {
			l.WriteByte(' ')
			l.WriteString(words[r.Intn(len(words))])
		}
		a = append(a, l.String())
		buf.WriteString(l.String())
		buf.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var long strings.Builder
	for long.Len() < 3<<20 {
		fmt.Fprintf(&long, "%d:%s|", long.Len(), words[r.Intn(len(words))])
	}
	b = []string{"before", strings.TrimRight(long.String(), " "), "after"}
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte(strings.Join(b, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rnd := make([]byte, 10<<20)
	r.Read(rnd)
	if err := os.WriteFile(filepath.Join(dir, "c.bin"), rnd, 0o600); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// randomLines is what a tab of cols x rows shows after cat of data and
// then the script of randomTab: a screen of Phantom's own, fed the bytes
// the terminal passes on (the line discipline turns \n into \r\n).
func randomLines(data []byte, cols, rows, scrollback int) []string {
	s := screen.New(screen.Options{Cols: cols, Rows: rows, Scrollback: scrollback})
	s.Write(bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")))
	s.Write([]byte("\x1bcEND-OF-C\r\n"))
	return s.LastLines(100000)
}

// readTabs opens the three tabs of the read tests as the human, each
// printing its file then an end mark, and waits until they did.
func readTabs(t *testing.T, env *testenv.Env, dir string) (a, b, c string) {
	t.Helper()
	tc, _ := humanClients(t, env)
	open := func(script string, cols int32) string {
		resp, err := tc.CreateTerminal(tctx(t), &terminalv1.CreateTerminalRequest{
			Directory: dir, Cols: cols, Rows: 24, Command: []string{"sh", "-c", script + "; exec sleep 3600"}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetTerminal().GetId()
	}
	a = open("cat a.txt; echo END-OF-A", 200)
	b = open("cat b.txt; echo END-OF-B", 200)
	c = open(`stty -echo; cat c.bin; printf '\033c'; echo END-OF-C`, 80)
	for _, tab := range []struct{ id, mark string }{{a, "END-OF-A"}, {b, "END-OF-B"}, {c, "END-OF-C"}} {
		testenv.EventuallyWithin(t, 2*time.Minute, tab.mark, func() (bool, string) {
			n := int32(3)
			resp, err := tc.ReadOutput(tctx(t), &terminalv1.ReadOutputRequest{TerminalId: tab.id, Lines: &n})
			return err == nil && slices.Contains(resp.GetLines(), tab.mark), fmt.Sprint(err, resp.GetLines())
		})
	}
	return a, b, c
}

// TestReadOutputAnySize reads tabs holding more than gRPC's default 4 MiB
// message — >8 MB of lines, a line of several MiB, 10 MiB of random bytes
// — through read_output page by page, from the official MCP Go SDK client
// in a real tab, and through `phantom read -n 100000`: every line comes
// back as written, and no page exceeds the default bound.
func TestReadOutputAnySize(t *testing.T) {
	env, _ := up(t)
	dir := t.TempDir()
	wantA, wantB := readTestData(t, dir, 95000)
	rnd, err := os.ReadFile(filepath.Join(dir, "c.bin"))
	if err != nil {
		t.Fatal(err)
	}
	wantA = append(wantA, "END-OF-A")
	wantB = append(wantB, "END-OF-B")
	wantC := randomLines(rnd, 80, 24, config.DefaultScrollback)
	if n := len(strings.Join(wantA, "\n")); n < 8<<20 {
		t.Fatalf("tab a would hold only %d bytes", n)
	}
	tabA, tabB, tabC := readTabs(t, env, dir)

	out := t.TempDir()
	ready := filepath.Join(out, "ready")
	pages := func(tab, name, follow string) map[string]any {
		return map[string]any{"op": "pages", "tool": "read_output", "follow": follow, "out": filepath.Join(out, name),
			"args": map[string]any{"terminal_id": tab, "lines": 100000}}
	}
	_, read := runAgent(t, env, []map[string]any{
		{"op": "wait", "file": ready},
		pages(tabA, "a", "older-then-next"),
		pages(tabB, "b", "older-then-next"),
		pages(tabC, "c", "older"),
	})
	stop := make(chan struct{})
	defer close(stop)
	answerSheets(t, env, "read_output", stop)
	os.WriteFile(ready, nil, 0o600)

	bound := terminald.DefaultReadBytes
	for i, tab := range []struct {
		name    string
		id      string
		want    []string
		forward bool
	}{{"a", tabA, wantA, true}, {"b", tabB, wantB, true}, {"c", tabC, wantC, false}} {
		step := waitStepWithin(t, read, i+1, 3*time.Minute)
		if step.Error != "" {
			t.Fatalf("tab %s: pages: %s", tab.name, step.Error)
		}
		t.Logf("tab %s through MCP: %s", tab.name, step.Result)
		// Backward: the newest page first, then older_cursor.
		back := readPagesFile(t, filepath.Join(out, tab.name))
		slices.Reverse(back)
		if err := sameLines(joinPages(t, back, bound), tab.want); err != nil {
			t.Errorf("tab %s read back through older_cursor: %v", tab.name, err)
		}
		if tab.forward {
			// Forward: the oldest page, then next_cursor to the end.
			fwd := append(back[:1:1], readPagesFile(t, filepath.Join(out, tab.name)+".next")...)
			if err := sameLines(joinPages(t, fwd, bound), tab.want); err != nil {
				t.Errorf("tab %s read forward through next_cursor: %v", tab.name, err)
			}
		}
		// The CLI pages by itself.
		r := phantom(t, env, "read", tab.id, "-n", "100000")
		if r.code != 0 {
			t.Fatalf("phantom read %s: %v", tab.id, r)
		}
		if err := sameLines(strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"), tab.want); err != nil {
			t.Errorf("phantom read %s -n 100000: %v", tab.id, err)
		}
	}
	// The long line came in parts, each page saying so.
	b := readPagesFile(t, filepath.Join(out, "b"))
	if len(b) < (3<<20)/bound || !slices.ContainsFunc(b, func(p readPage) bool { return p.LastLineCut }) {
		t.Errorf("the line of 3 MiB came in %d pages, none cut", len(b))
	}
}
