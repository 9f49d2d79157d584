package tenancy

import (
	"slices"
	"testing"
)

func TestParseStrings(t *testing.T) {
	for range 2 { // the second time from the cache
		var got []string
		if err := parseStrings([]byte(`["contacts:read","leads:write"]`), &got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []string{"contacts:read", "leads:write"}) {
			t.Fatalf("got %q", got)
		}
		if cap(got) != len(got) {
			t.Fatalf("cap %d: an append would write into the shared array", cap(got))
		}
	}
	var got []string
	if err := parseStrings([]byte(`["a",`), &got); err == nil {
		t.Fatal("malformed JSON parsed")
	}
	if err := parseStrings([]byte(`{"a":1}`), &got); err == nil {
		t.Fatal("an object parsed as a list")
	}
}
