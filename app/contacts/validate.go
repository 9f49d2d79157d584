package contacts

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// ibanLengths are the IBAN lengths of the SEPA countries; other countries need 15-34 characters.
var ibanLengths = map[string]int{"DE": 22, "AT": 20, "CH": 21, "NL": 18, "BE": 16, "FR": 27, "IT": 27, "ES": 24,
	"LU": 20, "PL": 28, "DK": 18, "SE": 24, "NO": 15, "FI": 18, "IE": 22, "PT": 25, "GB": 22, "LI": 21, "CZ": 24}

var (
	reIBAN    = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$`)
	reBIC     = regexp.MustCompile(`^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$`)
	reSVNR    = regexp.MustCompile(`^[0-9]{2}(0[1-9]|[12][0-9]|3[01]|[5-8][0-9])(0[1-9]|1[0-2])[0-9]{2}[A-Z][0-9]{3}$`)
	reCountry = regexp.MustCompile(`^[A-Z]{2}$`)
	reVATID   = regexp.MustCompile(`^[A-Z]{2}[0-9A-Z+*.]{2,12}$`)
	reZipDE   = regexp.MustCompile(`^[0-9]{5}$`)
	reZip     = regexp.MustCompile(`^[0-9A-Za-z -]{2,10}$`)
	reDecimal = regexp.MustCompile(`^-?[0-9]{1,12}(\.[0-9]{1,2})?$`)
)

func compact(s string) string {
	return strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
}

// ValidIBAN checks an IBAN (spaces allowed): shape, the country's length and the ISO 7064
// MOD 97-10 checksum.
func ValidIBAN(s string) bool {
	s = compact(s)
	if !reIBAN.MatchString(s) {
		return false
	}
	if n, ok := ibanLengths[s[:2]]; ok && len(s) != n {
		return false
	}
	var b strings.Builder
	for _, r := range s[4:] + s[:4] {
		if r >= 'A' && r <= 'Z' {
			b.WriteString(strconv.Itoa(int(r-'A') + 10))
		} else {
			b.WriteRune(r)
		}
	}
	n, _ := new(big.Int).SetString(b.String(), 10)
	return new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

// ValidBIC checks the shape of a BIC (8 or 11 characters).
func ValidBIC(s string) bool { return reBIC.MatchString(compact(s)) }

// ValidTaxID checks a German Steuer-Identifikationsnummer: 11 digits, no leading 0, among the
// first ten one digit twice or three times (never three in a row) and every other once or not
// at all, and the ISO 7064 MOD 11,10 check digit.
func ValidTaxID(s string) bool {
	s = strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	if len(s) != 11 || s[0] == '0' {
		return false
	}
	counts := map[rune]int{}
	for i, r := range s {
		if r < '0' || r > '9' {
			return false
		}
		if i < 10 {
			counts[r]++
		}
	}
	multi := 0
	for _, n := range counts {
		if n > 3 {
			return false
		}
		if n > 1 {
			multi++
		}
	}
	if multi != 1 {
		return false
	}
	for i := 2; i < 10; i++ {
		if s[i] == s[i-1] && s[i] == s[i-2] {
			return false
		}
	}
	product := 10
	for i := 0; i < 10; i++ {
		sum := (int(s[i]-'0') + product) % 10
		if sum == 0 {
			sum = 10
		}
		product = (sum * 2) % 11
	}
	check := 11 - product
	if check == 10 {
		check = 0
	}
	return int(s[10]-'0') == check
}

// ValidSVNR checks the shape of a German Sozialversicherungsnummer (Rentenversicherungsnummer):
// area number (2 digits), birth date DDMMYY (day + 50 allowed), the birth name's initial, serial
// number (2 digits) and check digit. Spaces are allowed.
func ValidSVNR(s string) bool { return reSVNR.MatchString(compact(s)) }

// normalizeValue canonicalises a valid value by its format: IBAN, BIC, VAT id and social
// insurance number upper case without spaces, tax id digits only.
func normalizeValue(format, s string) string {
	switch format {
	case "iban", "bic", "socialInsuranceNumber", "vatId", "country":
		return compact(s)
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
		CheckText(v, path, str)
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
			v.Add(path, "out_of_range", fmt.Sprintf("must be from %d to %d", deref64(f.Min), deref64(f.Max)))
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

func deref64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
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
		return ValidIBAN(s), "invalid_iban", "must be an IBAN with a valid checksum"
	case "bic":
		return ValidBIC(s), "invalid_bic", "must be a BIC of 8 or 11 characters"
	case "taxId":
		return ValidTaxID(s), "invalid_tax_id", "must be a Steuer-ID: 11 digits with a valid check digit"
	case "socialInsuranceNumber":
		return ValidSVNR(s), "invalid_social_insurance_number", "must be a Sozialversicherungsnummer like 65170839J003"
	case "country":
		return reCountry.MatchString(compact(s)), "invalid_country", "must be an ISO 3166-1 alpha-2 code (DE)"
	case "vatId":
		return reVATID.MatchString(compact(s)), "invalid_vat_id", "must be a VAT id (DE123456789)"
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
