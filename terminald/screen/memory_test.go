package screen

import (
	"runtime"
	"testing"
)

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func TestMemoryIdle(t *testing.T) {
	const n = 50
	before := heapInUse()
	screens := make([]*Screen, n)
	for i := range screens {
		screens[i] = New(Options{Cols: 80, Rows: 24})
	}
	after := heapInUse()
	perScreen := int(after-before) / n
	est := screens[0].MemoryUsage()
	t.Logf("idle 80x24: MemoryUsage=%d bytes, measured heap %d bytes/screen", est, perScreen)
	if est > 64<<10 || perScreen > 64<<10 {
		t.Errorf("idle screen holds %d (estimate) / %d (heap) bytes, budget 65536", est, perScreen)
	}
	if perScreen > est*5/4 {
		t.Errorf("MemoryUsage %d underestimates the heap (%d)", est, perScreen)
	}
	runtime.KeepAlive(screens)
}

func TestMemoryScrollback(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 100k lines")
	}
	data := benchData("sgr", 1<<20)
	before := heapInUse()
	s := New(Options{Cols: 80, Rows: 24})
	for s.ScrollbackLen() < DefaultScrollback {
		s.Write(data)
	}
	after := heapInUse()
	lines := s.ScrollbackLen()
	est := s.MemoryUsage()
	measured := int(after - before)
	t.Logf("%d scrollback lines: MemoryUsage=%d (%.1f B/line), measured heap %d (%.1f B/line)",
		lines, est, float64(est)/float64(lines), measured, float64(measured)/float64(lines))
	if est/lines > 256 || measured/lines > 256 {
		t.Errorf("scrollback costs %d (estimate) / %d (heap) bytes per line, budget 256", est/lines, measured/lines)
	}
	if measured > est*5/4 {
		t.Errorf("MemoryUsage %d underestimates the heap (%d)", est, measured)
	}
	// Steady state: more output does not grow memory.
	for i := 0; i < 10; i++ {
		s.Write(data)
	}
	if s.ScrollbackLen() != DefaultScrollback {
		t.Errorf("scrollback len %d", s.ScrollbackLen())
	}
	if est2 := s.MemoryUsage(); est2 > est*11/10 {
		t.Errorf("memory grew from %d to %d in steady state", est, est2)
	}
	runtime.KeepAlive(s)
}
