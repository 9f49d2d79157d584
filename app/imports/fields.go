package imports

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"
)

// Mapping targets besides the catalog's group fields ("address.zipCode", named as POST
// /contacts names them, GET /contact-fields lists them): the top-level fields of a contact,
// and three phone columns whose type they set ("phone": the type libphonenumber tells).
const (
	TargetFirstName = "firstName"
	TargetLastName  = "lastName"
	TargetEmail     = "email"
	TargetPhone     = "phone"
	TargetMobile    = "mobile"
	TargetFax       = "fax"
)

var topTargets = []string{TargetFirstName, TargetLastName, TargetEmail, TargetPhone, TargetMobile, TargetFax}

// Targets lists the field keys a column of a contactType import may be mapped to.
func Targets(contactType string) []string {
	out := slices.Clone(topTargets)
	cat := contacts.FieldCatalog()
	for _, f := range cat.Fields {
		if cat.Applies(f.Group, contactType) && slices.Contains(f.ContactTypes, contactType) {
			out = append(out, f.Group+"."+f.Key)
		}
	}
	return out
}

// synonyms are the headers German and English exports use for a target, normalised by
// headerKey; the catalog's own labels (de, en) are added to them. The first column of the file
// whose header matches wins a target.
var synonyms = map[string][]string{
	TargetFirstName:          {"vorname", "vornamen", "firstname", "givenname", "first"},
	TargetLastName:           {"nachname", "name", "familienname", "zuname", "lastname", "surname", "familyname"},
	TargetEmail:              {"email", "emailadresse", "mail", "emailaddress", "mailadresse"},
	TargetPhone:              {"telefon", "tel", "telefonnummer", "festnetz", "telefonprivat", "phone", "phonenumber", "telephone"},
	TargetMobile:             {"mobil", "mobiltelefon", "mobilnummer", "handy", "handynummer", "mobile", "mobilephone", "cell", "cellphone"},
	TargetFax:                {"fax", "telefax", "faxnummer"},
	"address.street":         {"strasse", "str", "strassehausnummer", "strasseundhausnummer", "anschrift", "adresse", "street", "address"},
	"address.houseNumber":    {"hausnummer", "hausnr", "nr", "housenumber", "houseno"},
	"address.zipCode":        {"plz", "postleitzahl", "zip", "zipcode", "postcode", "postalcode"},
	"address.city":           {"ort", "stadt", "wohnort", "city", "town"},
	"address.country":        {"land", "country"},
	"personal.salutation":    {"anrede", "salutation"},
	"personal.title":         {"titel", "title", "akadtitel"},
	"personal.dateOfBirth":   {"geburtsdatum", "gebdatum", "geburtstag", "gebam", "birthdate", "dateofbirth", "dob", "birthday"},
	"bank.iban":              {"iban"},
	"bank.bic":               {"bic", "swift", "swiftbic"},
	"business.companyName":   {"firma", "firmenname", "unternehmen", "firmierung", "company", "companyname", "organisation", "organization"},
	"business.legalForm":     {"rechtsform", "legalform"},
	"personal.maritalStatus": {"familienstand", "maritalstatus"},
}

