package contacts

import (
	"errors"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/errs"
)

func s(v string) *string { return &v }

func TestFields_Check(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    *Fields
		want string
	}{
		{"nil", nil, ""},
		{"valid", &Fields{FirstName: s("Anna"), Email: s("a@example.com"), Phones: []PhoneInput{{Number: "0170 1234567", Type: s("mobile")}},
			OwnerID: s("01a200b8-846c-703b-ba33-a1d1a34c3165"), Business: &BusinessInput{CompanyName: s("A GmbH")}}, ""},
		{"bad values", &Fields{Email: s("x"), Phones: []PhoneInput{{Number: "abc", Type: s("pager")}}, OwnerID: s("1")},
			"o.email:invalid_email o.phones.0.number:invalid_phone o.phones.0.type:invalid_enum o.ownerId:invalid_uuid"},
		{"two primaries", &Fields{Phones: []PhoneInput{{Number: "0170 1234567", IsPrimary: true}, {Number: "030 123456", IsPrimary: true}}},
			"o.phones:several_primary"},
		{"empty company name", &Fields{Business: &BusinessInput{CompanyName: s(" ")}}, "o.business.companyName:required"},
		{"too long", &Fields{LastName: s(strings.Repeat("x", 101))}, "o.lastName:too_long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v errs.Invalid
			tc.f.Check(&v, "o.")
			var got []string
			var inv *errs.Invalid
			if err := v.Err(); errors.As(err, &inv) {
				for _, e := range inv.Errors {
					got = append(got, e.Field+":"+e.Code)
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("got %v, want %q", got, tc.want)
			}
		})
	}
}

func TestPhoneType(t *testing.T) {
	for in, want := range map[string]string{"0170 1234567": PhoneMobile, "030 12345678": PhoneLandline, "abc": PhoneOther} {
		if got := PhoneType(in); got != want {
			t.Errorf("PhoneType(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidEmail(t *testing.T) {
	for in, want := range map[string]bool{"a@example.com": true, " a@example.com ": true, "Anna <a@example.com>": false, "a": false, "": false} {
		if got := ValidEmail(in); got != want {
			t.Errorf("ValidEmail(%q) = %v, want %v", in, got, want)
		}
	}
}
