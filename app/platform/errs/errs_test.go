package errs

import (
	"slices"
	"testing"
)

func TestInvalid_CheckUUID(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		in   *string
		want []FieldError
	}{
		{name: "absent", in: nil},
		{name: "a UUID", in: str("0193f3b4-6c1e-7d2a-9f1b-3c5d7e9f1a2b")},
		{name: "not a UUID", in: str("42"), want: []FieldError{{Field: "ownerId", Code: "invalid_uuid", Detail: "must be a UUID"}}},
		{name: "empty", in: str(""), want: []FieldError{{Field: "ownerId", Code: "invalid_uuid", Detail: "must be a UUID"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v Invalid
			v.CheckUUID("ownerId", tc.in)
			if !slices.Equal(v.Errors, tc.want) {
				t.Errorf("got %v, want %v", v.Errors, tc.want)
			}
		})
	}
}
