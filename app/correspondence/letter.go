package correspondence

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/ent"
)

// letter is what a type's letter is rendered from.
type letter struct {
	Contact struct {
		Name, FirstName, BirthDate, Address string
	}
	Contracts []struct{ PolicyNumber, TypeLabel string }
	Insurer   string
	// Form is the form data as text for the letter: dates as DD.MM.YYYY, true as "ja" and false
	// as "" (so {{if}} tests it), numbers in German notation, options by their German label.
	Form    map[string]string
	Sender  string // the acting user's name; empty for a company key
	Company string
}

// newLetter gathers the letter's data: ct the contact, contracts those of one insurer.
func newLetter(t *Type, ct *ent.Contact, contracts []*ent.Contract, insurer, sender, company string,
	form map[string]any) letter {
	var l letter
	l.Contact.Name = contactName(ct)
	l.Contact.FirstName = ct.FirstName
	l.Contact.BirthDate = germanDate(groupText(ct, "personal", "dateOfBirth"))
	l.Contact.Address = address(ct)
	for _, c := range contracts {
		sp, _ := gdv.Sparte(c.Type)
		l.Contracts = append(l.Contracts, struct{ PolicyNumber, TypeLabel string }{c.PolicyNumber, sp.De})
	}
	l.Insurer, l.Sender, l.Company = insurer, sender, company
	l.Form = map[string]string{}
	for _, f := range t.Fields {
		l.Form[f.Key] = formText(f, form[f.Key])
	}
	return l
}

// render is the subject and body of a case of type t.
func render(t *Type, l letter) (subject, body string, err error) {
	numbers := make([]string, len(l.Contracts))
	for i, c := range l.Contracts {
		numbers[i] = c.PolicyNumber
	}
	subject = oneLine(fmt.Sprintf("%s – %s – Vers.-Nr. %s", t.Subject, l.Contact.Name, strings.Join(numbers, ", ")))
	var b strings.Builder
	if err := t.body.Execute(&b, l); err != nil {
		return "", "", fmt.Errorf("render %s letter: %w", t.Key, err)
	}
	return clip(subject, MaxSubject), b.String(), nil
}

// contactName is how the letter names the policyholder: a business by its company name.
func contactName(ct *ent.Contact) string {
	if ct.Type == "business" && ct.CompanyName != "" {
		return ct.CompanyName
	}
	return strings.TrimSpace(ct.FirstName + " " + ct.LastName)
}

// address is the contact's address on one line ("Weg 1, 12345 Ort"); empty when unknown.
func address(ct *ent.Contact) string {
	street := strings.TrimSpace(groupText(ct, "address", "street") + " " + groupText(ct, "address", "houseNumber"))
	city := strings.TrimSpace(groupText(ct, "address", "zipCode") + " " + groupText(ct, "address", "city"))
	var parts []string
	for _, p := range []string{street, city} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ", ")
}

func groupText(ct *ent.Contact, group, key string) string {
	s, _ := ct.Groups[group][key].(string)
	return strings.TrimSpace(s)
}

// germanDate writes YYYY-MM-DD as DD.MM.YYYY; anything else stays as it is.
func germanDate(s string) string {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return s
	}
	return d.Format("02.01.2006")
}

// formText is a checked form value as the letter shows it.
func formText(f Field, v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		if x {
			return "ja"
		}
		return ""
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strings.Replace(strconv.FormatFloat(x, 'f', -1, 64), ".", ",", 1)
	case string:
		switch {
		case f.Type == FieldDate:
			return germanDate(x)
		case len(f.Options) > 0:
			for _, o := range f.Options {
				if o.Value == x {
					return o.Label.De
				}
			}
		}
		return x
	}
	return fmt.Sprint(v)
}

// oneLine folds line breaks and runs of blanks into one space: a subject is one header line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to max characters, ending in "…" when cut.
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}
