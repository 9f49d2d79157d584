package doctemplates

import (
	"fmt"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"slices"
	"strings"
	"time"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Placeholders the service fills are namespaced (contact.lastName); a name without a dot is a
// variable the caller of POST /documents/generate gives. advice.* and advisor.* are filled by
// the advice area only (POST /advice-records/{id}/document), never by variables: a protocol
// is rendered from an advice record or not at all.

// Computed are the namespaced placeholders a template may use, by namespace.
var Computed = map[string][]string{
	"contact": {"salutation", "title", "firstName", "lastName", "fullName", "companyName", "greeting", "email", "phone",
		"street", "houseNumber", "zipCode", "city", "country", "addressLines", "dateOfBirth"},
	"contract": {"policyNumber", "insurer", "type", "typeLabel", "status", "startDate", "endDate", "mainRenewalDate",
		"premium", "annualPremium", "paymentFrequency"},
	"user":    {"name", "firstName", "lastName", "email"},
	"company": {"name", "street", "houseNumber", "zipCode", "city", "country", "address", "website"},
	"date":    {"today"},
	"advice": {"subject", "consultedAt", "channel", "customerWishes", "customerNeeds", "advice", "reasons", "products",
		"waived", "notes"},
	"advisor": {"name"},
}

// Known reports whether name is a placeholder a template may use: a computed one, or a plain
// name (a variable).
func Known(name string) bool {
	ns, key, dotted := strings.Cut(name, ".")
	if !dotted {
		return true
	}
	return slices.Contains(Computed[ns], key)
}

// IsVariable reports whether name is filled from the request's variables.
func IsVariable(name string) bool { return !strings.Contains(name, ".") }

// germanDate is t as dd.mm.yyyy in Europe/Berlin (a date column is midnight UTC: read as a
// calendar date, not shifted).
func germanDate(t time.Time) string { return t.In(httpx.Berlin).Format("02.01.2006") }

// calendarDate is a date column (midnight UTC) as dd.mm.yyyy.
func calendarDate(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("02.01.2006")
}

// euro is an optional amount in German notation (schematype.Money.German), "" when absent.
func euro(m *schematype.Money) string {
	if m == nil {
		return ""
	}
	return m.German()
}

var frequencies = map[string]string{"monthly": "monatlich", "quarterly": "vierteljährlich", "half-yearly": "halbjährlich",
	"yearly": "jährlich", "single": "Einmalbeitrag"}

var contractStatuses = map[string]string{"active": "aktiv", "offer": "Angebot", "application": "Antrag",
	"suspended": "ruhend", "cancelled": "gekündigt", "ended": "beendet"}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return strings.TrimSpace(s)
}

