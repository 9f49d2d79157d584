package gdv

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Decimal is an exact decimal number, units × 10^-scale. GDV amounts carry implied decimal
// places ("000000041141" with two places is 411.41); Decimal keeps them exact and keeps the
// scale (4806.00 stays "4806.00"). Never a float. The zero value is 0 with scale 0.
type Decimal struct {
	units int64
	scale uint8
}

// maxScale bounds the scale: 10^18 still fits int64.
const maxScale = 18

// NewDecimal returns units × 10^-scale. scale is clamped to 0…18.
func NewDecimal(units int64, scale int) Decimal {
	return Decimal{units: units, scale: uint8(min(max(scale, 0), maxScale))}
}

// ParseDecimal reads "411.41", "-0.5", "4806": an optional sign, digits, an optional point and
// fraction digits (at most 18 in all).
func ParseDecimal(s string) (Decimal, error) {
	neg := false
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	intPart, frac, hasPoint := strings.Cut(s, ".")
	if intPart == "" || (hasPoint && frac == "") || len(intPart)+len(frac) > maxScale {
		return Decimal{}, errors.New("not a decimal number")
	}
	var u int64
	for _, c := range intPart + frac {
		if c < '0' || c > '9' {
			return Decimal{}, errors.New("not a decimal number")
		}
		u = u*10 + int64(c-'0')
	}
	if neg {
		u = -u
	}
	return Decimal{units: u, scale: uint8(len(frac))}, nil
}

// Units and Scale give the exact value: Units() × 10^-Scale().
func (d Decimal) Units() int64 { return d.units }

// Scale is the number of decimal places.
func (d Decimal) Scale() int { return int(d.scale) }

// IsZero reports whether the value is 0.
func (d Decimal) IsZero() bool { return d.units == 0 }

// Sign is -1, 0 or 1.
func (d Decimal) Sign() int {
	switch {
	case d.units < 0:
		return -1
	case d.units > 0:
		return 1
	}
	return 0
}

// String formats the value with exactly Scale() decimal places: "411.41", "-0.50", "7".
func (d Decimal) String() string {
	u := d.units
	neg := u < 0
	var digits string
	if neg {
		if u == math.MinInt64 {
			digits = "9223372036854775808"
		} else {
			digits = strconv.FormatInt(-u, 10)
		}
	} else {
		digits = strconv.FormatInt(u, 10)
	}
	sc := int(d.scale)
	if sc > 0 {
		if len(digits) <= sc {
			digits = strings.Repeat("0", sc-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-sc] + "." + digits[len(digits)-sc:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// MarshalJSON writes the value as a JSON string ("411.41"), the API's Decimal.
func (d Decimal) MarshalJSON() ([]byte, error) {
	return []byte(`"` + d.String() + `"`), nil
}

// UnmarshalJSON reads a JSON string or number.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := ParseDecimal(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Rescale returns the value with scale places; ok is false when digits would be lost or the
// value overflows.
func (d Decimal) Rescale(scale int) (Decimal, bool) {
	if scale < 0 || scale > maxScale {
		return d, false
	}
	u := d.units
	for s := int(d.scale); s < scale; s++ {
		if u > math.MaxInt64/10 || u < math.MinInt64/10 {
			return d, false
		}
		u *= 10
	}
	for s := int(d.scale); s > scale; s-- {
		if u%10 != 0 {
			return d, false
		}
		u /= 10
	}
	return Decimal{units: u, scale: uint8(scale)}, true
}

// Add returns d+o at the larger scale of the two; ok is false on overflow.
func (d Decimal) Add(o Decimal) (Decimal, bool) {
	sc := max(int(d.scale), int(o.scale))
	a, ok1 := d.Rescale(sc)
	b, ok2 := o.Rescale(sc)
	if !ok1 || !ok2 {
		return d, false
	}
	s := a.units + b.units
	if (b.units > 0 && s < a.units) || (b.units < 0 && s > a.units) {
		return d, false
	}
	return Decimal{units: s, scale: uint8(sc)}, true
}

// MulInt returns d×n; ok is false on overflow.
func (d Decimal) MulInt(n int64) (Decimal, bool) {
	if d.units == 0 || n == 0 {
		return Decimal{scale: d.scale}, true
	}
	p := d.units * n
	if p/n != d.units || (d.units == -1 && n == math.MinInt64) || (n == -1 && d.units == math.MinInt64) {
		return d, false
	}
	return Decimal{units: p, scale: d.scale}, true
}

// Cmp compares the values: -1, 0 or 1. Scale does not matter (4806 equals 4806.00).
func (d Decimal) Cmp(o Decimal) int {
	sc := max(int(d.scale), int(o.scale))
	a, ok1 := d.Rescale(sc)
	b, ok2 := o.Rescale(sc)
	if !ok1 || !ok2 { // only at the edge of int64: compare the integer parts, then give up on ties
		ai, bi := d.units/pow10(int(d.scale)), o.units/pow10(int(o.scale))
		switch {
		case ai < bi:
			return -1
		case ai > bi:
			return 1
		}
		return 0
	}
	switch {
	case a.units < b.units:
		return -1
	case a.units > b.units:
		return 1
	}
	return 0
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// decimalDigits reads a GDV number field: digits with implied decimal places. Leading blanks
// count as zeros (some senders right-align with blanks); an all-blank field is empty (ok true,
// present false). ok is false for anything else (trailing blanks too: "123  " could mean 123
// or 12300), or for more than 18 significant digits.
func decimalDigits(b []byte, places int) (d Decimal, present, ok bool) {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == 0) {
		i++
	}
	j := len(b)
	if i == j {
		return Decimal{scale: uint8(places)}, false, true
	}
	if j-i > maxScale {
		// longer fields are fine as long as the excess is leading zeros
		for i < j && j-i > maxScale && b[i] == '0' {
			i++
		}
		if j-i > maxScale {
			return Decimal{}, true, false
		}
	}
	var u int64
	for _, c := range b[i:j] {
		if c < '0' || c > '9' {
			return Decimal{}, true, false
		}
		u = u*10 + int64(c-'0')
	}
	return Decimal{units: u, scale: uint8(places)}, true, true
}
