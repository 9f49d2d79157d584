package ptr

import "testing"

func TestPtr(t *testing.T) {
	s := To("a")
	if Deref(s) != "a" || Deref[string](nil) != "" || Or(nil, "open") != "open" || Or(s, "open") != "a" {
		t.Error("To/Deref/Or")
	}
	if Deref[int64](nil) != 0 {
		t.Error("Deref int64")
	}
}
