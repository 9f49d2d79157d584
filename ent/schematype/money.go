package schematype

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Money is an exact amount in EUR with two fraction digits. On the wire it is a decimal string
// ("1234.50"); in PostgreSQL numeric(14,2). It is never a float.
type Money struct{ d decimal.Decimal }

// ParseMoney reads "1234.5", "1234.50" or "-3"; more than two fraction digits, exponents and
// anything that is not a plain decimal are errors.
func ParseMoney(s string) (Money, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, "eE_ ,") {
		return Money{}, fmt.Errorf("money %q: want a decimal string like \"1234.50\"", s)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return Money{}, fmt.Errorf("money %q: want a decimal string like \"1234.50\"", s)
	}
	if d.Exponent() < -2 && !d.Equal(d.Round(2)) {
		return Money{}, fmt.Errorf("money %q: at most two fraction digits", s)
	}
	return Money{d: d.Round(2)}, nil
}

// MustMoney is ParseMoney for constants.
func MustMoney(s string) Money {
	m, err := ParseMoney(s)
	if err != nil {
		panic(err)
	}
	return m
}

// String is the amount with exactly two fraction digits.
func (m Money) String() string { return m.d.StringFixed(2) }

// German is the amount as German documents print it: "-1.234,56 €" (generated PDFs, the
// advice protocol).
func (m Money) German() string {
	s := m.String()
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(d)
	}
	return sign + b.String() + "," + frac + " €"
}

// Add returns m + o, exactly.
func (m Money) Add(o Money) Money { return Money{d: m.d.Add(o.d)} }

// Sub returns m - o, exactly.
func (m Money) Sub(o Money) Money { return Money{d: m.d.Sub(o.d)} }

// Sign is -1, 0 or 1 as m is negative, zero or positive.
func (m Money) Sign() int { return m.d.Sign() }

// Div returns m / n rounded half away from zero to cents (n > 0): a yearly amount as monthly.
func (m Money) Div(n int64) Money { return Money{d: m.d.DivRound(decimal.NewFromInt(n), 2)} }

// Equal reports whether the amounts are equal.
func (m Money) Equal(o Money) bool { return m.d.Equal(o.d) }

// MarshalJSON writes the decimal string.
func (m Money) MarshalJSON() ([]byte, error) { return json.Marshal(m.String()) }

// UnmarshalJSON accepts only a decimal string: a JSON number would pass through a float
// somewhere on the client's side.
func (m *Money) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("money: want a decimal string like \"1234.50\"")
	}
	v, err := ParseMoney(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Value stores the amount as numeric text.
func (m Money) Value() (driver.Value, error) { return m.String(), nil }

// Scan reads numeric from PostgreSQL.
func (m *Money) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	case nil:
		*m = Money{}
		return nil
	default:
		return fmt.Errorf("money: cannot scan %T", src)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return err
	}
	*m = Money{d: d.Round(2)}
	return nil
}

// Decimal returns the amount as a decimal.
func (m Money) Decimal() decimal.Decimal { return m.d }

// MoneyOf returns d rounded to cents (half away from zero).
func MoneyOf(d decimal.Decimal) Money { return Money{d: d.Round(2)} }
