package screen

import (
	"bytes"
	"fmt"
	"math/rand"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// benchData builds ~size bytes of terminal output of the given kind.
func benchData(kind string, size int) []byte {
	rng := rand.New(rand.NewSource(1))
	words := []string{"lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit",
		"sed", "do", "eiusmod", "tempor", "incididunt", "ut", "labore", "et", "dolore", "magna"}
	cjk := []rune("日本語の文章を表示する端末エミュレータ漢字仮名交じり文中文字符")
	var b bytes.Buffer
	for b.Len() < size {
		switch kind {
		case "ascii":
			n := 40 + rng.Intn(40)
			l := 0
			for l < n {
				w := words[rng.Intn(len(words))]
				b.WriteString(w)
				b.WriteByte(' ')
				l += len(w) + 1
			}
			b.WriteString("\r\n")
		case "sgr":
			// ls --color / grep --color / compiler-output like lines.
			n := 40 + rng.Intn(40)
			l := 0
			for l < n {
				w := words[rng.Intn(len(words))]
				switch rng.Intn(4) {
				case 0:
					fmt.Fprintf(&b, "\x1b[01;%dm%s\x1b[0m ", 31+rng.Intn(6), w)
				case 1:
					fmt.Fprintf(&b, "\x1b[38;5;%dm%s\x1b[m ", rng.Intn(256), w)
				default:
					b.WriteString(w)
					b.WriteByte(' ')
				}
				l += len(w) + 1
			}
			b.WriteString("\r\n")
		case "mixed":
			// Mostly plain lines, some with coloured words (logs, build
			// output, diffs).
			n := 40 + rng.Intn(40)
			l := 0
			colour := rng.Intn(3) == 0
			if colour {
				fmt.Fprintf(&b, "\x1b[%dm%s\x1b[0m ", 31+rng.Intn(6), words[rng.Intn(len(words))])
			}
			for l < n {
				w := words[rng.Intn(len(words))]
				if colour && rng.Intn(5) == 0 {
					fmt.Fprintf(&b, "\x1b[1;%dm%s\x1b[0m ", 31+rng.Intn(6), w)
				} else {
					b.WriteString(w)
					b.WriteByte(' ')
				}
				l += len(w) + 1
			}
			b.WriteString("\r\n")
		case "cjk":
			n := 20 + rng.Intn(18)
			for i := 0; i < n; i++ {
				b.WriteRune(cjk[rng.Intn(len(cjk))])
			}
			b.WriteString("\r\n")
		}
	}
	return b.Bytes()
}

func benchWrite(b *testing.B, kind string, sb int) {
	data := benchData(kind, 1<<20)
	s := New(Options{Cols: 80, Rows: 24, Scrollback: sb})
	if sb > 0 {
		// Fill the scrollback so old lines get dropped in steady state.
		for s.ScrollbackLen() < sb {
			s.Write(data)
		}
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := threadCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Write(data)
	}
	b.StopTimer()
	// Throughput per CPU-second of this thread: stable when other
	// processes compete for the cores.
	if d := threadCPU() - t0; d > 0 {
		b.ReportMetric(float64(len(data))*float64(b.N)/1e6/d.Seconds(), "cpuMB/s")
	}
}

// threadCPU returns the CPU time used by the calling OS thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkWriteASCII(b *testing.B)               { benchWrite(b, "ascii", 0) }
func BenchmarkWriteSGR(b *testing.B)                 { benchWrite(b, "sgr", 0) }
func BenchmarkWriteMixed(b *testing.B)               { benchWrite(b, "mixed", 0) }
func BenchmarkWriteMixedFullScrollback(b *testing.B) { benchWrite(b, "mixed", 100000) }
func BenchmarkWriteCJK(b *testing.B)                 { benchWrite(b, "cjk", 0) }
func BenchmarkWriteSGRFullScrollback(b *testing.B)   { benchWrite(b, "sgr", 100000) }
func BenchmarkWriteASCIIFullScrollback(b *testing.B) {
	benchWrite(b, "ascii", 100000)
}

func BenchmarkLastLines1000(b *testing.B) {
	data := benchData("sgr", 1<<20)
	s := New(Options{Cols: 80, Rows: 24})
	for s.ScrollbackLen() < 100000 {
		s.Write(data)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(s.LastLines(1000)) != 1000 {
			b.Fatal("short")
		}
	}
}
