package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// The vtebench streams: byte streams equivalent to the benchmarks of
// alacritty/vtebench, generated here (nothing of vtebench is copied or
// committed). vtebench repeats each benchmark's output until a minimum
// number of bytes is written; the generators below do the same, for a
// terminal of the given size, and end every stream the same way: modes
// reset, back on the main screen, and the end marker as the last line.
//
//   - dense_cells: every cell of the screen rewritten, frame after frame,
//     each with its own 256-colour foreground and background plus bold,
//     italic and underline (a long SGR before every character).
//   - scrolling: "y\n" for ever: the whole screen scrolls, the scrollback
//     fills.
//   - scrolling_bottom_region: the same on the alternate screen inside a
//     region of all rows but the last (CSI 1;rows-1 r).
//   - scrolling_top_region: the same inside a region of all rows but the
//     first (CSI 2;rows r).
//   - unicode: lines of symbols from many scripts and blocks: box drawing,
//     arrows, mathematics, Greek, Cyrillic, CJK, emoji (some wide, some
//     with variation selectors, ZWJ sequences and flags).
//   - cursor_motion: one character per cursor move (CUP), spiralling in
//     from the screen's edge, for every letter of the alphabet.
//   - medium_cells: an editor session like vim's: syntax-coloured lines
//     with line numbers, scrolled through a region, a reverse-video status
//     line, occasional full redraws, cursor positioning and erase-to-end.
//   - sync_medium_cells: the same with each frame inside synchronized
//     output (mode 2026).

// vtStream is one vtebench-like stream generator: gen writes at least min
// bytes for a cols x rows terminal (without the closing part). scale
// multiplies the stream's size: the streams a PTY carries fast would
// otherwise take a tenth of a second, too short against a tab's start.
type vtStream struct {
	name  string
	gen   func(w *bufio.Writer, cols, rows int, min int64) int64
	scale int64
}

// vtStreams are the streams, in the order the table prints them.
var vtStreams = []vtStream{
	{"dense_cells", genDenseCells, 5},
	{"scrolling", genScrolling(""), 1},
	{"scrolling_bottom_region", genScrolling("bottom"), 1},
	{"scrolling_top_region", genScrolling("top"), 1},
	{"unicode", genUnicode, 5},
	{"cursor_motion", genCursorMotion, 5},
	{"medium_cells", genMediumCells(false), 5},
	{"sync_medium_cells", genMediumCells(true), 5},
}

// streamSizes are the terminal sizes every stream is measured at.
var streamSizes = [][2]int{{80, 24}, {200, 50}}

// streamMB is the size of the scrolling streams: PHANTOM_BENCH_STREAM_MB,
// default 10; the others are vtStream.scale times larger.
func streamMB(tb testing.TB) int64 {
	mb := int64(10)
	if v := os.Getenv("PHANTOM_BENCH_STREAM_MB"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			tb.Fatalf("PHANTOM_BENCH_STREAM_MB=%q: want a positive number of megabytes", v)
		}
		mb = n
	}
	return mb
}

// writeStream writes stream s for a cols x rows terminal, at least min
// bytes, then the closing part: attributes, scroll region and synchronized
// output reset, the main screen back, the cursor on the last row, a line
// feed and the marker line. It returns the bytes written and the marker.
func writeStream(w io.Writer, s vtStream, cols, rows int, min int64) (int64, string, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	size := s.gen(bw, cols, rows, min)
	marker := fmt.Sprintf("PHANTOM-BENCH-END %s %dx%d", s.name, cols, rows)
	n, _ := fmt.Fprintf(bw, "\x1b[0m\x1b[?2026l\x1b[r\x1b[?1049l\x1b[%d;1H\n%s\n", rows, marker)
	size += int64(n)
	return size, marker, bw.Flush()
}

// streamFile returns stream s for cols x rows as a file, generated on first
// use in this process (removed by TestMain).
func streamFile(tb testing.TB, s vtStream, cols, rows int) *genFile {
	tb.Helper()
	mb := streamMB(tb) * s.scale
	name := fmt.Sprintf("%s-%dx%d-%dMB", s.name, cols, rows, mb)
	genMu.Lock()
	defer genMu.Unlock()
	if f, ok := genFiles[name]; ok {
		return f
	}
	if genDir == "" {
		d, err := os.MkdirTemp("", "pbgen")
		if err != nil {
			tb.Fatal(err)
		}
		genDir = d
	}
	path := filepath.Join(genDir, name)
	out, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	size, marker, err := writeStream(out, s, cols, rows, mb<<20)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatalf("generate %s: %v", path, err)
	}
	f := &genFile{path: path, size: size, marker: marker}
	genFiles[name] = f
	return f
}

