package check

import (
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

func TestLen(t *testing.T) {
	long, nul, ok := strings.Repeat("ä", 4), "a\x00b", "äää"
	var v errs.Invalid
	Len(&v, "long", &long, 3)
	Len(&v, "nul", &nul, 10)
	Len(&v, "ok", &ok, 3)
	Len(&v, "absent", nil, 0)
	var got []string
	for _, e := range v.Errors {
		got = append(got, e.Field+":"+e.Code)
	}
	if want := "long:too_long nul:invalid_character"; strings.Join(got, " ") != want {
		t.Errorf("errors %v, want %s", got, want)
	}
}

func TestValidEmail(t *testing.T) {
	for in, want := range map[string]bool{
		"anna@example.de": true, " anna@example.de ": true, "Anna <anna@example.de>": false,
		"anna": false, "": false, "a@b@c": false, "a@example.com": true, " a@example.com ": true,
		"Anna <a@example.com>": false,
	} {
		if got := ValidEmail(in); got != want {
			t.Errorf("ValidEmail(%q) = %v, want %v", in, got, want)
		}
	}
}
