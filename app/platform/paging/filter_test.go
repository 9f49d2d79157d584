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

func TestIn(t *testing.T) {
	type color string
	join := func(cs ...color) string {
		s := ""
		for _, c := range cs {
			s += string(c) + ","
		}
		return s
	}
	if got := In(nil, join); got != nil {
		t.Errorf("In(none) = %v, want none", got)
	}
	if got := In([]string{"red", "blue"}, join); len(got) != 1 || got[0] != "red,blue," {
		t.Errorf("In(red, blue) = %q, want [red,blue,]", got)
	}
}

func TestEnum(t *testing.T) {
	type color string
	is := func(c color) string { return "is " + string(c) }
	if got := Enum(nil, is); got != nil {
		t.Errorf("Enum(nil) = %v, want none", got)
	}
	red := "red"
	if got := Enum(&red, is); len(got) != 1 || got[0] != "is red" {
		t.Errorf("Enum(red) = %q, want [is red]", got)
	}
}