// genDenseCells rewrites the whole screen, one letter per frame, each cell
// with a long SGR of its own colours (vtebench dense_cells).
func genDenseCells(w *bufio.Writer, cols, rows int, min int64) int64 {
	var size int64
	for offset := 0; size < min; offset++ {
		ch := byte('A' + offset%26)
		n, _ := w.WriteString("\x1b[H")
		size += int64(n)
		for line := 1; line <= rows; line++ {
			for col := 1; col <= cols; col++ {
				i := line + col + offset
				n, _ := fmt.Fprintf(w, "\x1b[38;5;%d;48;5;%d;1;3;4m%c", i%156+100, 255-i%156+100, ch)
				size += int64(n)
			}
		}
	}
	return size
}

// genScrolling writes "y\n" lines: on the main screen (region ""), or on
// the alternate screen inside a region leaving out the last ("bottom") or
// the first ("top") row.
func genScrolling(region string) func(w *bufio.Writer, cols, rows int, min int64) int64 {
	return func(w *bufio.Writer, cols, rows int, min int64) int64 {
		var size int64
		var n int
		switch region {
		case "bottom":
			n, _ = fmt.Fprintf(w, "\x1b[?1049h\x1b[1;%dr", rows-1)
		case "top":
			n, _ = fmt.Fprintf(w, "\x1b[?1049h\x1b[2;%dr", rows)
		}
		size += int64(n)
		const chunk = "y\ny\ny\ny\ny\ny\ny\ny\ny\ny\ny\ny\ny\ny\ny\ny\n"
		for size < min {
			n, _ := w.WriteString(chunk)
			size += int64(n)
		}
		return size
	}
}

// unicodeSymbols are the symbols of the unicode stream, grouped by kind.
var unicodeSymbols = [][]string{
	// Box drawing, blocks, geometric shapes.
	{"─", "│", "┌", "┐", "└", "┘", "├", "┤", "┬", "┴", "┼", "═", "║", "╔", "╗", "╚", "╝", "█", "▓", "▒", "░", "▀", "▄", "■", "□", "▲", "►", "▼", "◄", "◆", "○", "●"},
	// Arrows, mathematics, currency, punctuation.
	{"←", "↑", "→", "↓", "↔", "⇒", "⇔", "∀", "∂", "∃", "∅", "∇", "∈", "∑", "√", "∞", "∫", "≈", "≠", "≤", "≥", "⊂", "⊕", "€", "£", "¥", "₿", "…", "‰", "†", "‡", "•"},
	// Latin with diacritics, Greek, Cyrillic, Hebrew, Arabic, Devanagari.
	{"é", "ñ", "ü", "ø", "å", "ç", "ß", "Ł", "α", "β", "γ", "δ", "λ", "π", "Σ", "Ω", "Ж", "Щ", "ы", "я", "א", "ש", "ب", "ع", "क", "ष", "ि", "e\u0301", "a\u0308"},
	// CJK, Hangul, kana, fullwidth forms (two columns).
	{"日", "本", "語", "漢", "字", "中", "文", "한", "국", "어", "あ", "カ", "ナ", "Ｗ", "Ａ", "（", "）"},
	// Emoji: wide, with VS16, skin tones, ZWJ sequences, flags.
	{"😀", "🚀", "🔥", "✨", "🎉", "👍", "❤\ufe0f", "☀\ufe0f", "✔\ufe0f", "👍🏽", "👩\u200d💻", "👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈", "🇫🇷", "🇯🇵", "🧑🏿\u200d🚀"},
}

// genUnicode writes lines of 20 to 120 symbols, mostly narrow ones, some
// wide, some emoji, separated by spaces now and then (vtebench unicode).
func genUnicode(w *bufio.Writer, cols, rows int, min int64) int64 {
	r := rand.New(rand.NewSource(genSeed))
	var size int64
	for size < min {
		count := 20 + r.Intn(101)
		for i := 0; i < count; i++ {
			var g []string
			switch k := r.Intn(20); {
			case k < 6:
				g = unicodeSymbols[0]
			case k < 11:
				g = unicodeSymbols[1]
			case k < 15:
				g = unicodeSymbols[2]
			case k < 18:
				g = unicodeSymbols[3]
			default:
				g = unicodeSymbols[4]
			}
			n, _ := w.WriteString(g[r.Intn(len(g))])
			size += int64(n)
			if r.Intn(8) == 0 {
				w.WriteByte(' ')
				size++
			}
		}
		w.WriteByte('\n')
		size++
	}
	return size
}

// genCursorMotion writes one letter per cursor position, spiralling from
// the screen's edge to its middle, once per letter (vtebench
// cursor_motion).
func genCursorMotion(w *bufio.Writer, cols, rows int, min int64) int64 {
	var size int64
	put := func(line, col int, ch byte) {
		n, _ := fmt.Fprintf(w, "\x1b[%d;%dH%c", line, col, ch)
		size += int64(n)
	}
	for letter := 0; size < min; letter++ {
		ch := byte('A' + letter%26)
		c0, c1, l0, l1 := 1, cols, 1, rows
		for c0 <= c1 && l0 <= l1 {
			col, line := c0, l0
			for ; col < c1; col++ {
				put(line, col, ch)
			}
			for ; line < l1; line++ {
				put(line, col, ch)
			}
			for ; col > c0; col-- {
				put(line, col, ch)
			}
			for ; line > l0; line-- {
				put(line, col, ch)
			}
			c0, c1, l0, l1 = c0+1, c1-1, l0+1, l1-1
		}
	}
	return size
}

