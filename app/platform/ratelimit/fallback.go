package ratelimit

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Outage logging and probing while Redis is unreachable (see the package comment).
const (
	// LogEvery is the longest silence while an outage lasts: one line when it starts, one at most
	// this often while it lasts, one when it ends.
	LogEvery = 30 * time.Second
	// ProbeEvery is how often one request tries Redis again during an outage; the others go
	// straight to memory, so a hung Redis costs one request per probe its timeout, not each.
	ProbeEvery = time.Second
)

// health is the state of the Redis both limiters share: up, or down since when. It logs the
// outage's start, a reminder at most every LogEvery, and its end, through log.
type health struct {
	log  zerolog.Logger
	now  func() time.Time
	down atomic.Bool

	mu        sync.Mutex
	since     time.Time // start of the outage
	lastLog   time.Time
	nextProbe time.Time
	inMemory  int64 // requests counted in memory since the last line
	lastErr   string
	onChange  func(down bool)
}

func newHealth(log zerolog.Logger) *health { return &health{log: log, now: time.Now} }

// skip reports whether a request should not try Redis now: an outage is on and the next probe
// is not due. The caller then counts in memory.
func (h *health) skip() bool {
	if !h.down.Load() {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	if !h.down.Load() || !now.Before(h.nextProbe) {
		h.nextProbe = now.Add(ProbeEvery) // this request probes; the others wait for the next
		return false
	}
	h.inMemory++
	h.remind(now)
	return true
}

// failed records a failed Redis call: the outage starts (logged) or goes on.
func (h *health) failed(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	h.lastErr = err.Error()
	h.inMemory++
	h.nextProbe = now.Add(ProbeEvery)
	if h.down.Load() {
		h.remind(now)
		return
	}
	h.down.Store(true)
	h.since, h.lastLog, h.inMemory = now, now, 1
	h.log.Error().Err(err).Msg("redis unreachable: rate limits counted in memory per process until it answers again")
	if h.onChange != nil {
		h.onChange(true)
	}
}

// remind logs that the outage goes on, at most every LogEvery. h.mu is held.
func (h *health) remind(now time.Time) {
	if now.Sub(h.lastLog) < LogEvery {
		return
	}
	h.log.Error().Str("error", h.lastErr).Dur("down_for", now.Sub(h.since)).Int64("requests_in_memory", h.inMemory).
		Msg("redis still unreachable: rate limits counted in memory per process")
	h.lastLog, h.inMemory = now, 0
}

// ok records a Redis call that started at began and worked: an outage ends (logged). A call
// that began before the outage did (it was in flight when Redis died and another request saw the
// failure first) says nothing about Redis now, so it ends nothing: without this check a kill
// under load logged "reachable again" 0.2 s into the outage and then a second start.
func (h *health) ok(began time.Time) {
	if !h.down.Load() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.down.Load() || began.Before(h.since) {
		return
	}
	h.down.Store(false)
	now := h.now()
	h.log.Warn().Dur("down_for", now.Sub(h.since)).Int64("requests_in_memory", h.inMemory).
		Msg("redis reachable again: rate limits shared through redis")
	if h.onChange != nil {
		h.onChange(false)
	}
}
