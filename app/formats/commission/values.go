package commission

import (
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// parseAmount reads an amount as German statements write it: "1.234,56", "-12,50", "12,50-"
// (a trailing minus, as SAP exports write it), "1234,5", "411", with "€"/"EUR" and blanks
// around. Without a comma, a single dot followed by one or two digits is a decimal point
// ("-12.50", what a program's export writes); dots before groups of three digits are
// thousands separators ("1.234" is 1234). More than two fraction digits are refused: the
// amount would have to be rounded.
func parseAmount(s string) (schematype.Money, bool) {
	s = strings.TrimSpace(s)
	for _, c := range []string{"€", "EUR"} {
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, c), c))
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '\'' {
			return -1
		}
		return r
	}, s)
	neg := false
	switch {
	case strings.HasSuffix(s, "-") && !strings.HasPrefix(s, "-"):
		neg, s = true, strings.TrimSuffix(s, "-")
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	if s == "" {
		return schematype.Money{}, false
	}
	intPart, frac, hasComma := strings.Cut(s, ",")
	if !hasComma && strings.Count(s, ".") == 1 {
		if i := strings.IndexByte(s, '.'); len(s)-i-1 <= 2 {
			intPart, frac, hasComma = s[:i], s[i+1:], true
		}
	}
	if hasComma && (frac == "" || len(frac) > 2 || !digits(frac)) {
		return schematype.Money{}, false
	}
	if strings.Contains(intPart, ".") {
		groups := strings.Split(intPart, ".")
		for i, g := range groups {
			if (i == 0 && (len(g) == 0 || len(g) > 3)) || (i > 0 && len(g) != 3) {
				return schematype.Money{}, false
			}
		}
		intPart = strings.ReplaceAll(intPart, ".", "")
	}
	if intPart == "" || !digits(intPart) || len(intPart) > 12 { // numeric(14,2)
		return schematype.Money{}, false
	}
	v := intPart
	if frac != "" {
		v += "." + frac
	}
	if neg {
		v = "-" + v
	}
	m, err := schematype.ParseMoney(v)
	return m, err == nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseDate reads "31.12.2024", "1.2.2024", "31.12.24" (a booking date: 20yy) and
// "2024-12-31". Impossible dates (31.02.) are refused, not rolled over.
func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	var d, m, y string
	switch {
	case strings.Count(s, ".") == 2:
		p := strings.Split(s, ".")
		d, m, y = p[0], p[1], p[2]
		if len(y) == 2 {
			y = "20" + y
		}
	case strings.Count(s, "-") == 2:
		p := strings.Split(s, "-")
		y, m, d = p[0], p[1], p[2]
	default:
		return time.Time{}, false
	}
	if len(y) != 4 || len(m) < 1 || len(m) > 2 || len(d) < 1 || len(d) > 2 || !digits(y) || !digits(m) || !digits(d) {
		return time.Time{}, false
	}
	yy, _ := strconv.Atoi(y)
	mm, _ := strconv.Atoi(m)
	dd, _ := strconv.Atoi(d)
	return validDate(yy, mm, dd)
}

// validDate is the date at UTC midnight when it exists.
func validDate(y, m, d int) (time.Time, bool) {
	if y < 1900 || y > 2200 || m < 1 || m > 12 || d < 1 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d || int(t.Month()) != m {
		return time.Time{}, false
	}
	return t, true
}

// typeOfText maps a booking kind as statements name it ("Abschlussprovision", "Storno",
// "Courtage", "Korrekturbuchung", "Beitrag") to an entry type; ok is false for text that
// names none of them.
func typeOfText(s string) (string, bool) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch {
	case t == "":
		return "", false
	case strings.Contains(t, "storno") || strings.Contains(t, "rückbelastung") || strings.Contains(t, "rueckbelastung") || strings.Contains(t, "cancel"):
		return TypeCancellation, true
	case strings.Contains(t, "korrektur") || strings.Contains(t, "correction") || strings.Contains(t, "berichtigung"):
		return TypeCorrection, true
	case strings.Contains(t, "provision") || strings.Contains(t, "courtage") || strings.Contains(t, "commission") || strings.Contains(t, "vergütung") || strings.Contains(t, "verguetung"):
		return TypeCommission, true
	case strings.Contains(t, "beitrag") || strings.Contains(t, "prämie") || strings.Contains(t, "praemie") || strings.Contains(t, "premium"):
		return TypePremium, true
	case t == "sonstiges" || t == "other":
		return TypeOther, true
	}
	return "", false
}

// typeBySign is the type of a booking whose source names none: a negative amount takes
// commission back (cancellation), anything else is commission.
func typeBySign(m schematype.Money) string {
	if m.Sign() < 0 {
		return TypeCancellation
	}
	return TypeCommission
}
