package contacts

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

var (
	reCountry = regexp.MustCompile(`^[A-Z]{2}$`)
	reVATID   = regexp.MustCompile(`^[A-Z]{2}[0-9A-Z+*.]{2,12}$`)
	reZipDE   = regexp.MustCompile(`^[0-9]{5}$`)
	reZip     = regexp.MustCompile(`^[0-9A-Za-z -]{2,10}$`)
	reDecimal = regexp.MustCompile(`^-?[0-9]{1,12}(\.[0-9]{1,2})?$`)
)

// normalizeValue canonicalises a valid value by its format: IBAN, BIC, VAT id and social
// insurance number upper case without spaces, tax id digits only.
func normalizeValue(format, s string) string {
	switch format {
	case "iban", "bic", "socialInsuranceNumber", "vatId", "country":
		return check.Compact(s)
	case "taxId":
		return strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	}
	return strings.TrimSpace(s)
}

// checkValue validates v against f and returns the value to store. now is today for dates
// that must not be in the future.
func checkValue(v *errs.Invalid, path string, f FieldDef, val any, now time.Time) any {
	str, isStr := val.(string)
	switch f.DataType {
	case "string", "enum", "date":
		if !isStr {
			v.Add(path, "invalid_type", "must be a string")
			return nil
		}
	}
	switch f.DataType {
	case "string":
		if utf8.RuneCountInString(str) > f.MaxLength {
			v.Add(path, "too_long", fmt.Sprintf("at most %d characters", f.MaxLength))
			return nil
		}
		check.Text(v, path, str)
		ok, code, detail := checkFormat(f.Format, str)
		if !ok {
			v.Add(path, code, detail)
			return nil
		}
		return normalizeValue(f.Format, str)
	case "enum":
		for _, o := range f.Options {
			if o == str {
				return str
			}
		}
		v.Add(path, "invalid_enum", "must be one of "+strings.Join(f.Options, ", "))
	case "date":
		d, err := time.Parse(time.DateOnly, str)
		if err != nil {
			v.Add(path, "invalid_date", "must be a date (YYYY-MM-DD)")
			return nil
		}
		if f.Format == "pastDate" && d.After(now) {
			v.Add(path, "date_in_future", "must not be in the future")
			return nil
		}
		return str
	case "boolean":
		if _, ok := val.(bool); !ok {
			v.Add(path, "invalid_type", "must be a boolean")
			return nil
		}
		return val
	case "integer":
		n, ok := asInt(val)
		if !ok {
			v.Add(path, "invalid_type", "must be an integer")
			return nil
		}
		if (f.Min != nil && n < *f.Min) || (f.Max != nil && n > *f.Max) {
			v.Add(path, "out_of_range", fmt.Sprintf("must be from %d to %d", ptr.Deref(f.Min), ptr.Deref(f.Max)))
			return nil
		}
		return n
	case "decimal":
		if !isStr || !reDecimal.MatchString(strings.TrimSpace(str)) {
			v.Add(path, "invalid_decimal", `must be a decimal string with at most two fraction digits ("1234.50")`)
			return nil
		}
		return schematype.MustMoney(str).String()
	}
	return nil
}

func asInt(val any) (int64, bool) {
	switch n := val.(type) {
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case float64:
		return int64(n), n == float64(int64(n))
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}

// checkFormat checks a string value of a formatted field.
func checkFormat(format, s string) (ok bool, code, detail string) {
	switch format {
	case "iban":
		return check.ValidIBAN(s), "invalid_iban", "must be an IBAN with a valid checksum"
	case "bic":
		return check.ValidBIC(s), "invalid_bic", "must be a BIC of 8 or 11 characters"
	case "taxId":
		return check.ValidTaxID(s), "invalid_tax_id", "must be a Steuer-ID: 11 digits with a valid check digit"
	case "socialInsuranceNumber":
		return check.ValidSVNR(s), "invalid_social_insurance_number", "must be a Sozialversicherungsnummer like 65170839J003"
	case "country":
		return reCountry.MatchString(check.Compact(s)), "invalid_country", "must be an ISO 3166-1 alpha-2 code (DE)"
	case "vatId":
		return reVATID.MatchString(check.Compact(s)), "invalid_vat_id", "must be a VAT id (DE123456789)"
	case "zipCode":
		return reZip.MatchString(strings.TrimSpace(s)), "invalid_zip_code", "must be a postcode"
	}
	return true, "", ""
}

// CheckGroups validates the field groups of a contact of type typ: every key must be in the
// catalog, every value valid for its definition, and every group applicable to typ (health on a
// business contact is 422 group_not_applicable). It returns the groups with normalised values
// and empty groups dropped.
func CheckGroups(v *errs.Invalid, typ string, groups map[string]map[string]any, now time.Time) map[string]map[string]any {
	cat := FieldCatalog()
	out := map[string]map[string]any{}
	for _, g := range cat.GroupNames() {
		vals, ok := groups[g]
		if !ok || vals == nil {
			continue
		}
		if !cat.Applies(g, typ) {
			v.Add(g, "group_not_applicable", fmt.Sprintf("the group %s does not apply to %s contacts", g, typ))
			continue
		}
		clean := map[string]any{}
		for key, val := range vals {
			path := g + "." + key
			f, ok := cat.Field(g, key)
			switch {
			case !ok:
				v.Add(path, "unknown_field", "is not a field of this group (see GET /contact-fields)")
				continue
			case val == nil:
				continue
			}
			if !containsStr(f.ContactTypes, typ) {
				v.Add(path, "field_not_applicable", fmt.Sprintf("does not apply to %s contacts", typ))
				continue
			}
			if nv := checkValue(v, path, f, val, now); nv != nil {
				clean[key] = nv
			}
		}
		if g == "address" {
			if zip, ok := clean["zipCode"].(string); ok {
				country, _ := clean["country"].(string)
				if (country == "" || country == "DE") && !reZipDE.MatchString(zip) {
					v.Add("address.zipCode", "invalid_zip_code", "a German postcode has 5 digits")
				}
			}
		}
		if len(clean) > 0 {
			out[g] = clean
		}
	}
	return out
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
