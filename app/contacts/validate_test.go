package contacts

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

func TestCheckGroups(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, typ string
		in        map[string]map[string]any
		want      string
	}{
		{"valid private", "private", map[string]map[string]any{"address": {"zipCode": "10115", "city": "Berlin"},
			"personal": {"salutation": "Frau", "dateOfBirth": "1985-04-12"}, "bank": {"iban": "DE89370400440532013000"}}, ""},
		{"bad values", "private", map[string]map[string]any{"personal": {"dateOfBirth": "2027-01-01", "maritalStatus": "married"},
			"bank": {"iban": "DE00370400440532013000", "bic": "X"}, "socialInsuranceTax": {"taxId": "12345678901", "socialInsuranceNumber": "1"}},
			"bank.bic:invalid_bic bank.iban:invalid_iban personal.dateOfBirth:date_in_future personal.maritalStatus:invalid_enum socialInsuranceTax.socialInsuranceNumber:invalid_social_insurance_number socialInsuranceTax.taxId:invalid_tax_id"},
		{"health on a business", "business", map[string]map[string]any{"health": {"smoker": true}}, "health:group_not_applicable"},
		{"business group on a private", "private", map[string]map[string]any{"business": {"legalForm": "GmbH"}}, "business:group_not_applicable"},
		{"unknown key", "private", map[string]map[string]any{"address": {"planet": "Mars"}}, "address.planet:unknown_field"},
		{"german zip", "private", map[string]map[string]any{"address": {"zipCode": "1011"}}, "address.zipCode:invalid_zip_code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v errs.Invalid
			CheckGroups(&v, tc.typ, tc.in, now)
			var got []string
			var inv *errs.Invalid
			if err := v.Err(); errors.As(err, &inv) {
				for _, e := range inv.Errors {
					got = append(got, e.Field+":"+e.Code)
				}
			}
			slicesSort(got)
			if strings.Join(got, " ") != tc.want {
				t.Errorf("got %v, want %q", got, tc.want)
			}
		})
	}
}

func slicesSort(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

func TestFillEmpty(t *testing.T) {
	cur := map[string]any{"firstName": "Anna", "email": "", "address": map[string]any{"city": "Berlin"}, "tags": []any{}}
	patch := map[string]any{"firstName": "Bea", "email": "b@example.com", "address": map[string]any{"city": "Hamburg", "street": "Weg"},
		"tags": []any{"x"}, "writeMode": "fill_empty_only"}
	got := FillEmpty(cur, patch)
	if _, ok := got["firstName"]; ok {
		t.Errorf("firstName kept: %v", got)
	}
	if got["email"] != "b@example.com" || got["address"].(map[string]any)["street"] != "Weg" || got["address"].(map[string]any)["city"] != nil || got["tags"] == nil {
		t.Errorf("got %v", got)
	}
}