func join(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

// contactValues are contact.* of c (phone: its primary number, "" without one). Every key of
// Computed["contact"] is set, empty when the contact lacks it: a computed placeholder is never
// "unfilled", it prints what the record holds.
func contactValues(v map[string]string, c *ent.Contact, phone string) {
	personal, address := c.Groups["personal"], c.Groups["address"]
	set := func(k, val string) { v["contact."+k] = val }
	title, salutation := str(personal, "title"), str(personal, "salutation")
	set("salutation", salutation)
	set("title", title)
	set("firstName", c.FirstName)
	set("lastName", c.LastName)
	full := join(title, c.FirstName, c.LastName)
	if c.FirstName == "" && c.LastName == "" {
		full = c.CompanyName
	}
	set("fullName", full)
	set("companyName", c.CompanyName)
	set("greeting", greeting(salutation, title, c.FirstName, c.LastName))
	email := ""
	if c.Email != nil {
		email = *c.Email
	}
	set("email", email)
	set("phone", phone)
	street, house, zip, city := str(address, "street"), str(address, "houseNumber"), str(address, "zipCode"), str(address, "city")
	set("street", street)
	set("houseNumber", house)
	set("zipCode", zip)
	set("city", city)
	set("country", str(address, "country"))
	set("addressLines", strings.TrimSpace(join(street, house)+"\n"+join(zip, city)))
	dob := ""
	if d, err := time.Parse(time.DateOnly, str(personal, "dateOfBirth")); err == nil {
		dob = d.Format("02.01.2006")
	}
	set("dateOfBirth", dob)
}

// greeting is a German letter's salutation line, without the comma.
func greeting(salutation, title, first, last string) string {
	switch salutation {
	case "Herr":
		if last != "" {
			return "Sehr geehrter Herr " + join(title, last)
		}
	case "Frau":
		if last != "" {
			return "Sehr geehrte Frau " + join(title, last)
		}
	case "divers":
		if n := join(title, first, last); n != "" {
			return "Guten Tag " + n
		}
	}
	return "Sehr geehrte Damen und Herren"
}

// contractValues are contract.* of k, insured by insurer.
func contractValues(v map[string]string, k *ent.Contract, insurer string) {
	set := func(key, val string) { v["contract."+key] = val }
	set("policyNumber", k.PolicyNumber)
	set("insurer", insurer)
	set("type", k.Type)
	label := k.Type
	if sp, ok := gdv.Sparte(k.Type); ok && sp.De != "" {
		label = sp.De
	}
	set("typeLabel", label)
	status := string(k.Status)
	if de, ok := contractStatuses[status]; ok {
		status = de
	}
	set("status", status)
	set("startDate", calendarDate(k.StartDate))
	set("endDate", calendarDate(k.EndDate))
	set("mainRenewalDate", calendarDate(k.MainRenewalDate))
	set("premium", euro(k.Premium))
	set("annualPremium", euro(k.AnnualPremium))
	freq := ""
	if k.PaymentFrequency != nil {
		freq = frequencies[string(*k.PaymentFrequency)]
	}
	set("paymentFrequency", freq)
}

// userValues are user.*: the credential's user, empty for a company key.
func userValues(v map[string]string, first, last, email string) {
	v["user.name"] = join(first, last)
	v["user.firstName"] = first
	v["user.lastName"] = last
	v["user.email"] = email
}

// CompanyValues are company.* of co.
func CompanyValues(co *ent.Company) map[string]string {
	a := co.Address
	v := map[string]string{
		"company.name": co.Name, "company.street": a.Street, "company.houseNumber": a.HouseNumber,
		"company.zipCode": a.ZipCode, "company.city": a.City, "company.country": a.Country,
		"company.website": co.Links.Website,
	}
	line := join(a.Street, a.HouseNumber)
	if pc := join(a.ZipCode, a.City); pc != "" {
		if line != "" {
			line += ", "
		}
		line += pc
	}
	v["company.address"] = line
	return v
}

// dateValues are date.*: today in Europe/Berlin by the service's clock.
func dateValues(v map[string]string, now time.Time) { v["date.today"] = germanDate(now) }

// BlankValues fill every placeholder of names that values lacks with BlankLine: a blank form
// (the standard documents rendered from templates).
func BlankValues(names []string, values map[string]string) map[string]string {
	out := make(map[string]string, len(names))
	for k, val := range values {
		out[k] = val
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			out[n] = BlankLine
		}
	}
	return out
}

// DocumentType is the document type a generated PDF of a template category is filed as.
func DocumentType(category string) string {
	switch category {
	case "letter":
		return "correspondence"
	case "broker_agreement", "power_of_attorney":
		return category
	case "privacy":
		return "privacy_consent"
	case "advice_protocol":
		return "advice_documentation"
	case "cover_note":
		return "policy"
	}
	return "other"
}

// checkPlaceholders checks a template body's placeholders and signature roles: every
// placeholder Known, every role contact or broker. The errors name field.
func checkPlaceholders(names, roles []string) []string {
	var bad []string
	for _, n := range names {
		if !Known(n) {
			ns, _, _ := strings.Cut(n, ".")
			if keys, ok := Computed[ns]; ok {
				bad = append(bad, fmt.Sprintf("{{%s}} is not filled by the service (%s.* are: %s)", n, ns, strings.Join(keys, ", ")))
			} else {
				bad = append(bad, fmt.Sprintf("{{%s}} is in no known namespace (contact, contract, user, company, date, advice, advisor; "+
					"a name without a dot is a variable)", n))
			}
		}
	}
	for _, r := range roles {
		if r != "contact" && r != "broker" {
			bad = append(bad, fmt.Sprintf("{{signature:%s}}: a template's signature fields are the contact's or the broker's", r))
		}
	}
	return bad
}
