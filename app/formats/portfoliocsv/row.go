package portfoliocsv

import (
	"fmt"
	"strings"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
)

// cells gives the values of one row by target: the mapped column, else the mapping's
// default; field names the column for issues.
type cells struct {
	r    *Reader
	rec  []string
	line int64
}

func (c cells) get(target string) (value, field string) {
	if i, ok := c.r.cols[target]; ok {
		col := c.r.header[i]
		if i < len(c.rec) {
			if v := strings.TrimSpace(c.rec[i]); v != "" {
				return v, col
			}
		}
		if d := c.r.opt.Mapping.Defaults[target]; d != "" {
			return d, col
		}
		return "", col
	}
	return strings.TrimSpace(c.r.opt.Mapping.Defaults[target]), target
}

func (c cells) date(target string) gdv.Date {
	v, field := c.get(target)
	d, ok := parseDate(v)
	if !ok {
		c.r.issue(gdv.Warning, "invalid_date", c.line, field, field+" is no date (TT.MM.JJJJ or JJJJ-MM-TT); left empty", v)
	}
	return d
}

func (c cells) decimal(target string) *gdv.Decimal {
	v, field := c.get(target)
	if v == "" {
		return nil
	}
	d, ok := parseDecimal(v, c.r.opt.DecimalPoint)
	if !ok {
		c.r.issue(gdv.Warning, "invalid_number", c.line, field, field+" is no amount; left empty", v)
		return nil
	}
	return &d
}

// row reads one data row.
func (r *Reader) row(rec []string, line int64) {
	r.sum.Records++
	r.pkg.Records++
	c := cells{r: r, rec: rec, line: line}
	if len(rec) != len(r.header) {
		r.issue(gdv.Warning, "row_width", line, "",
			fmt.Sprintf("row has %d fields, the header %d: missing ones read as empty, extra ones kept in the details", len(rec), len(r.header)), "")
	}
	policy, field := c.get("contract.policyNumber")
	if policy == "" {
		r.issue(gdv.Error, "policy_number_missing", line, field, "row without policy number; not imported", strings.Join(rec, string(r.opt.Comma)))
		return
	}
	insurer, _ := c.get("contract.insurer")
	if insurer != "" && len(r.insurers) < 1000 {
		r.insurers[insurer] = true
	}
	p := r.person(c)
	key := insurer + "\x00" + policy
	if r.cur != nil && r.curKey == key { // a further person of the same contract
		r.cur.AddPerson(p)
		r.cur.Details = append(r.cur.Details, r.rawDetail(rec, line))
		return
	}
	r.flush()
	ct := &gdv.Contract{Package: 1, Line: line, VUNumber: insurer, PolicyNumber: policy,
		Persons: []gdv.Person{}, Details: []gdv.Detail{}}
	ct.InsurerName, _ = c.get("contract.insurerName")
	ct.ProductName, _ = c.get("contract.productName")
	ct.Agency, _ = c.get("contract.agency")
	ct.CustomerNumber, _ = c.get("contract.customerNumber")
	if v, field := c.get("contract.sparte"); v != "" {
		sp, ok := parseSparte(v)
		if !ok {
			r.issue(gdv.Warning, "unknown_code", line, field, fmt.Sprintf("%s %q is no GDV Sparte; kept as delivered", field, v), v)
		}
		ct.Sparte = sp
	}
	if v, field := c.get("contract.status"); v != "" {
		st, code, ok := parseStatus(v)
		if !ok {
			r.issue(gdv.Warning, "unknown_code", line, field, fmt.Sprintf("%s %q is no status; kept as delivered", field, v), v)
			code = v
		}
		ct.Status = st
		ct.StatusCode = gdv.Code{Code: code}
	}
	ct.StartDate = c.date("contract.startDate")
	ct.EndDate = c.date("contract.endDate")
	ct.MainRenewalDate = c.date("contract.mainRenewalDate")
	ct.CancellationDate = c.date("contract.cancellationDate")
	ct.Premium = c.decimal("contract.premium")
	ct.GrossPremium = c.decimal("contract.grossPremium")
	ct.Currency, field = c.get("contract.currency")
	switch {
	case ct.Currency == "" || ct.Currency == "€":
		ct.Currency = "EUR"
	case !isCurrency(strings.ToUpper(ct.Currency)):
		r.issue(gdv.Warning, "unknown_code", line, field, fmt.Sprintf("currency %q is no ISO 4217 code; kept as delivered", ct.Currency), ct.Currency)
	default:
		ct.Currency = strings.ToUpper(ct.Currency)
	}
	if v, field := c.get("contract.paymentFrequency"); v != "" {
		freq, perYear, ok := parseFrequency(v)
		if !ok {
			r.issue(gdv.Warning, "unknown_code", line, field, fmt.Sprintf("%s %q is no payment frequency; kept as delivered", field, v), v)
		}
		ct.PaymentFrequency = freq
		ct.PaymentFrequencyCode = gdv.Code{Code: v}
		if ct.Premium != nil && perYear > 0 {
			if a, ok := ct.Premium.MulInt(perYear); ok {
				ct.AnnualPremium = &a
			}
		}
	}
	ct.AddPerson(p)
	ct.Details = append(ct.Details, r.rawDetail(rec, line))
	r.cur, r.curKey = ct, key
}

