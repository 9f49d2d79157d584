package appointments

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/teambition/rrule-go"
)

// icalWriter writes an RFC 5545 stream: CRLF line ends, lines folded at 75 octets.
type icalWriter struct{ b strings.Builder }

// line writes one content line, folded as RFC 5545 §3.1 says: no physical line longer than 75
// octets, the space that starts a continuation line included (so a continuation carries at
// most 74 octets of the value), and never inside a UTF-8 sequence.
func (w *icalWriter) line(s string) {
	limit := 75
	for len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		w.b.WriteString(s[:cut] + "\r\n ")
		s = s[cut:]
		limit = 74
	}
	w.b.WriteString(s + "\r\n")
}

// text escapes a TEXT value (§3.3.11).
func text(s string) string {
	return strings.NewReplacer(`\`, `\\`, ";", `\;`, ",", `\,`, "\r\n", `\n`, "\n", `\n`, "\r", `\n`).Replace(s)
}

func localStamp(t time.Time) string { return t.Format("20060102T150405") }
func utcStamp(t time.Time) string   { return t.UTC().Format("20060102T150405Z") }

// dateProp writes DTSTART/DTEND/RECURRENCE-ID/EXDATE-style properties in the series' zone (or
// as dates for all-day appointments).
func dateProp(name string, t time.Time, loc *time.Location, allDay bool) string {
	if allDay {
		return name + ";VALUE=DATE:" + t.In(loc).Format("20060102")
	}
	return name + ";TZID=" + loc.String() + ":" + localStamp(t.In(loc))
}

// Calendar renders series as a VCALENDAR: one VEVENT per series with RRULE and EXDATE
// (cancelled occurrences, and instances RFC 5545 §3.3.10 drops in a DST gap, so that clients
// that shift them instead show what the API lists), one VEVENT with RECURRENCE-ID per changed
// occurrence, and a VTIMEZONE per zone. A COUNT becomes the UNTIL of the last occurrence: a
// client counting the gap instance would otherwise end one occurrence early.
func Calendar(name string, series []Series, now time.Time) string {
	var w icalWriter
	w.line("BEGIN:VCALENDAR")
	w.line("VERSION:2.0")
	w.line("PRODID:-//BrokerDesk//Calendar feed//DE")
	w.line("CALSCALE:GREGORIAN")
	w.line("METHOD:PUBLISH")
	w.line("X-WR-CALNAME:" + text(name))
	zones := map[string]bool{}
	for _, s := range series {
		if !s.AllDay && !zones[s.TimeZone] {
			zones[s.TimeZone] = true
			vtimezone(&w, location(s.Appointment), now.Year())
		}
	}
	for _, s := range series {
		event(&w, s, now)
	}
	w.line("END:VCALENDAR")
	return w.b.String()
}

func event(w *icalWriter, s Series, now time.Time) {
	a, loc := s.Appointment, location(s.Appointment)
	uid := a.ID.String() + "@brokerdesk"
	common := func(title, desc, place, typ string) {
		w.line("SUMMARY:" + text(title))
		if desc != "" {
			w.line("DESCRIPTION:" + text(desc))
		}
		if place != "" {
			w.line("LOCATION:" + text(place))
		}
		w.line("CATEGORIES:" + text(typ))
	}
	w.line("BEGIN:VEVENT")
	w.line("UID:" + uid)
	w.line("DTSTAMP:" + utcStamp(a.UpdatedAt))
	w.line("LAST-MODIFIED:" + utcStamp(a.UpdatedAt))
	w.line(dateProp("DTSTART", a.StartAt, loc, a.AllDay))
	w.line(dateProp("DTEND", a.EndAt, loc, a.AllDay))
	common(a.Title, a.Description, a.Location, string(a.Type))
	if r := ruleOf(a); r != nil {
		out := r
		if r.Count() > 0 {
			if last, ok := r.Last(); ok {
				out = r.WithEnd(last.Add(time.Second))
			}
		}
		w.line("RRULE:" + out.String())
		var ex []time.Time
		for _, x := range s.Exceptions {
			if x.Cancelled {
				ex = append(ex, x.OccurrenceStart)
			}
		}
		ex = append(ex, r.gapInstances(now.AddDate(5, 0, 0))...)
		for _, t := range ex {
			w.line(dateProp("EXDATE", t, loc, a.AllDay))
		}
	}
	w.line("END:VEVENT")
	for _, x := range s.Exceptions {
		if x.Cancelled {
			continue
		}
		o := occurrenceOf(a, x.OccurrenceStart, x)
		w.line("BEGIN:VEVENT")
		w.line("UID:" + uid)
		w.line("DTSTAMP:" + utcStamp(x.UpdatedAt))
		w.line(dateProp("RECURRENCE-ID", x.OccurrenceStart, loc, a.AllDay))
		w.line(dateProp("DTSTART", o.StartAt, loc, a.AllDay))
		w.line(dateProp("DTEND", o.EndAt, loc, a.AllDay))
		common(o.Title, o.Description, o.Location, o.Type)
		w.line("END:VEVENT")
	}
}

// gapInstances are the instances rrule-go generates in a DST gap (moved by an hour), which
// Each skips, up to until (or the rule's end).
func (r *Rule) gapInstances(until time.Time) []time.Time {
	o := r.opt
	if r.count > 0 {
		last, ok := r.Last()
		if !ok {
			return nil
		}
		o.Until = last
	}
	rr, err := rrule.NewRRule(o)
	if err != nil {
		return nil
	}
	var out []time.Time
	next := rr.Iterator()
	for {
		t, ok := next()
		if !ok || t.After(until) {
			return out
		}
		if r.skipped(t) {
			out = append(out, t)
		}
	}
}

// vtimezone writes the zone's rules as of year: a STANDARD and a DAYLIGHT part with yearly
// rules derived from the year's transitions (nth or last weekday of the month), or one
// STANDARD part for a zone without DST. Clients that know the TZID use their own database;
// the others get the current rules.
func vtimezone(w *icalWriter, loc *time.Location, year int) {
	w.line("BEGIN:VTIMEZONE")
	w.line("TZID:" + loc.String())
	t := time.Date(year, 1, 1, 0, 0, 0, 0, loc)
	end := t.AddDate(1, 0, 0)
	_, prev := t.Zone()
	found := false
	for ; t.Before(end); t = t.Add(time.Hour) {
		name, off := t.Zone()
		if off == prev {
			continue
		}
		found = true
		kind := "STANDARD"
		if off > prev {
			kind = "DAYLIGHT"
		}
		onset := t.In(time.FixedZone("", prev)) // the transition in the old offset's local time
		day := onset.Day()
		days := time.Date(onset.Year(), onset.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
		n := (day-1)/7 + 1
		if day+7 > days {
			n = -1
		}
		wd := strings.ToUpper(onset.Weekday().String()[:2])
		w.line("BEGIN:" + kind)
		w.line("DTSTART:" + localStamp(firstOnset(1970, onset.Month(), onset.Weekday(), n, onset)))
		w.line(fmt.Sprintf("RRULE:FREQ=YEARLY;BYMONTH=%d;BYDAY=%d%s", int(onset.Month()), n, wd))
		w.line("TZOFFSETFROM:" + offset(prev))
		w.line("TZOFFSETTO:" + offset(off))
		w.line("TZNAME:" + name)
		w.line("END:" + kind)
		prev = off
	}
	if !found {
		name, off := t.Zone()
		w.line("BEGIN:STANDARD")
		w.line("DTSTART:19700101T000000")
		w.line("TZOFFSETFROM:" + offset(off))
		w.line("TZOFFSETTO:" + offset(off))
		w.line("TZNAME:" + name)
		w.line("END:STANDARD")
	}
	w.line("END:VTIMEZONE")
}

// firstOnset is the nth (or last, n = -1) weekday wd of month in year, at the clock of onset.
func firstOnset(year int, month time.Month, wd time.Weekday, n int, onset time.Time) time.Time {
	h, m, s := onset.Clock()
	if n > 0 {
		d := time.Date(year, month, 1, h, m, s, 0, time.UTC)
		for d.Weekday() != wd {
			d = d.AddDate(0, 0, 1)
		}
		return d.AddDate(0, 0, 7*(n-1))
	}
	d := time.Date(year, month+1, 0, h, m, s, 0, time.UTC)
	for d.Weekday() != wd {
		d = d.AddDate(0, 0, -1)
	}
	return d
}

func offset(sec int) string {
	sign := "+"
	if sec < 0 {
		sign, sec = "-", -sec
	}
	return fmt.Sprintf("%s%02d%02d", sign, sec/3600, sec%3600/60)
}
