// Package ratelimit enforces the request quotas of the spec ("Limits"): 600 requests per minute
// per credential on /api/public/v1 as a sliding window, and 100 submissions per hour per
// publishable key on the lead intake as a fixed window. Beyond the spec
// (docs/decisions/leads-and-intake.md "Limits", docs/decisions/auth-and-oauth.md "Failure
// limits"), fixed windows also bound browser intake submissions per (key, sender) for keys
// with allowed domains (app/intake decides which requests count), 401/403 answers
// per sender (Limiter.AuthGuard) and intake attachment bytes per company and day; Clients tells
// the sender. Stores implement ulule/limiter v3's
// limiter.Store, so the counting is ulule-shaped, but the windows and the Fiber middleware are
// ours: ulule's own stores are fixed windows anchored at a key's first hit, and its fasthttp
// middleware writes X-RateLimit-* with an epoch reset.
//
// # Sliding window: a log, not two weighted buckets
//
// The guarantee is exact: with limit L per period P, no interval of length P ever holds more
// than L admitted requests, and the request that would be the L+1st in its trailing window is
// refused. The usual two-bucket counter (estimate = previous·(1−elapsed/P) + current, as in
// stack.md §5.3 and Fiber's SlidingWindow) does not keep that promise: it assumes the previous
// bucket's requests were spread evenly, so after L requests at the very end of one bucket it
// lets the next bucket's count grow with its elapsed fraction, and one interval of length P ends
// up holding nearly 2·L (TestTwoBucketEstimate_OverAdmits finds 1199 for L = 600). The estimate
// errs both ways, so it is neither a safe upper nor a lower bound. The sliding stores therefore
// keep a log: one sorted-set member per admitted request (score = admission time in
// microseconds) in Redis, a sorted slice in memory. A request of n at time t is admitted iff the
// log holds at most L−n entries in (t−P, t]. The cost is at most L entries per credential that
// used its quota within P (a full 600-entry log is about 64 KB in Redis 7) and a few sorted-set
// operations per request.
//
// Rejected requests are never recorded, so a client hammering past its quota does not extend
// its own lock-out; it gets back in exactly when its oldest admitted request leaves the window.
//
// # Fixed window for the lead intake: clock-aligned
//
// The intake limit is "100 per hour, counted per fixed one-hour window"; the spec leaves the
// alignment open. We align windows to multiples of the period since the Unix epoch, so for one
// hour the window is the clock hour (UTC; the same in every whole-hour time zone), the counter key
// is the credential suffixed with the window start, and the window resets at hh:00:00 for every
// key. Reasons: the reset time is the same for every key and replica and can be stated in one
// sentence to customers ("at the top of the hour"); nothing about the window has to be stored to
// know where it starts, so a lost or evicted counter cannot move it; and Retry-After is simply the
// time to the next full hour. The alternative, ulule's window anchored at the first hit, gives
// every key a full hour but makes the reset time depend on history the customer cannot see;
// both allow a burst of 2·L across one boundary, so neither is stricter. As with the sliding
// window, refused submissions are not counted.
//
// # Clocks
//
// The Redis stores read Redis TIME inside their Lua scripts, so every server process decides on
// one clock. Each script is atomic (run with EVALSHA, falling back to EVAL when Redis has not
// seen it). WithClock overrides the clock (memory: the store's clock; Redis: the time is passed
// to the script as an argument), which tests use to simulate hours in milliseconds.
//
// # Headers
//
// Every limited response carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset
// (public-api-v1 "GET /me"), plus the structured fields of the current IETF draft
// (draft-ietf-httpapi-ratelimit-headers): RateLimit-Policy: "default";q=600;w=60 and
// RateLimit: "default";r=599;t=60. Reset (and t) is delta seconds, never an epoch, rounded up:
// for the fixed window it is the time to the window's end; for the sliding window it is the
// time until a request would be admitted again when nothing remains, and otherwise the time
// until the window has drained and the whole quota is back. A refused request also gets
// Retry-After (seconds, at least 1, rounded up, so waiting that long always suffices) and the
// error errs.E{Kind: errs.ErrRateLimited, Code: "rate_limited"}, which app/platform/httpx maps to 429.
// Requests the handler chain answers with 401 or 403 are refunded (api-anchors §0 item 8:
// 401/403 responses do not consume quota).
//
// # Redis unreachable: counted in memory per process
//
// When a Redis call fails (Redis down, timeout), the request is counted in this process's
// memory instead, against the quota divided by Config.Replicas (REPLICAS, default 1; at least 1
// per process), and the answer carries that count's rate-limit headers (RateLimit-Limit shows
// the reduced quota). So N replicas together admit about the full quota while Redis is away;
// with REPLICAS unset each admits the full quota. Availability wins over exactness: the limiter
// protects capacity, not data, and failing closed would turn a Redis outage into an API outage.
// The outage is logged once when it starts, at most every LogEvery (30 s) while it lasts and
// once when it ends (never a line per request); during it one request per ProbeEvery (1 s)
// tries Redis, the others go straight to memory, so a hung Redis delays one request a second by
// the call's deadline (WithTimeout, default 200 ms). Limits.Degraded says whether an outage is
// on (/readyz shows it). The in-memory counts start empty and are dropped when Redis answers
// again, whose counts resume where they stood. A limiter built with NewLimiter on a store alone
// (no fallback) still fails open: admitted, uncounted, without headers, one log line each.
//
// # Store choice
//
// New picks Redis when a URL is configured (REDIS_URL) and memory stores otherwise. Memory
// limits are per process: N replicas admit N times the quota, so production with more than one
// instance needs Redis.
package ratelimit
