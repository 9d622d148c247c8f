// Package calc is the fixture project of the run-and-wait figures
// (cmd/phantom/run_figures_test.go): a small library with a test suite
// that has two failing tests.
package calc

// Add returns a+b.
func Add(a, b int) int { return a + b }

// Mul returns a*b.
func Mul(a, b int) int { return a * b }

// Div returns a/b, and 0 for b == 0.
func Div(a, b int) int {
	if b == 0 {
		return 0
	}
	return a / b
}

// Abs returns |a|; it is wrong for negative numbers on purpose.
func Abs(a int) int { return a }
