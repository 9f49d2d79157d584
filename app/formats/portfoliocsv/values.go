package portfoliocsv

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
)

// parseDecimal reads a German amount: "1.234,56", "1234,56", "-12,5", "411", with an optional
// currency ("€", "EUR") and blanks. With decimalPoint the roles swap ("1,234.56").
func parseDecimal(s string, decimalPoint bool) (gdv.Decimal, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimSuffix(s, "€"), "EUR")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "€"), "EUR")
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '\u00a0' || r == '\'' {
			return -1
		}
		return r
	}, s)
	group, dec := ".", ","
	if decimalPoint {
		group, dec = ",", "."
	}
	if strings.Count(s, dec) > 1 {
		return gdv.Decimal{}, false
	}
	intPart, frac, _ := strings.Cut(s, dec)
	// grouping separators only between groups of three digits
	if strings.Contains(intPart, group) {
		groups := strings.Split(strings.TrimLeft(intPart, "+-"), group)
		for i, g := range groups {
			if (i == 0 && (len(g) == 0 || len(g) > 3)) || (i > 0 && len(g) != 3) {
				return gdv.Decimal{}, false
			}
		}
		intPart = strings.ReplaceAll(intPart, group, "")
	}
	v := intPart
	if frac != "" {
		v += "." + frac
	}
	d, err := gdv.ParseDecimal(v)
	return d, err == nil
}

// parseDate reads German dates ("31.12.2024", "1.2.2024", "00.05.1980" for a month only) and
// ISO dates ("2024-12-31"). Two-digit years are refused: a birth date "01.01.24" could be 1924
// or 2024.
func parseDate(s string) (gdv.Date, bool) {
	s = strings.TrimSpace(s)
	if s == "" || s == "00.00.0000" {
		return gdv.Date{}, true
	}
	var d, m, y string
	switch {
	case strings.Count(s, ".") == 2:
		p := strings.Split(s, ".")
		d, m, y = p[0], p[1], p[2]
	case strings.Count(s, "-") == 2:
		p := strings.Split(s, "-")
		y, m, d = p[0], p[1], p[2]
	default:
		return gdv.Date{}, false
	}
	if len(y) != 4 || len(m) < 1 || len(m) > 2 || len(d) < 1 || len(d) > 2 {
		return gdv.Date{}, false
	}
	for _, part := range []string{y, m, d} {
		if _, err := strconv.Atoi(part); err != nil {
			return gdv.Date{}, false
		}
	}
	dd, _ := strconv.Atoi(d)
	mm, _ := strconv.Atoi(m)
	yy, _ := strconv.Atoi(y)
	date := gdv.Date{Year: yy, Month: mm, Day: dd}
	switch {
	case yy == 0:
		return gdv.Date{}, false
	case dd == 0 && mm <= 12: // known to the month or year only, as in GDV files
		return date, true
	}
	t, ok := date.Time()
	if !ok || t.Day() != dd || int(t.Month()) != mm { // time.Date would turn 31.02. into 03.03.
		return gdv.Date{}, false
	}
	return date, true
}

func norm(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(strings.ReplaceAll(s, "-", " ")), " "))
}

// parseStatus reads a status: the API's words, German words, or a GDV Vertragsstatus code.
func parseStatus(s string) (status string, code string, ok bool) {
	switch norm(s) {
	case "active", "aktiv", "lebend", "in kraft", "laufend", "bestand":
		return gdv.StatusActive, "", true
	case "suspended", "ruhend", "ruhend gestellt", "beitragsfrei ruhend":
		return gdv.StatusSuspended, "", true
	case "cancelled", "canceled", "storniert", "gekündigt", "storno", "kündigung":
		return gdv.StatusCancelled, "", true
	case "ended", "beendet", "abgelaufen", "ausgelaufen":
		return gdv.StatusEnded, "", true
	case "offer", "angebot":
		return gdv.StatusOffer, "", true
	case "application", "antrag":
		return gdv.StatusApplication, "", true
	}
	if st := gdv.ContractStatusOf(strings.TrimSpace(s), ""); st != "" {
		return st, strings.TrimSpace(s), true
	}
	return "", "", false
}

