package screen

import (
	"os"
	"strconv"
	"testing"
)

// TestInstrLoop feeds SCREEN_INSTR_KIND output SCREEN_INSTR_N times; run it
// under valgrind --tool=cachegrind with two values of N to count
// instructions per byte (a load-independent cost measure).
func TestInstrLoop(t *testing.T) {
	kind := os.Getenv("SCREEN_INSTR_KIND")
	if kind == "" {
		t.Skip("set SCREEN_INSTR_KIND and SCREEN_INSTR_N")
	}
	n, _ := strconv.Atoi(os.Getenv("SCREEN_INSTR_N"))
	data := benchData(kind, 1<<20)
	s := New(Options{Cols: 80, Rows: 24})
	for i := 0; i < n; i++ {
		s.Write(data)
	}
}