// genMediumCells writes an editor session: a file of syntax-coloured lines
// shown with line numbers, scrolled one line at a time through a region
// over all rows but the status line (forward with a line feed at the
// region's bottom, backward with reverse index at its top), the status
// line and cursor redrawn after each step and the whole screen redrawn
// every 32 steps. With sync, each step is one synchronized-output frame
// (mode 2026), as an editor that uses it draws.
func genMediumCells(sync bool) func(w *bufio.Writer, cols, rows int, min int64) int64 {
	return func(w *bufio.Writer, cols, rows int, min int64) int64 {
		g := newLineGen()
		file := make([][]byte, 500)
		for i := range file {
			l := g.next()
			// Keep the lines within the text area (cols minus the gutter):
			// the generator's lines are up to 120 columns.
			file[i] = append([]byte(nil), fitColumns(l, cols-5)...)
		}
		var size int64
		out := func(format string, a ...any) {
			n, _ := fmt.Fprintf(w, format, a...)
			size += int64(n)
		}
		text := rows - 1
		drawLine := func(row, i int) {
			out("\x1b[%d;1H\x1b[38;5;130m%4d \x1b[m%s\x1b[m\x1b[K", row, i+1, file[i%len(file)])
		}
		status := func(top, step int) {
			out("\x1b[%d;1H\x1b[7m NORMAL \x1b[m\x1b[1m README.md \x1b[m\x1b[K\x1b[%d;%dH\x1b[38;5;244mmarkdown  %d/%d  %d%%\x1b[m",
				rows, rows, max(1, cols-30), top+1, len(file), (top*100)/len(file))
			out("\x1b[%d;%dH", 1+step%text, 6+step%max(1, cols-6))
		}
		top, dir := 0, 1
		out("\x1b[?1049h\x1b[?25l")
		for step := 0; size < min; step++ {
			if sync {
				out("\x1b[?2026h")
			}
			out("\x1b[?25l")
			if step%32 == 0 {
				out("\x1b[r\x1b[H\x1b[2J")
				for row := 1; row <= text; row++ {
					drawLine(row, top+row-1)
				}
			} else {
				out("\x1b[1;%dr", text)
				if dir > 0 {
					top++
					out("\x1b[%d;1H\n", text)
					drawLine(text, top+text-1)
				} else {
					top--
					out("\x1b[1;1H\x1bM")
					drawLine(1, top)
				}
				out("\x1b[r")
			}
			status(top, step)
			out("\x1b[?25h")
			if sync {
				out("\x1b[?2026l")
			}
			if top >= 4*len(file) {
				dir = -1
			} else if top <= 0 {
				dir = 1
			}
		}
		return size
	}
}

// fitColumns cuts a generated line (ASCII, CJK, SGR) to at most n columns,
// never inside an escape sequence or a character.
func fitColumns(l []byte, n int) []byte {
	w := 0
	for i := 0; i < len(l); {
		switch c := l[i]; {
		case c == 0x1b:
			j := i + 2
			for j < len(l) && (l[j] < 0x40 || l[j] > 0x7e) {
				j++
			}
			i = j + 1
		case c < 0x80:
			if w+1 > n {
				return l[:i]
			}
			w++
			i++
		default:
			if w+2 > n {
				return l[:i]
			}
			w += 2
			i += 3 // CJK runes of the generator are three bytes
		}
	}
	return l
}

// TestStreams checks every stream at both sizes: deterministic, valid
// UTF-8, at least the size asked for, and ending with its marker as the
// last line a screen of that size shows.
func TestStreams(t *testing.T) {
	for _, s := range vtStreams {
		for _, sz := range streamSizes {
			var a, b bytes.Buffer
			size, marker, err := writeStream(&a, s, sz[0], sz[1], 256<<10)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := writeStream(&b, s, sz[0], sz[1], 256<<10); err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%s %dx%d", s.name, sz[0], sz[1])
			switch {
			case !bytes.Equal(a.Bytes(), b.Bytes()):
				t.Errorf("%s: two runs generated different bytes", name)
			case int64(a.Len()) != size || size < 256<<10:
				t.Errorf("%s: size %d, buffer %d, want >= %d", name, size, a.Len(), 256<<10)
			case !utf8.Valid(a.Bytes()):
				t.Errorf("%s: invalid UTF-8", name)
			}
			scr := screen.New(screen.Options{Cols: sz[0], Rows: sz[1], Scrollback: 1000})
			scr.Write(ptyBytes(a.Bytes()))
			if got := scr.LastLines(1); len(got) != 1 || got[0] != marker {
				t.Errorf("%s: last line %q, want %q", name, got, marker)
			}
		}
	}
}
