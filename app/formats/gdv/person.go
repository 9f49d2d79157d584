package gdv

import (
	"fmt"
	"slices"
	"strings"
)

// person reads a 0100 record (Adressteil, parts 1-5).
func (r *Reader) person(lg *logical) (Person, bool) {
	t1 := lg.parts[1]
	if t1 == nil {
		r.issue(Error, "address_incomplete", lg.first, "",
			"address (0100) without part 1 (name, address, role); not imported", lg.first.text(r.cs))
		return Person{}, false
	}
	p := Person{Line: t1.line, Communications: []Communication{}, BankAccounts: []BankAccount{}}
	roleCode := r.str(t1, fRole)
	role, known := roleOf(roleCode)
	switch {
	case roleCode == "":
		r.issue(Warning, "role_missing", t1, fRole.tech, "address without Adresskennzeichen: its role is unknown", "")
	case !known:
		r.issue(Warning, "unknown_code", t1, fRole.tech, fmt.Sprintf("Adresskennzeichen %q is not a GDV role; kept as delivered", roleCode), roleCode)
	}
	p.Roles = []Role{role}
	p.Salutation = r.code(t1, fSalutation, salutationCodes)
	p.Name1 = r.str(t1, fName1)
	p.Name2 = r.str(t1, fName2)
	p.Name3 = r.str(t1, fName3)
	p.Title = r.str(t1, fTitle)
	p.Country = r.str(t1, fCountry)
	p.PostalCode = r.str(t1, fPostalCode)
	p.City = r.str(t1, fCity)
	p.Street = r.str(t1, fStreet)
	p.POBox = r.str(t1, fPOBox)
	p.BirthDate = r.date(t1, fBirthDate)
	p.Nationality = r.str(t1, fNationalty)
	p.Gender = r.code(t1, fGender, genderCodes)

	var acc1, acc2 BankAccount
	if t2 := lg.parts[2]; t2 != nil {
		p.CustomerNumber = r.str(t2, fCustNo)
		p.BrokerCustomerNumber = r.str(t2, fBrokerNo)
		acc1.AccountNumber = r.str(t2, fAccount1)
		acc1.BankCode = r.str(t2, fBankCode1)
		acc1.Holder = r.str(t2, fHolder1)
		for _, c := range fCommShort {
			r.communication(&p, t2, c[0], c[1])
		}
		p.PaymentMethod = r.code(t2, fPayMethod, paymentMethodCodes)
		p.Marital = r.code(t2, fMarital, maritalCodes)
	}
	if t3 := lg.parts[3]; t3 != nil {
		for _, c := range fCommLong {
			r.communication(&p, t3, c[0], c[1])
		}
		p.LegalForm = r.code(t3, fLegalForm, legalFormCodes)
	}
	if t4 := lg.parts[4]; t4 != nil {
		p.BirthName = r.str(t4, fBirthName)
		acc1.BankName = r.str(t4, fBankName1)
		acc1.BIC = r.str(t4, fBIC1)
		acc1.IBAN = r.iban(t4, fIBAN1)
		acc2.AccountNumber = r.str(t4, fAccount2)
		acc2.BankCode = r.str(t4, fBankCode2)
		acc2.Holder = r.str(t4, fHolder2)
		acc2.BankName = r.str(t4, fBankName2)
		acc2.BIC = r.str(t4, fBIC2)
	}
	if t5 := lg.parts[5]; t5 != nil {
		acc2.IBAN = r.iban(t5, fIBAN2)
		p.BirthPlace = r.str(t5, fBirthPlace)
		p.TaxNumber = r.str(t5, fTaxNumber)
		p.VATID = r.str(t5, fVATID)
	}
	for _, a := range []BankAccount{acc1, acc2} {
		if a.IBAN != "" || a.AccountNumber != "" {
			p.BankAccounts = append(p.BankAccounts, a)
		}
	}
	p.Kind = KindPrivate
	if isBusiness(&p) {
		p.Kind = KindBusiness
		p.CompanyName = joinNonEmpty(p.Name1, p.Name2, p.Name3)
	} else {
		p.LastName, p.FirstName = p.Name1, p.Name3
	}
	return p, true
}

// isBusiness tells a company from a natural person: salutation Firma or Vereinigung, gender
// "juristische Person", a legal form other than natural person, or no salutation and no
// first name ("Mustermann GmbH", salutation 0).
func isBusiness(p *Person) bool {
	switch {
	case p.Salutation.Code == "3", p.Salutation.Code == "6", p.Gender.Code == "0":
		return true
	case p.LegalForm.Code != "" && p.LegalForm.Code != "01":
		return true
	case p.Salutation.Code == "0" && p.Name3 == "":
		return true
	}
	return false
}

