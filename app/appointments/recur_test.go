package appointments

import (
	"testing"
	"time"
)

func berlin(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// A weekly Monday 09:00 Europe/Berlin series stays 09:00 local across both switches of 2026
// (29 March, 25 October): 08:00 UTC in winter, 07:00 UTC in summer.
func TestRule_WeeklyAcrossDST(t *testing.T) {
	loc := berlin(t)
	start := time.Date(2026, 3, 16, 9, 0, 0, 0, loc)
	r, code, err := ParseRule("FREQ=WEEKLY;BYDAY=MO", start)
	if err != nil {
		t.Fatal(code, err)
	}
	got := r.Between(time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC), time.Hour)
	if len(got) != 34 {
		t.Fatalf("%d occurrences, want 34", len(got))
	}
	for _, o := range got {
		if h, m, _ := o.In(loc).Clock(); h != 9 || m != 0 || o.In(loc).Weekday() != time.Monday {
			t.Errorf("%v is not Monday 09:00 local", o.In(loc))
		}
		wantUTC := 7
		if o.Before(time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)) || !o.Before(time.Date(2026, 10, 25, 1, 0, 0, 0, time.UTC)) {
			wantUTC = 8
		}
		if o.UTC().Hour() != wantUTC {
			t.Errorf("%v is %02d:00 UTC, want %02d:00", o.In(loc), o.UTC().Hour(), wantUTC)
		}
	}
}

// A daily 02:30 series has no instance on 29 March 2026 (02:00-03:00 does not exist in
// Europe/Berlin): RFC 5545 §3.3.10 says it is ignored and not counted, so COUNT=4 from 27
// March ends on 31 March. The October fall-back day keeps its 02:30 (the first one, CEST).
func TestRule_DailyInSpringGap(t *testing.T) {
	loc := berlin(t)
	r, _, err := ParseRule("FREQ=DAILY;COUNT=4", time.Date(2026, 3, 27, 2, 30, 0, 0, loc))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	r.Each(func(_ int, x time.Time) bool {
		got = append(got, x.In(loc).Format("01-02 15:04 MST"))
		return true
	})
	want := []string{"03-27 02:30 CET", "03-28 02:30 CET", "03-30 02:30 CEST", "03-31 02:30 CEST"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("got %v, want %v", got, want)
		}
	}
	fall, _, _ := ParseRule("FREQ=DAILY;COUNT=3", time.Date(2026, 10, 24, 2, 30, 0, 0, loc))
	n := 0
	fall.Each(func(_ int, x time.Time) bool {
		n++
		if x.In(loc).Hour() != 2 {
			t.Errorf("fall-back instance %v", x.In(loc))
		}
		return true
	})
	if n != 3 {
		t.Errorf("%d fall-back instances, want 3", n)
	}
}

func TestParseRule_Errors(t *testing.T) {
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, berlin(t))
	for in, code := range map[string]string{
		"":                                     "invalid_recurrence",
		"FREQ=SOMETIMES":                       "invalid_recurrence",
		"FREQ=WEEKLY;BYDAY=XX":                 "invalid_recurrence",
		"FREQ=HOURLY":                          "unsupported_recurrence",
		"FREQ=DAILY;BYHOUR=9":                  "unsupported_recurrence",
		"DTSTART:20260101T000000Z\nFREQ=DAILY": "invalid_recurrence",
		"FREQ=DAILY;COUNT=1001":                "too_many",
		"FREQ=DAILY;COUNT=2;UNTIL=20270101T000000Z": "invalid_recurrence",
	} {
		if _, got, err := ParseRule(in, start); err == nil || got != code {
			t.Errorf("%q: code %q (%v), want %s", in, got, err, code)
		}
	}
	for _, ok := range []string{"RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=10", "freq=monthly;bysetpos=-1;byday=mo,tu,we,th,fr", "FREQ=YEARLY;UNTIL=20300101"} {
		if _, code, err := ParseRule(ok, start); err != nil {
			t.Errorf("%q: %s %v", ok, code, err)
		}
	}
}
