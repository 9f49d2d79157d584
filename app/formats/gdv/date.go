package gdv

import (
	"fmt"
	"time"
)

// Date is a calendar date as the GDV writes it (TTMMJJJJ). GDV dates may be partly unknown:
// day or month "00" (a birth date known to the month or year), or "00000000" (unknown, common
// for companies). Day and Month 0 mean unknown; the zero Date is unknown altogether. String
// gives ISO 8601 with reduced precision: "1980-05-12", "1980-05", "1980", "".
type Date struct {
	Year, Month, Day int
}

// IsZero reports an unknown date.
func (d Date) IsZero() bool { return d.Year == 0 }

// Complete reports a date known to the day.
func (d Date) Complete() bool { return d.Year != 0 && d.Month != 0 && d.Day != 0 }

// String is the ISO 8601 form with the precision the file had.
func (d Date) String() string {
	switch {
	case d.Year == 0:
		return ""
	case d.Month == 0:
		return fmt.Sprintf("%04d", d.Year)
	case d.Day == 0:
		return fmt.Sprintf("%04d-%02d", d.Year, d.Month)
	}
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day)
}

// Time returns the date at midnight UTC; ok is false unless the date is complete.
func (d Date) Time() (time.Time, bool) {
	if !d.Complete() {
		return time.Time{}, false
	}
	return time.Date(d.Year, time.Month(d.Month), d.Day, 0, 0, 0, 0, time.UTC), true
}

// MarshalJSON writes the ISO form as a string, or null for an unknown date.
func (d Date) MarshalJSON() ([]byte, error) {
	if d.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + d.String() + `"`), nil
}

// parseDate reads a GDV date of 8 (TTMMJJJJ) or 6 (MMJJJJ) characters. Blank or all zeros is
// an unknown date (ok). Day 00 or month 00 lowers the precision (ok). ok is false for anything
// that is no date: other characters, day 31 in a 30-day month, month 13, a day without month.
func parseDate(b []byte) (d Date, ok bool) {
	blank, zero := true, true
	for _, c := range b {
		if c != ' ' && c != 0 {
			blank = false
		}
		if c != '0' {
			zero = false
		}
	}
	if blank || zero {
		return Date{}, true
	}
	var n [8]int
	if len(b) != 8 && len(b) != 6 {
		return Date{}, false
	}
	for i, c := range b {
		if c < '0' || c > '9' {
			return Date{}, false
		}
		n[i] = int(c - '0')
	}
	if len(b) == 6 {
		d = Date{Month: n[0]*10 + n[1], Year: n[2]*1000 + n[3]*100 + n[4]*10 + n[5]}
	} else {
		d = Date{Day: n[0]*10 + n[1], Month: n[2]*10 + n[3], Year: n[4]*1000 + n[5]*100 + n[6]*10 + n[7]}
	}
	switch {
	case d.Year == 0, d.Month > 12, d.Month == 0 && d.Day != 0:
		return Date{}, false
	case d.Day != 0 && d.Day > daysIn(d.Year, d.Month):
		return Date{}, false
	}
	return d, true
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