// parseFrequency reads a payment frequency: the API's words, German words, the GDV
// Zahlungsweise, or payments a year ("12").
func parseFrequency(s string) (string, int64, bool) {
	switch norm(s) {
	case "monthly", "monatlich", "12":
		return gdv.FrequencyMonthly, 12, true
	case "quarterly", "vierteljährlich", "quartalsweise", "quartal":
		return gdv.FrequencyQuarterly, 4, true
	case "half yearly", "halfyearly", "halbjährlich", "halb jährlich":
		return gdv.FrequencyHalfYearly, 2, true
	case "yearly", "annual", "jährlich", "jaehrlich":
		return gdv.FrequencyYearly, 1, true
	case "single", "einmalig", "einmalbeitrag", "einmalbetrag", "einmal":
		return gdv.FrequencySingle, 0, true
	}
	if f, n := gdv.PaymentFrequencyOf(strings.TrimSpace(s)); f != "" {
		return f, n, true
	}
	return "", 0, false
}

// parseRole reads a person's role: an English kind, a German word or a GDV Adresskennzeichen.
func parseRole(s string) (gdv.Role, bool) {
	code := ""
	switch norm(s) {
	case "", "policyholder", "vn", "versicherungsnehmer", "kunde":
		code = "01"
	case "payer", "beitragszahler", "zahler":
		code = "03"
	case "insured person", "insured_person", "vp", "versicherte person", "versicherter":
		code = "09"
	case "broker", "vermittler":
		code = "14"
	case "creditor", "sicherungsgläubiger":
		code = "02"
	case "beneficiary", "leistungsempfänger", "bezugsberechtigter":
		code = "05"
	default:
		code = strings.TrimSpace(s)
		if len(code) == 1 {
			code = "0" + code
		}
	}
	return gdv.RoleOf(code)
}

// parseKind reads private or business.
func parseKind(s string) (string, bool) {
	switch norm(s) {
	case "private", "privat", "privatperson", "person", "p":
		return gdv.KindPrivate, true
	case "business", "firma", "gewerbe", "gewerblich", "unternehmen", "company", "f", "g":
		return gdv.KindBusiness, true
	}
	return "", false
}

// parseSalutation reads Herr, Frau, Firma … or the GDV Anredeschlüssel into a GDV code.
func parseSalutation(s string) (gdv.Code, bool) {
	c := ""
	switch norm(s) {
	case "herr", "mr", "mr.", "1":
		c = "1"
	case "frau", "ms", "mrs", "ms.", "mrs.", "2":
		c = "2"
	case "firma", "company", "3":
		c = "3"
	case "herr und frau", "eheleute", "familie", "4":
		c = "4"
	case "", "0", "ohne", "ohne anrede", "divers":
		c = "0"
	case "vereinigung", "verein", "6":
		c = "6"
	default:
		return gdv.Code{Code: strings.TrimSpace(s)}, false
	}
	labels := map[string][2]string{"0": {"ohne Anrede", "No salutation"}, "1": {"Herr", "Mr"}, "2": {"Frau", "Ms"},
		"3": {"Firma", "Company"}, "4": {"Herr und Frau", "Mr and Ms"}, "6": {"Vereinigung", "Association"}}
	return gdv.Code{Code: c, De: labels[c][0], En: labels[c][1]}, true
}

// parseSparte reads a GDV Sparte code ("30", "030"), a label of the catalog, or the short
// German names broker software uses for the main lines ("Hausrat", "Kfz").
func parseSparte(s string) (gdv.Code, bool) {
	t := strings.TrimSpace(s)
	if n, err := strconv.Atoi(t); err == nil && n >= 0 && n < 1000 {
		return gdv.Sparte(strconv.Itoa(1000 + n)[1:])
	}
	short := map[string]string{"leben": "010", "lebensversicherung": "010", "kranken": "020", "pkv": "020", "unfall": "030",
		"haftpflicht": "040", "privathaftpflicht": "041", "phv": "041", "kfz": "050", "kraftfahrt": "050", "auto": "050",
		"rechtsschutz": "070", "feuer": "080", "glas": "110", "hausrat": "130", "wohngebäude": "140", "gebäude": "140",
		"pflege": "028", "bausparen": "580", "technische versicherung": "170", "transport": "190"}
	if code, ok := short[norm(t)]; ok {
		return gdv.Sparte(code)
	}
	for _, c := range gdv.Sparten() {
		if strings.EqualFold(c.De, t) || strings.EqualFold(c.En, t) {
			return c, true
		}
	}
	return gdv.Code{Code: t}, false
}