// person reads the row's person.
func (r *Reader) person(c cells) gdv.Person {
	p := gdv.Person{Line: c.line, Communications: []gdv.Communication{}, BankAccounts: []gdv.BankAccount{}}
	v, field := c.get("person.role")
	role, ok := parseRole(v)
	if !ok {
		r.issue(gdv.Warning, "unknown_code", c.line, field, fmt.Sprintf("%s %q is no role; kept as delivered", field, v), v)
	}
	p.Roles = []gdv.Role{role}
	if v, field := c.get("person.salutation"); v != "" {
		sal, ok := parseSalutation(v)
		if !ok {
			r.issue(gdv.Warning, "unknown_code", c.line, field, fmt.Sprintf("%s %q is no salutation; kept as delivered", field, v), v)
		}
		p.Salutation = sal
	}
	p.Title, _ = c.get("person.title")
	p.FirstName, _ = c.get("person.firstName")
	p.LastName, _ = c.get("person.lastName")
	p.CompanyName, _ = c.get("person.companyName")
	p.BirthDate = c.date("person.birthDate")
	p.Street, _ = c.get("person.street")
	if hn, _ := c.get("person.houseNumber"); hn != "" {
		p.Street = strings.TrimSpace(p.Street + " " + hn)
	}
	p.PostalCode, _ = c.get("person.postalCode")
	p.City, _ = c.get("person.city")
	p.Country, _ = c.get("person.country")
	p.BrokerCustomerNumber, _ = c.get("person.customerNumber")
	for _, comm := range []struct{ target, code, kind, de, en string }{
		{"person.email", "50", gdv.CommEmail, "E-Mail", "E-mail"},
		{"person.phone", "10", gdv.CommPhone, "Telefonnummer privat", "Phone (private)"},
		{"person.mobile", "30", gdv.CommMobile, "Telefonnummer mobil", "Mobile phone"},
	} {
		if v, _ := c.get(comm.target); v != "" {
			p.Communications = append(p.Communications, gdv.Communication{Type: gdv.Code{Code: comm.code, De: comm.de, En: comm.en}, Kind: comm.kind, Value: v})
		}
	}
	iban, field := c.get("person.iban")
	iban = strings.ToUpper(strings.ReplaceAll(iban, " ", ""))
	if iban != "" && !gdv.ValidIBAN(iban) {
		r.issue(gdv.Warning, "invalid_iban", c.line, field, "IBAN check digits do not match; kept as delivered", iban)
	}
	bic, _ := c.get("person.bic")
	if iban != "" || bic != "" {
		p.BankAccounts = append(p.BankAccounts, gdv.BankAccount{IBAN: iban, BIC: strings.ToUpper(bic)})
	}
	p.Kind = gdv.KindPrivate
	if v, field := c.get("person.kind"); v != "" {
		k, ok := parseKind(v)
		if !ok {
			r.issue(gdv.Warning, "unknown_code", c.line, field, fmt.Sprintf("%s %q is neither private nor business", field, v), v)
		} else {
			p.Kind = k
		}
	} else if p.Salutation.Code == "3" || p.Salutation.Code == "6" || (p.CompanyName != "" && p.LastName == "" && p.FirstName == "") {
		p.Kind = gdv.KindBusiness
	}
	if p.Kind == gdv.KindBusiness {
		if p.CompanyName == "" {
			p.CompanyName = strings.TrimSpace(p.LastName + " " + p.FirstName)
		}
		p.Name1 = p.CompanyName
	} else {
		p.Name1, p.Name3 = p.LastName, p.FirstName
	}
	return p
}

// rawDetail keeps the whole row, column by column: nothing of the file is lost, mapped or
// not.
func (r *Reader) rawDetail(rec []string, line int64) gdv.Detail {
	d := gdv.Detail{Line: line, Type: "csv", Satzart: "csv", Parts: []int{}, Fields: map[string]any{}}
	for i, v := range rec {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		name := fmt.Sprintf("column%d", i+1)
		if i < len(r.header) && strings.TrimSpace(r.header[i]) != "" {
			name = strings.TrimSpace(r.header[i])
		}
		d.Fields[name] = v
	}
	return d
}

func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}
