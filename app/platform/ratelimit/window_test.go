package ratelimit

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The acceptance property of the v1 limit: exactly 600 accepted requests in any 60-second
// window, and the 601st gets 429.
const (
	propLimit  = 600
	propPeriod = time.Minute
)

// adversarialTraffic returns request times (after t0, sorted) built to break window
// approximations: full bursts just before and at bucket boundaries, a steady stream over the
// limit, and random arrivals at twice the allowed rate.
func adversarialTraffic() []time.Duration {
	var ts []time.Duration
	add := func(at time.Duration, n int) {
		for range n {
			ts = append(ts, at)
		}
	}
	// t0 is 10:20:00.5, so minute boundaries are at 59.5 s, 119.5 s, ...
	boundary := func(k int) time.Duration { return time.Duration(k)*time.Minute - 500*time.Millisecond }
	add(boundary(1)-time.Millisecond, propLimit) // a full quota in the last millisecond of a minute
	add(boundary(1), 200)                        // and a burst right after the boundary
	for at := boundary(1); at < boundary(3); at += 100 * time.Millisecond {
		add(at, 1) // 10/s: the limit's average rate
	}
	add(boundary(2)+30*time.Second, 400) // half-way through the next bucket
	add(boundary(3)-time.Millisecond, 300)
	add(boundary(3), 300)
	rng := rand.New(rand.NewPCG(1, 2))
	for at := boundary(3); at < boundary(8); {
		at += time.Duration(rng.ExpFloat64() * float64(50*time.Millisecond)) // 20/s
		add(at, 1)
	}
	for k := 4; k < 8; k++ {
		add(boundary(k)-time.Duration(rng.IntN(1000))*time.Millisecond, 150+rng.IntN(400))
	}
	slices.Sort(ts)
	return ts
}

// maxInAnyWindow returns the most admitted times in any half-open interval [a, a+period); the
// busiest one starts at an admission, so checking those suffices.
func maxInAnyWindow(admitted []time.Duration, period time.Duration) (most int, start time.Duration) {
	j := 0
	for i, a := range admitted {
		for j < len(admitted) && admitted[j] < a+period {
			j++
		}
		if j-i > most {
			most, start = j-i, a
		}
	}
	return most, start
}

// TestSliding_NoWindowAdmitsMoreThanLimit replays adversarial traffic through the sliding stores
// (memory on a fake clock, Redis with the script's clock override) and checks every decision
// against the definition: admitted iff fewer than L were admitted in the trailing (t-P, t].
// Memory and Redis must also agree on every number.
func TestSliding_NoWindowAdmitsMoreThanLimit(t *testing.T) {
	t.Parallel()
	traffic := adversarialTraffic()
	results := make(map[string][]Decision)
	for _, b := range backends {
		clock := newFakeClock(t0)
		s := b.new(t, Sliding, clock.Now)
		var admitted []time.Duration
		var ds []Decision
		refused := 0
		for i, at := range traffic {
			clock.Set(t0.Add(at))
			d := mustTake(t, s, "k", 1, propLimit, propPeriod)
			ds = append(ds, d)
			// The definition, by brute force over what was admitted so far.
			inWindow := 0
			for _, a := range admitted {
				if a > at-propPeriod {
					inWindow++
				}
			}
			if want := inWindow < propLimit; d.Allowed != want {
				t.Fatalf("%s: request %d at %v: got allowed=%v with %d admitted in the trailing window, want %v",
					b.name, i, at, d.Allowed, inWindow, want)
			}
			if d.Allowed {
				admitted = append(admitted, at)
				if int64(propLimit-inWindow-1) != d.Remaining {
					t.Fatalf("%s: request %d: got remaining %d, want %d", b.name, i, d.Remaining, propLimit-inWindow-1)
				}
			} else {
				refused++
			}
		}
		most, start := maxInAnyWindow(admitted, propPeriod)
		if most != propLimit {
			t.Errorf("%s: busiest 60 s window [%v, +60s) admitted %d, want exactly %d", b.name, start, most, propLimit)
		}
		t.Logf("%s: %d requests, %d admitted, %d refused, busiest window %d", b.name, len(traffic), len(admitted), refused, most)
		results[b.name] = ds
	}
	mem, red := results["memory"], results["redis"]
	mismatches := 0
	for i := range mem {
		m, r := mem[i], red[i]
		if m.Allowed != r.Allowed || m.Remaining != r.Remaining || m.Reset != r.Reset || m.RetryAfter != r.RetryAfter || !m.At.Equal(r.At) {
			if mismatches < 5 {
				t.Errorf("request %d: memory %+v, redis %+v", i, m, r)
			}
			mismatches++
		}
	}
	if mismatches > 0 {
		t.Errorf("memory and Redis disagree on %d of %d decisions", mismatches, len(mem))
	}
}

