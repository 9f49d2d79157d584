package ratelimit

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ulule/limiter/v3"
)

// MemoryStore counts in process memory, under one mutex: for tests and single-instance
// deployments (each process has its own count). Its arithmetic is the Redis scripts', in Go.
type MemoryStore struct {
	viaTake
	window Window
	now    func() time.Time

	mu        sync.Mutex
	logs      map[string]*memLog   // Sliding
	fixed     map[string]*memFixed // FixedClock
	seq       int64                // sequence numbers of log entries, unique in the store
	lastSweep int64                // µs
}

type logEntry struct{ at, id int64 }

// memLog is one key's admitted requests, oldest first.
type memLog struct {
	entries []logEntry
	period  int64 // µs, of the last rate used: the sweep drops the log once it has drained
}

type memFixed struct {
	start, count, period int64
}

// sweepEvery is how often (by the store's clock) the memory stores drop drained keys.
const sweepEvery = time.Minute

// NewMemorySlidingStore returns a sliding-window log in memory.
func NewMemorySlidingStore(opts ...StoreOption) *MemoryStore {
	return newMemoryStore(Sliding, opts)
}

// NewMemoryFixedStore returns a clock-aligned fixed-window counter in memory.
func NewMemoryFixedStore(opts ...StoreOption) *MemoryStore {
	return newMemoryStore(FixedClock, opts)
}

func newMemoryStore(w Window, opts []StoreOption) *MemoryStore {
	c := newStoreConfig(opts)
	if c.now == nil {
		c.now = time.Now
	}
	s := &MemoryStore{window: w, now: c.now, logs: map[string]*memLog{}, fixed: map[string]*memFixed{}}
	s.viaTake = viaTake{s.Take}
	return s
}

// Window reports how s counts.
func (s *MemoryStore) Window() Window { return s.window }

// Take implements Store.
func (s *MemoryStore) Take(_ context.Context, key string, n int64, rate limiter.Rate) (Decision, error) {
	if err := checkRate(rate, n); err != nil {
		return Decision{}, err
	}
	now := s.now().UnixMicro()
	period := rate.Period.Microseconds()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	var r raw
	if s.window == Sliding {
		r = s.takeLog(key, n, rate.Limit, period, now)
	} else {
		r = s.takeFixed(key, n, rate.Limit, period, now)
	}
	return r.decision(rate.Limit), nil
}

// takeLog is the sliding script (redis.go) in Go.
func (s *MemoryStore) takeLog(key string, n, limit, period, now int64) raw {
	l := s.logs[key]
	if l != nil {
		l.prune(now, period)
	}
	var entries []logEntry
	if l != nil {
		entries = l.entries
	}
	r := raw{now: now, count: int64(len(entries))}
	switch {
	case r.count+n <= limit:
		r.admitted = true
		if n > 0 {
			if l == nil {
				l = &memLog{}
				s.logs[strings.Clone(key)] = l // Fiber reuses the memory behind c.Params and headers
			}
			r.tok = token{at: now, first: s.seq + 1, n: n}
			for range n {
				s.seq++
				l.insert(logEntry{at: now, id: s.seq})
			}
			l.period = period
			entries = l.entries
			r.count += n
		}
	case n <= limit:
		// The request fits once the count+n-limit oldest entries have left the window.
		r.retry = entries[r.count+n-limit-1].at + period - now
	default:
		r.retry = period
	}
	switch {
	case r.count >= limit:
		r.reset = entries[r.count-limit].at + period - now
	case r.count > 0:
		r.reset = entries[r.count-1].at + period - now
	}
	return r
}

// prune drops the entries at or before now-period: an entry at t counts in (t, t+period).
func (l *memLog) prune(now, period int64) {
	i, _ := slices.BinarySearchFunc(l.entries, now-period, func(e logEntry, t int64) int {
		if e.at <= t {
			return -1
		}
		return 1
	})
	if i > 0 {
		l.entries = slices.Delete(l.entries, 0, i)
	}
}

// insert keeps entries sorted by time even if the clock stepped back.
func (l *memLog) insert(e logEntry) {
	n := len(l.entries)
	if n == 0 || l.entries[n-1].at <= e.at {
		l.entries = append(l.entries, e)
		return
	}
	i, _ := slices.BinarySearchFunc(l.entries, e.at, func(x logEntry, t int64) int {
		if x.at <= t {
			return -1
		}
		return 1
	})
	l.entries = slices.Insert(l.entries, i, e)
}

// takeFixed is the fixed-window script (redis.go) in Go.
func (s *MemoryStore) takeFixed(key string, n, limit, period, now int64) raw {
	start := now - mod(now, period)
	w := s.fixed[key]
	if w != nil && w.start != start {
		w.start, w.count = start, 0
	}
	r := raw{now: now, reset: start + period - now}
	if w != nil {
		r.count = w.count
	}
	switch {
	case r.count+n <= limit:
		r.admitted = true
		if n > 0 {
			if w == nil {
				w = &memFixed{start: start}
				s.fixed[strings.Clone(key)] = w
			}
			w.count += n
			w.period = period
			r.count = w.count
			r.tok = token{at: start, n: n}
		}
	default:
		r.retry = r.reset
	}
	return r
}

// mod is the non-negative remainder, so windows before 1970 (fake clocks) align too.
func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// sweep drops drained keys, at most once per sweepEvery.
func (s *MemoryStore) sweep(now int64) {
	if now-s.lastSweep < sweepEvery.Microseconds() && now >= s.lastSweep {
		return
	}
	s.lastSweep = now
	for k, l := range s.logs {
		if len(l.entries) == 0 || l.entries[len(l.entries)-1].at <= now-l.period {
			delete(s.logs, k)
		}
	}
	for k, w := range s.fixed {
		if w.start+w.period <= now {
			delete(s.fixed, k)
		}
	}
}

// Refund implements Store.
func (s *MemoryStore) Refund(_ context.Context, key string, _ limiter.Rate, d Decision) error {
	t := d.token
	if t.n == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.window == Sliding {
		if l := s.logs[key]; l != nil {
			l.entries = slices.DeleteFunc(l.entries, func(e logEntry) bool {
				return e.id >= t.first && e.id < t.first+t.n
			})
		}
		return nil
	}
	if w := s.fixed[key]; w != nil && w.start == t.at {
		w.count = max(w.count-t.n, 0)
	}
	return nil
}

// Reset implements limiter.Store: it forgets key's count.
func (s *MemoryStore) Reset(_ context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	if err := checkRate(rate, 0); err != nil {
		return limiter.Context{}, err
	}
	now := s.now()
	s.mu.Lock()
	delete(s.logs, key)
	delete(s.fixed, key)
	s.mu.Unlock()
	return limiter.Context{Limit: rate.Limit, Remaining: rate.Limit, Reset: now.Unix()}, nil
}
