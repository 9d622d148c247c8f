package screen

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// ptyTerm runs a command under a real PTY and feeds its output to a Screen,
// answering terminal queries the way an attached terminal would.
type ptyTerm struct {
	t    *testing.T
	mu   sync.Mutex
	s    *Screen
	f    *os.File
	cmd  *exec.Cmd
	done chan struct{}
	rep  chan []byte
}

func startPTY(t *testing.T, cols, rows int, name string, args ...string) *ptyTerm {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed", name)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "LESS=", "LS_COLORS=")
	cmd.Dir = t.TempDir()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		t.Fatal(err)
	}
	p := &ptyTerm{t: t, f: f, cmd: cmd, done: make(chan struct{}), rep: make(chan []byte, 64)}
	p.s = New(Options{Cols: cols, Rows: rows, Reply: func(b []byte) {
		select { // Reply must not block: hand off to the writer goroutine
		case p.rep <- b:
		default:
		}
	}})
	go func() {
		for b := range p.rep {
			f.Write(b)
		}
	}()
	go func() {
		defer close(p.done)
		buf := make([]byte, 32<<10)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				p.mu.Lock()
				p.s.Write(buf[:n])
				p.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
		<-p.done
		close(p.rep)
	})
	return p
}

func (p *ptyTerm) send(s string) {
	if _, err := io.WriteString(p.f, s); err != nil {
		p.t.Fatal(err)
	}
}

func (p *ptyTerm) screenText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, rows := p.s.Size()
	var lines []string
	for y := 0; y < rows; y++ {
		lines = append(lines, rowText(p.s, y))
	}
	return strings.Join(lines, "\n")
}

// waitFor polls until cond holds on the screen or the deadline passes.
func (p *ptyTerm) waitFor(what string, cond func(s *Screen) bool) {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		ok := cond(p.s)
		p.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Fatalf("timed out waiting for %s; screen:\n%s", what, p.screenText())
}

func (p *ptyTerm) wait() {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.t.Fatalf("program did not exit; screen:\n%s", p.screenText())
	}
	p.cmd.Wait()
}

func writeLines(t *testing.T, n int) string {
	path := filepath.Join(t.TempDir(), "file.txt")
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d of the file\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPTYVim(t *testing.T) {
	vim := "vim"
	if _, err := exec.LookPath(vim); err != nil {
		vim = "vi"
	}
	path := writeLines(t, 5)
	p := startPTY(t, 80, 24, "sh", "-c", "printf 'before\\n'; "+vim+" -u NONE -i NONE -N "+path+"; printf 'after\\n'")
	p.waitFor("vim showing the file", func(s *Screen) bool {
		return s.AltScreen() && rowText(s, 0) == "line 1 of the file" && rowText(s, 4) == "line 5 of the file" &&
			strings.HasPrefix(rowText(s, 5), "~") && strings.HasPrefix(rowText(s, 22), "~")
	})
	p.send(":q\r")
	p.wait()
	if p.s.AltScreen() {
		t.Fatal("still on the alt screen after :q")
	}
	got := strings.Join(p.s.LastLines(10), "\n")
	if !strings.Contains(got, "before") || !strings.Contains(got, "after") || strings.Contains(got, "line 1 of") {
		t.Errorf("main screen after vim:\n%s", got)
	}
}

func TestPTYLess(t *testing.T) {
	path := writeLines(t, 100)
	p := startPTY(t, 80, 24, "less", path)
	p.waitFor("less first page", func(s *Screen) bool {
		return rowText(s, 0) == "line 1 of the file" && rowText(s, 22) == "line 23 of the file"
	})
	p.send("G")
	p.waitFor("less last page", func(s *Screen) bool {
		return rowText(s, 22) == "line 100 of the file"
	})
	p.send("q")
	p.wait()
	if p.s.AltScreen() {
		t.Error("still on the alt screen after q")
	}
}

func TestPTYPrintfAndLs(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "adir"), 0o755)
	os.WriteFile(filepath.Join(dir, "bfile"), nil, 0o644)
	p := startPTY(t, 40, 10, "sh", "-c",
		`printf '\033[1;31mred\033[0m 日本語 e\314\201 %s\n' x; printf '%050d\n' 0; ls --color=always -1 `+dir)
	p.wait()
	lines := p.s.LastLines(10)
	want := []string{"red 日本語 e\u0301 x", strings.Repeat("0", 50), "adir", "bfile"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("lines %q, want %q", lines, want)
	}
	if st := p.s.Row(0)[0].Style; st.Fg != IndexedColor(1) || st.Attrs != AttrBold {
		t.Errorf("red style %+v", st)
	}
	if !p.s.RowWrapped(1) {
		t.Error("long line not marked wrapped")
	}
	if st := p.s.Row(3)[0].Style; st.Fg != IndexedColor(4) || st.Attrs&AttrBold == 0 {
		t.Errorf("directory style %+v", st)
	}
}
