package paging

import "testing"

func TestIf(t *testing.T) {
	double := func(n int) int { return 2 * n }
	if got := If(nil, double); got != nil {
		t.Errorf("If(nil) = %v, want none", got)
	}
	n := 21
	if got := If(&n, double); len(got) != 1 || got[0] != 42 {
		t.Errorf("If(&21) = %v, want [42]", got)
	}
}
