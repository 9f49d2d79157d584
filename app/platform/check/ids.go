package check

import (
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// The German and European identifiers a brokerage records (bank details, tax and social
// insurance numbers): shape and check digit only, blanks and case forgiven. The contact field
// catalog checks its formatted fields with them; any area that takes such a number does too.

// ibanLengths are the IBAN lengths of the SEPA countries; other countries need 15-34 characters.
var ibanLengths = map[string]int{"DE": 22, "AT": 20, "CH": 21, "NL": 18, "BE": 16, "FR": 27, "IT": 27, "ES": 24,
	"LU": 20, "PL": 28, "DK": 18, "SE": 24, "NO": 15, "FI": 18, "IE": 22, "PT": 25, "GB": 22, "LI": 21, "CZ": 24}

var (
	reIBAN = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$`)
	reBIC  = regexp.MustCompile(`^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$`)
	reSVNR = regexp.MustCompile(`^[0-9]{2}(0[1-9]|[12][0-9]|3[01]|[5-8][0-9])(0[1-9]|1[0-2])[0-9]{2}[A-Z][0-9]{3}$`)
)

// Compact is s upper case without blanks: the canonical form of an IBAN, a BIC, a VAT id or a
// social insurance number.
func Compact(s string) string {
	return strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
}

// ValidIBAN checks an IBAN (spaces allowed): shape, the country's length and the ISO 7064
// MOD 97-10 checksum.
func ValidIBAN(s string) bool {
	s = Compact(s)
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
func ValidBIC(s string) bool { return reBIC.MatchString(Compact(s)) }

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
func ValidSVNR(s string) bool { return reSVNR.MatchString(Compact(s)) }
