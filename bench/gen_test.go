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
	"sync"
	"testing"
	"unicode/utf8"
)

// genSeed makes every generated file the same from run to run.
const genSeed = 20260901

// Words of the plain parts of generated lines: source code, logs, paths.
var genWords = []string{
	"func", "return", "err", "nil", "if", "for", "range", "struct", "package",
	"import", "main.go:42:", "INFO", "WARN", "ERROR", "request", "handled",
	"in", "12.3ms", "status=200", "GET", "/api/v1/users", "user_id=7421",
	"lorem", "ipsum", "dolor", "sit", "amet", "=>", "{", "}", "(x,", "y)",
	"--verbose", "build", "ok", "FAIL", "github.com/phantom-dev/phantom",
	"0x7ffd5e8a", "[1/200]", "Compiling", "tokio", "v1.38.0", "warning:",
	"unused", "variable", "`count`", "#[warn(unused)]", "->", "::", "self",
}

// CJK words: every rune is two columns wide.
var genCJK = []string{
	"日本語", "漢字", "端末", "文字化け", "中文", "字符", "表示", "終了",
	"한국어", "화면", "가나다", "エラー", "ファイル", "完了", "测试", "输出",
}

// lineGen produces the lines of a generated file.
type lineGen struct {
	rng *rand.Rand
	buf []byte
}

func newLineGen() *lineGen { return &lineGen{rng: rand.New(rand.NewSource(genSeed))} }

// next returns one line (without its newline) of 20 to 120 columns. About
// half the lines carry SGR colours: 16-colour, 256-colour or truecolor; one
// in ten mixes in CJK.
func (g *lineGen) next() []byte {
	r := g.rng
	target := 20 + r.Intn(101)
	kind := r.Intn(20)
	const (
		plain = iota
		sgr16
		sgr256
		sgrTrue
	)
	style, cjk := plain, false
	switch {
	case kind < 9:
	case kind < 13:
		style = sgr16
	case kind < 16:
		style = sgr256
	case kind < 18:
		style = sgrTrue
	default:
		cjk = true
		if kind == 19 {
			style = sgr16
		}
	}
	b := g.buf[:0]
	width := 0
	for width < target {
		if width > 0 {
			b = append(b, ' ')
			width++
			if width == target {
				break
			}
		}
		word, ww := genWords[r.Intn(len(genWords))], 0
		if cjk && r.Intn(2) == 0 {
			word = genCJK[r.Intn(len(genCJK))]
			ww = 2 * utf8.RuneCountInString(word)
		} else {
			ww = len(word)
		}
		if width+ww > target {
			// Fill the rest with ASCII so every line is exactly target wide.
			word = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghij"[:target-width]
			ww = len(word)
		}
		coloured := style != plain && r.Intn(3) != 0
		if coloured {
			switch style {
			case sgr16:
				switch r.Intn(3) {
				case 0:
					b = fmt.Appendf(b, "\x1b[%dm", 31+r.Intn(7))
				case 1:
					b = fmt.Appendf(b, "\x1b[1;%dm", 91+r.Intn(7))
				default:
					b = fmt.Appendf(b, "\x1b[%d;%dm", 30+r.Intn(8), 40+r.Intn(8))
				}
			case sgr256:
				if r.Intn(4) == 0 {
					b = fmt.Appendf(b, "\x1b[38;5;%d;48;5;%dm", r.Intn(256), r.Intn(256))
				} else {
					b = fmt.Appendf(b, "\x1b[38;5;%dm", r.Intn(256))
				}
			case sgrTrue:
				b = fmt.Appendf(b, "\x1b[38;2;%d;%d;%dm", r.Intn(256), r.Intn(256), r.Intn(256))
			}
		}
		b = append(b, word...)
		if coloured {
			if r.Intn(2) == 0 {
				b = append(b, "\x1b[0m"...)
			} else {
				b = append(b, "\x1b[m"...)
			}
		}
		width += ww
	}
	g.buf = b
	return b
}

// endMarker is the last line of a generated file: once a terminal shows it,
// the whole file has been rendered.
func endMarker(name string, lines int) string {
	return fmt.Sprintf("PHANTOM-BENCH-END %s %d lines", name, lines)
}

// generate writes generated lines to w until it holds at least maxBytes
// bytes (when maxBytes > 0) or maxLines lines (when maxLines > 0), then the
// end marker. It returns the bytes written and the marker.
func generate(w io.Writer, name string, maxBytes int64, maxLines int) (int64, string, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	g := newLineGen()
	var size int64
	lines := 0
	for (maxBytes <= 0 || size < maxBytes) && (maxLines <= 0 || lines < maxLines) {
		l := g.next()
		bw.Write(l)
		bw.WriteByte('\n')
		size += int64(len(l)) + 1
		lines++
	}
	marker := endMarker(name, lines)
	n, _ := bw.WriteString(marker + "\n")
	size += int64(n)
	return size, marker, bw.Flush()
}

// genFile is a generated file on disk.
type genFile struct {
	path   string
	size   int64
	marker string // the file's last line
}

var (
	genMu    sync.Mutex
	genDir   string
	genFiles = map[string]*genFile{}
)

// generatedFile returns the named file, generating it on first use in this
// process. The files live in one temporary directory that TestMain removes.
func generatedFile(tb testing.TB, name string, maxBytes int64, maxLines int) *genFile {
	tb.Helper()
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
	size, marker, err := generate(out, name, maxBytes, maxLines)
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

// benchMB is the ingest file's size: PHANTOM_BENCH_MB, default 200.
func benchMB(tb testing.TB) int64 {
	mb := int64(200)
	if v := os.Getenv("PHANTOM_BENCH_MB"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			tb.Fatalf("PHANTOM_BENCH_MB=%q: want a positive number of megabytes", v)
		}
		mb = n
	}
	return mb
}

// ingestFile is the file the ingest benchmarks cat.
func ingestFile(tb testing.TB) *genFile {
	mb := benchMB(tb)
	return generatedFile(tb, fmt.Sprintf("ingest-%dMB.txt", mb), mb<<20, 0)
}

// historyLines is the scrollback every history benchmark fills.
const historyLines = 100_000

// historyFile is a file of historyLines generated lines (more rows than
// that at 80 columns, since lines up to 120 columns wrap).
func historyFile(tb testing.TB) *genFile {
	return generatedFile(tb, "history-100k.txt", 0, historyLines)
}

// ptyBytes is data as a PTY with the default ONLCR setting delivers it:
// every LF becomes CR LF.
func ptyBytes(data []byte) []byte {
	return bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
}

// TestMain removes the generated files and the phantom binary built for
// the run.
func TestMain(m *testing.M) {
	code := m.Run()
	genMu.Lock()
	if genDir != "" {
		os.RemoveAll(genDir)
	}
	genMu.Unlock()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}