// headerKey normalises a header for the suggestion: lower case, umlauts spelled out, only
// letters and digits ("E-Mail-Adresse" and "email adresse" are "emailadresse").
func headerKey(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		if s, ok := identity.SpellUmlaut(r); ok {
			b.WriteString(s)
			continue
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Suggest maps the headers it recognises onto targets of a contactType import: column →
// field key, each target at most once (the first column wins). For a business import "Name"
// is the company's name.
func Suggest(header []string, contactType string) map[string]string {
	allowed := Targets(contactType)
	byKey := map[string]string{}
	add := func(target, key string) {
		if _, ok := byKey[key]; !ok && key != "" && slices.Contains(allowed, target) {
			byKey[key] = target
		}
	}
	if contactType == contacts.TypeBusiness {
		add("business.companyName", "name")
	}
	for target, keys := range synonyms {
		for _, k := range keys {
			add(target, k)
		}
	}
	for _, f := range contacts.FieldCatalog().Fields {
		for _, l := range f.Label {
			add(f.Group+"."+f.Key, headerKey(l))
		}
	}
	out := map[string]string{}
	taken := map[string]bool{}
	for _, h := range header {
		t, ok := byKey[headerKey(h)]
		if ok && !taken[t] {
			out[h] = t
			taken[t] = true
		}
	}
	return out
}

// checkMapping validates a given mapping against the header and the targets: every column
// must be in the header and every field key a target, each at most once. Errors are named
// mapping.<column>.
func checkMapping(v *errs.Invalid, m map[string]string, header []string, contactType string) {
	targets := Targets(contactType)
	used := map[string]string{}
	for col, t := range m {
		name := "mapping." + col
		if !slices.Contains(header, col) {
			v.Add(name, "unknown_column", "is not a column of the file's header ("+quoteList(header)+")")
		}
		switch {
		case !slices.Contains(targets, t):
			v.Add(name, "unknown_field", fmt.Sprintf("%q is not a field key of a %s contact (see GET /contact-fields)", t, contactType))
		case used[t] != "":
			v.Add(name, "duplicate_field", fmt.Sprintf("%s is mapped from column %q already", t, used[t]))
		default:
			used[t] = col
		}
	}
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}

// rowDoc turns a row's cells (column → value) into the body POST /contacts would receive,
// converting what spreadsheets write (German dates and amounts, "ja"/"nein", a salutation in
// any case) to the API's values. A value it cannot convert is passed on as it is: validation
// then names it. phoneCols names the column of each phone, for the errors.
func rowDoc(cells, mapping map[string]string, contactType string, now time.Time) (d contacts.Doc, phoneCols []string) {
	d = contacts.Doc{Type: contactType}
	groups := map[string]map[string]any{}
	cat := contacts.FieldCatalog()
	cols := make([]string, 0, len(mapping))
	for col := range mapping {
		cols = append(cols, col)
	}
	slices.Sort(cols) // phones in a stable order
	for _, col := range cols {
		val := strings.TrimSpace(cells[col])
		if val == "" {
			continue
		}
		t := mapping[col]
		switch t {
		case TargetFirstName:
			d.FirstName = &val
		case TargetLastName:
			d.LastName = &val
		case TargetEmail:
			d.Email = &val
		case TargetPhone, TargetMobile, TargetFax:
			p := contacts.PhoneInput{Number: val}
			switch t {
			case TargetMobile:
				p.Type = ptrTo(contacts.PhoneMobile)
			case TargetFax:
				p.Type = ptrTo(contacts.PhoneFax)
			}
			d.Phones = append(d.Phones, p)
			phoneCols = append(phoneCols, col)
		default:
			g, key, _ := strings.Cut(t, ".")
			f, ok := cat.Field(g, key)
			if !ok {
				continue // checkMapping refused it
			}
			if groups[g] == nil {
				groups[g] = map[string]any{}
			}
			groups[g][key] = convert(f, val, now)
		}
	}
	d.SetGroups(groups)
	return d, phoneCols
}

func ptrTo[T any](v T) *T { return &v }

var (
	reDMY     = regexp.MustCompile(`^(\d{1,2})\.(\d{1,2})\.(\d{4})$`)
	reExcelUS = regexp.MustCompile(`^(\d{1,2})-(\d{1,2})-(\d{2})$`) // excelize's rendering of Excel's date format 14
	reSerial  = regexp.MustCompile(`^\d{1,5}(\.0+)?$`)
	reGermanD = regexp.MustCompile(`^-?\d{1,3}(\.\d{3})*(,\d+)?$|^-?\d+,\d+$`)
	countries = map[string]string{"deutschland": "DE", "germany": "DE", "brd": "DE", "oesterreich": "AT", "austria": "AT",
		"schweiz": "CH", "switzerland": "CH", "niederlande": "NL", "frankreich": "FR", "italien": "IT", "polen": "PL"}
	salutations = map[string]string{"hr": "Herr", "herrn": "Herr", "fr": "Frau", "mr": "Herr", "mrs": "Frau", "ms": "Frau"}
)

// convert reads a cell as the catalog's field f holds it.
func convert(f contacts.FieldDef, s string, now time.Time) any {
	switch f.DataType {
	case "date":
		if d, ok := parseDate(s, now); ok {
			return d
		}
	case "boolean":
		switch headerKey(s) {
		case "ja", "j", "yes", "y", "true", "wahr", "x", "1":
			return true
		case "nein", "n", "no", "false", "falsch", "0":
			return false
		}
	case "integer":
		if n, err := strconv.ParseInt(strings.ReplaceAll(s, " ", ""), 10, 64); err == nil {
			return n
		}
	case "decimal":
		return germanDecimal(s)
	case "enum":
		for _, o := range f.Options {
			if strings.EqualFold(o, s) {
				return o
			}
		}
		if f.Key == "salutation" {
			if o, ok := salutations[headerKey(s)]; ok {
				return o
			}
		}
	case "string":
		if f.Format == "country" {
			if c, ok := countries[headerKey(s)]; ok {
				return c
			}
		}
	}
	return s
}

// parseDate reads 31.12.1980, 1980-12-31 (with or without a time), Excel's rendering 12-31-80
// and a date cell's serial number, as YYYY-MM-DD.
func parseDate(s string, now time.Time) (string, bool) {
	if len(s) >= 10 {
		if t, err := time.Parse(time.DateOnly, s[:10]); err == nil && (len(s) == 10 || s[10] == 'T' || s[10] == ' ') {
			return t.Format(time.DateOnly), true
		}
	}
	if m := reDMY.FindStringSubmatch(s); m != nil {
		return ymd(m[3], m[2], m[1])
	}
	if m := reExcelUS.FindStringSubmatch(s); m != nil {
		yy, _ := strconv.Atoi(m[3])
		y := 2000 + yy
		if y > now.Year() { // a birth date of "12-31-80" is 1980
			y -= 100
		}
		return ymd(strconv.Itoa(y), m[1], m[2])
	}
	if reSerial.MatchString(s) {
		f, _ := strconv.ParseFloat(s, 64)
		if f >= 1 && f < 2958466 {
			t := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(math.Floor(f)))
			return t.Format(time.DateOnly), true
		}
	}
	return "", false
}

func ymd(y, m, d string) (string, bool) {
	t, err := time.Parse("2006-1-2", y+"-"+m+"-"+d)
	if err != nil {
		return "", false
	}
	return t.Format(time.DateOnly), true
}

// germanDecimal reads "1.234,50", "1234,5" and "2.500" as "1234.50", "1234.5" and "2500" (a
// dot before exactly three digits groups thousands, as German writes); "1234.50" stays.
func germanDecimal(s string) string {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "€"))
	s = strings.ReplaceAll(s, " ", "")
	if reGermanD.MatchString(s) {
		return strings.ReplaceAll(strings.ReplaceAll(s, ".", ""), ",", ".")
	}
	return s
}

// rowErrors turns the validation errors of a row's document into the strings of
// ImportRow.errors, each naming the column it came from ("PLZ (address.zipCode): a German
// postcode has 5 digits"); an error of no column (a private contact without a last name when
// no column maps to it) names the field.
func rowErrors(err error, mapping map[string]string, phoneCols []string) []string {
	inv, ok := err.(*errs.Invalid)
	if !ok {
		return []string{err.Error()}
	}
	byTarget := map[string]string{}
	for col, t := range mapping {
		byTarget[t] = col
	}
	out := make([]string, 0, len(inv.Errors))
	for _, e := range inv.Errors {
		field := e.Field
		col := byTarget[field]
		if rest, ok := strings.CutPrefix(field, "phones."); ok {
			i, _, _ := strings.Cut(rest, ".")
			if n, err := strconv.Atoi(i); err == nil && n < len(phoneCols) {
				col = phoneCols[n]
			}
		}
		if col != "" {
			out = append(out, fmt.Sprintf("%s (%s): %s", col, field, e.Detail))
		} else {
			out = append(out, fmt.Sprintf("%s: %s", field, e.Detail))
		}
	}
	return out
}
