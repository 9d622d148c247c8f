package screen

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/creack/pty"
)

// BenchmarkPTYCat measures the product scenario: `cat` of a file of mixed
// plain and coloured lines under a real PTY, read by a plain reader that
// discards the output versus a reader that feeds a Screen. Compare the two
// ns/op figures.
func BenchmarkPTYCat(b *testing.B) {
	if _, err := exec.LookPath("cat"); err != nil {
		b.Skip("no cat")
	}
	path := filepath.Join(b.TempDir(), "out.txt")
	chunk := benchData("mixed", 1<<20)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	const size = 50 << 20
	for n := 0; n < size; n += len(chunk) {
		f.Write(chunk)
	}
	f.Close()
	for _, mode := range []string{"discard", "screen"} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(size)
			for i := 0; i < b.N; i++ {
				cmd := exec.Command("cat", path)
				p, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
				if err != nil {
					b.Fatal(err)
				}
				var s *Screen
				if mode == "screen" {
					s = New(Options{Cols: 80, Rows: 24})
				}
				buf := make([]byte, 64<<10)
				for {
					n, err := p.Read(buf)
					if s != nil && n > 0 {
						s.Write(buf[:n])
					}
					if err != nil {
						break
					}
				}
				cmd.Wait()
				p.Close()
			}
		})
	}
}
