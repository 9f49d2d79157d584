package appointments

import (
	"fmt"
	"strings"
	"time"

	"github.com/teambition/rrule-go"
)

// MaxCount bounds COUNT of a recurrence; a series without an end is expanded only inside the
// window a list asks for.
const MaxCount = 1000

// Rule is a parsed recurrence: an RFC 5545 RRULE anchored at a series' start in its time zone.
// github.com/teambition/rrule-go does the RFC 5545 arithmetic (BYDAY, BYSETPOS, BYMONTHDAY,
// INTERVAL, UNTIL...): it generates every instance with time.Date in the location of DTSTART,
// so a weekly 09:00 Europe/Berlin stays 09:00 local across DST switches.
type Rule struct {
	opt   rrule.ROption // Count and Dtstart cleared: Rule counts itself (see Each)
	count int
	start time.Time // in the series' zone
}

// ParseRule reads an RRULE value (with or without the "RRULE:" prefix) for a series starting
// at start (whose Location is the series' zone). A local UNTIL is read in that zone. The codes
// are invalid_recurrence (not an RRULE), unsupported_recurrence (a part the service does not
// take: DTSTART, which is startAt; sub-daily frequencies and BYHOUR/BYMINUTE/BYSECOND, since
// an appointment's time of day is its startAt) and too_many (COUNT above MaxCount).
func ParseRule(s string, start time.Time) (*Rule, string, error) {
	v := strings.ToUpper(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "RRULE:")))
	if v == "" || strings.ContainsAny(v, "\n\r") {
		return nil, "invalid_recurrence", fmt.Errorf("must be one RRULE value, e.g. FREQ=WEEKLY;BYDAY=MO;COUNT=10")
	}
	if strings.Contains(v, "DTSTART") {
		return nil, "unsupported_recurrence", fmt.Errorf("DTSTART is the appointment's startAt")
	}
	opt, err := rrule.StrToROptionInLocation(v, start.Location())
	if err != nil {
		return nil, "invalid_recurrence", fmt.Errorf("is not an RFC 5545 RRULE: %v", err)
	}
	switch {
	case opt.Freq != rrule.DAILY && opt.Freq != rrule.WEEKLY && opt.Freq != rrule.MONTHLY && opt.Freq != rrule.YEARLY:
		return nil, "unsupported_recurrence", fmt.Errorf("FREQ must be DAILY, WEEKLY, MONTHLY or YEARLY")
	case len(opt.Byhour) > 0 || len(opt.Byminute) > 0 || len(opt.Bysecond) > 0:
		return nil, "unsupported_recurrence", fmt.Errorf("BYHOUR, BYMINUTE and BYSECOND are not supported: the time of day is startAt's")
	case opt.Count < 0 || opt.Count > MaxCount:
		return nil, "too_many", fmt.Errorf("COUNT must be from 1 to %d", MaxCount)
	case opt.Count > 0 && !opt.Until.IsZero():
		return nil, "invalid_recurrence", fmt.Errorf("COUNT and UNTIL must not both be given (RFC 5545)")
	case opt.Interval < 0 || opt.Interval > 1000:
		return nil, "invalid_recurrence", fmt.Errorf("INTERVAL must be from 1 to 1000")
	}
	r := &Rule{opt: *opt, count: opt.Count, start: start}
	r.opt.Count = 0
	r.opt.Dtstart = start
	if _, err := rrule.NewRRule(r.opt); err != nil {
		return nil, "invalid_recurrence", fmt.Errorf("is not an RFC 5545 RRULE: %v", err)
	}
	return r, "", nil
}

// String is the rule's RRULE value (COUNT or UNTIL in UTC included).
func (r *Rule) String() string {
	o := r.opt
	o.Dtstart = time.Time{}
	o.Count = r.count
	return o.RRuleString()
}

// Count is the rule's COUNT (0: none).
func (r *Rule) Count() int { return r.count }

// Until is the rule's UNTIL (zero: none).
func (r *Rule) Until() time.Time { return r.opt.Until }

// Bounded reports whether the series ends (COUNT or UNTIL).
func (r *Rule) Bounded() bool { return r.count > 0 || !r.opt.Until.IsZero() }

// WithEnd returns the rule ending with the last occurrence before t (UNTIL = t - 1s, no COUNT).
func (r *Rule) WithEnd(t time.Time) *Rule {
	c := *r
	c.count = 0
	c.opt.Until = t.Add(-time.Second).UTC()
	return &c
}

// WithCount returns the rule with COUNT n (and no UNTIL).
func (r *Rule) WithCount(n int) *Rule {
	c := *r
	c.count = n
	c.opt.Until = time.Time{}
	return &c
}

// At returns the same rule anchored at start.
func (r *Rule) At(start time.Time) *Rule {
	c := *r
	c.start = start
	c.opt.Dtstart = start
	return &c
}

// skipped reports whether the instance t does not exist as local time: RFC 5545 §3.3.10 says
// such instances "MUST be ignored and MUST NOT be counted". rrule-go builds instances with
// time.Date, which moves a nonexistent 02:30 to 03:30 (the offset before the gap, §3.3.5):
// the wall clock then differs from the series' time of day, which no supported rule changes.
func (r *Rule) skipped(t time.Time) bool {
	h, m, s := t.Clock()
	h0, m0, s0 := r.start.Clock()
	return h != h0 || m != m0 || s != s0
}

// Each calls f with every occurrence start, in order, until f returns false. Instances in a
// DST gap are skipped and not counted; COUNT ends the walk.
func (r *Rule) Each(f func(i int, t time.Time) bool) {
	rr, err := rrule.NewRRule(r.opt)
	if err != nil {
		return // ParseRule checked it
	}
	next := rr.Iterator()
	n := 0
	for {
		t, ok := next()
		if !ok {
			return
		}
		if r.skipped(t) {
			continue
		}
		if r.count > 0 && n >= r.count {
			return
		}
		if !f(n, t) {
			return
		}
		n++
	}
}

// Between returns the starts of the occurrences of duration d that overlap [from, to).
func (r *Rule) Between(from, to time.Time, d time.Duration) []time.Time {
	var out []time.Time
	if r.count == 0 {
		// Unbounded by COUNT: rrule-go jumps to the window instead of walking from the start.
		rr, err := rrule.NewRRule(r.opt)
		if err != nil {
			return nil
		}
		for _, t := range rr.Between(from.Add(-d), to, true) {
			if !r.skipped(t) && t.Before(to) && t.Add(d).After(from) {
				out = append(out, t)
			}
		}
		return out
	}
	r.Each(func(_ int, t time.Time) bool {
		if !t.Before(to) {
			return false
		}
		if t.Add(d).After(from) {
			out = append(out, t)
		}
		return true
	})
	return out
}

// Index returns the position of occurrence t in the series (-1 if t is none).
func (r *Rule) Index(t time.Time) int {
	idx := -1
	r.Each(func(i int, x time.Time) bool {
		if x.Equal(t) {
			idx = i
			return false
		}
		return x.Before(t)
	})
	return idx
}

// Last returns the start of the last occurrence of a bounded series (ok false when the series
// has none or never ends).
func (r *Rule) Last() (time.Time, bool) {
	if !r.Bounded() {
		return time.Time{}, false
	}
	var last time.Time
	found := false
	r.Each(func(_ int, t time.Time) bool {
		last, found = t, true
		return true
	})
	return last, found
}