// TestSliding_LimitPlusOneIsRefused is the acceptance sentence on the stores directly: 600 in a
// minute pass, the 601st gets refused, spread or bursty.
func TestSliding_LimitPlusOneIsRefused(t *testing.T) {
	t.Parallel()
	spreads := []struct {
		name string
		gap  time.Duration
	}{
		{"burst", 0},
		{"every 99 ms", 99 * time.Millisecond},
	}
	for _, b := range backends {
		for _, sp := range spreads {
			t.Run(b.name+" "+sp.name, func(t *testing.T) {
				t.Parallel()
				clock := newFakeClock(t0)
				s := b.new(t, Sliding, clock.Now)
				for i := range propLimit {
					if d := mustTake(t, s, "k", 1, propLimit, propPeriod); !d.Allowed {
						t.Fatalf("request %d refused", i+1)
					}
					clock.Add(sp.gap)
				}
				if d := mustTake(t, s, "k", 1, propLimit, propPeriod); d.Allowed {
					t.Fatalf("request %d admitted", propLimit+1)
				}
			})
		}
	}
}

// twoBucket is the two-bucket sliding-window estimate of stack.md §5.3 (and Fiber's
// SlidingWindow): est = prev·(1−elapsed/P) + curr; admit iff est+1 ≤ L. It lives here only to
// show why the stores keep a log instead.
type twoBucket struct {
	start      time.Duration // current bucket
	prev, curr int
}

func (b *twoBucket) allow(at time.Duration, limit int, period time.Duration) bool {
	start := at - at%period
	switch {
	case start == b.start+period:
		b.prev, b.curr = b.curr, 0
	case start > b.start+period:
		b.prev, b.curr = 0, 0
	}
	b.start = start
	elapsed := float64(at-start) / float64(period)
	if float64(b.prev)*(1-elapsed)+float64(b.curr)+1 <= float64(limit) {
		b.curr++
		return true
	}
	return false
}

// TestTwoBucketEstimate_OverAdmits verifies the claim the package comment rests on: the weighted
// two-bucket estimate admits more than L in some window of length P, so it cannot give the
// guarantee.
func TestTwoBucketEstimate_OverAdmits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		traffic []time.Duration
	}{
		{"adversarial traffic", adversarialTraffic()},
		{"full quota at a bucket's end, then a steady stream", func() []time.Duration {
			var ts []time.Duration
			for range propLimit {
				ts = append(ts, propPeriod-time.Millisecond)
			}
			for at := propPeriod; at < 2*propPeriod; at += 10 * time.Millisecond {
				ts = append(ts, at)
			}
			return ts
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b twoBucket
			var admitted []time.Duration
			for _, at := range tc.traffic {
				if b.allow(t0.Sub(time.Unix(0, 0))+at, propLimit, propPeriod) { // buckets on the clock minute
					admitted = append(admitted, at)
				}
			}
			most, start := maxInAnyWindow(admitted, propPeriod)
			if most <= propLimit {
				t.Fatalf("two-bucket estimate admitted at most %d in any window, want more than %d", most, propLimit)
			}
			t.Logf("two-bucket estimate admitted %d requests in [%v, +60s), limit %d", most, start, propLimit)
		})
	}
}