// communication reads one Kommunikationstyp/-nummer pair. An e-mail address written with "§"
// for "@" (7-bit German code pages put § where ASCII has @) is repaired, with a warning.
func (r *Reader) communication(p *Person, rec *record, typ, nr fref) {
	v := r.str(rec, nr)
	if v == "" {
		return
	}
	t := r.code(rec, typ, communicationCodes)
	kind := communicationKind(t.Code)
	if kind == CommEmail && !strings.Contains(v, "@") && strings.Count(v, "§") == 1 {
		r.issue(Warning, "email_repaired", rec, nr.tech, "e-mail address with § for @ repaired", v)
		v = strings.Replace(v, "§", "@", 1)
	}
	for _, c := range p.Communications {
		if c.Kind == kind && c.Value == v {
			return
		}
	}
	p.Communications = append(p.Communications, Communication{Type: t, Kind: kind, Value: v})
}

// iban reads an IBAN (blanks removed, upper case) and warns when its check digits fail.
func (r *Reader) iban(rec *record, f fref) string {
	v := strings.ToUpper(strings.ReplaceAll(r.str(rec, f), " ", ""))
	if v != "" && !validIBAN(v) {
		r.issue(Warning, "invalid_iban", rec, f.tech, "IBAN check digits do not match; kept as delivered", v)
	}
	return v
}

// ValidIBAN reports whether s (no blanks, upper case) is an IBAN with valid ISO 13616 check
// digits (mod 97 = 1).
func ValidIBAN(s string) bool { return validIBAN(s) }

// validIBAN checks an IBAN's form and its ISO 13616 check digits (mod 97 = 1).
func validIBAN(s string) bool {
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	rem := 0
	for _, c := range s[4:] + s[:4] {
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A'+10)) % 97
		default:
			return false
		}
	}
	return rem == 1
}

func joinNonEmpty(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

// AddPerson adds p to the contract, merged into a person already there when it is the same
// one (same names, birth date and address): one person in several roles is one Person.
func (c *Contract) AddPerson(p Person) { c.addPerson(p) }

func (c *Contract) addPerson(p Person) {
	for i := range c.Persons {
		q := &c.Persons[i]
		if samePerson(q, &p) {
			q.merge(&p)
			return
		}
	}
	c.Persons = append(c.Persons, p)
}

func samePerson(a, b *Person) bool {
	eq := func(x, y string) bool { return strings.EqualFold(strings.TrimSpace(x), strings.TrimSpace(y)) }
	return a.Kind == b.Kind && eq(a.Name1, b.Name1) && eq(a.Name2, b.Name2) && eq(a.Name3, b.Name3) &&
		a.BirthDate == b.BirthDate && eq(a.Street, b.Street) && eq(a.PostalCode, b.PostalCode) && eq(a.City, b.City)
}

// merge folds b (the same person) into p: roles, communications and accounts are joined;
// empty fields are filled.
func (p *Person) merge(b *Person) {
	for _, r := range b.Roles {
		if !slices.ContainsFunc(p.Roles, func(x Role) bool { return x.Code.Code == r.Code.Code }) {
			p.Roles = append(p.Roles, r)
		}
	}
	for _, c := range b.Communications {
		if !slices.ContainsFunc(p.Communications, func(x Communication) bool { return x.Kind == c.Kind && x.Value == c.Value }) {
			p.Communications = append(p.Communications, c)
		}
	}
	for _, a := range b.BankAccounts {
		if !slices.ContainsFunc(p.BankAccounts, func(x BankAccount) bool {
			return (a.IBAN != "" && x.IBAN == a.IBAN) || (a.IBAN == "" && x.AccountNumber == a.AccountNumber && x.BankCode == a.BankCode)
		}) {
			p.BankAccounts = append(p.BankAccounts, a)
		}
	}
	fill := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	fill(&p.Title, b.Title)
	fill(&p.Country, b.Country)
	fill(&p.POBox, b.POBox)
	fill(&p.Nationality, b.Nationality)
	fill(&p.BirthName, b.BirthName)
	fill(&p.BirthPlace, b.BirthPlace)
	fill(&p.CustomerNumber, b.CustomerNumber)
	fill(&p.BrokerCustomerNumber, b.BrokerCustomerNumber)
	fill(&p.TaxNumber, b.TaxNumber)
	fill(&p.VATID, b.VATID)
	if p.Marital.Code == "" {
		p.Marital = b.Marital
	}
	if p.LegalForm.Code == "" {
		p.LegalForm = b.LegalForm
	}
	if p.PaymentMethod.Code == "" {
		p.PaymentMethod = b.PaymentMethod
	}
	if p.Gender.Code == "" {
		p.Gender = b.Gender
	}
}
