package calc

import (
	"fmt"
	"testing"
	"time"
)

func TestAdd(t *testing.T) {
	for i := range 20 {
		t.Run(fmt.Sprint("case", i), func(t *testing.T) {
			if Add(i, i) != 2*i {
				t.Fatal("wrong")
			}
		})
	}
}

func TestMul(t *testing.T) {
	for i := range 20 {
		t.Run(fmt.Sprint("case", i), func(t *testing.T) {
			if Mul(i, 3) != 3*i {
				t.Fatal("wrong")
			}
		})
	}
}

func TestDiv(t *testing.T) {
	if Div(1, 0) != 0 {
		t.Error("Div(1, 0) should be 0")
	}
	if got := Div(7, 2); got != 4 {
		t.Errorf("Div(7, 2) = %d, want 4 (rounded)", got)
	}
}

func TestAbs(t *testing.T) {
	for _, c := range []struct{ in, want int }{{1, 1}, {0, 0}, {-3, 3}} {
		if got := Abs(c.in); got != c.want {
			t.Errorf("Abs(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}

// TestSlow stands for the slow part of a real suite.
func TestSlow(t *testing.T) {
	time.Sleep(5 * time.Second)
}
