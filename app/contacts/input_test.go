package contacts

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
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
			OwnerID: s("01a200b8-846c-703b-ba33-a1d1a34c3165")}, ""},
		{"bad values", &Fields{Email: s("x"), Phones: []PhoneInput{{Number: "abc", Type: s("pager")}}, OwnerID: s("1")},
			"o.email:invalid_email o.phones.0.number:invalid_phone o.phones.0.type:invalid_enum o.ownerId:invalid_uuid"},
		{"two primaries", &Fields{Phones: []PhoneInput{{Number: "0170 1234567", IsPrimary: true}, {Number: "030 123456", IsPrimary: true}}},
			"o.phones:several_primary"},
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

func TestCheckPatch(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, typ string
		patch     map[string]any
		want      string
	}{
		{"nil", "private", nil, ""},
		{"valid, null clears", "private", map[string]any{"email": nil, "tags": []any{"vip"}, "labels": []any{"red"},
			"bank": map[string]any{"iban": "DE89 3704 0044 0532 0130 00"}, "personal": map[string]any{"dateOfBirth": "1980-02-29"},
			"address": map[string]any{"city": nil}, "customFields": map[string]any{"hobby": "Segeln"}, "writeMode": "fill_empty_only"}, ""},
		{"names need not be given", "business", map[string]any{"business": map[string]any{"legalForm": "GmbH"}}, ""},
		{"bad values, by path", "private", map[string]any{"bank": map[string]any{"iban": "DE00370400440532013000", "x": 1},
			"personal": map[string]any{"dateOfBirth": "2030-01-01"}, "labels": []any{"mauve"}, "email": "x",
			"phones": []any{map[string]any{"number": "0170 1234567"}}, "writeMode": "always"},
			"o.email:invalid_email o.phones:not_patchable o.labels.0:invalid_enum o.writeMode:invalid_enum " +
				"o.bank.iban:invalid_iban o.bank.x:unknown_field o.personal.dateOfBirth:date_in_future"},
		{"group of the other type", "business", map[string]any{"health": map[string]any{"smoker": true}}, "o.health:group_not_applicable"},
		{"server-owned and type", "private", map[string]any{"id": "x", "type": "business"}, "o.id:read_only_field o.type:immutable"},
		{"unknown field", "private", map[string]any{"birthday": "1990-01-01"}, "o.birthday:unknown_field"},
		{"wrong JSON type", "private", map[string]any{"tags": "vip"}, "o.tags:invalid_type"},
		{"type unknown: values still checked, groups not", "", map[string]any{"email": "x", "health": map[string]any{"x": 1}},
			"o.email:invalid_email"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v errs.Invalid
			CheckPatch(&v, "o.", tc.typ, tc.patch, now)
			var got []string
			for _, e := range v.Errors {
				got = append(got, e.Field+":"+e.Code)
			}
			want := strings.Fields(tc.want)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
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
