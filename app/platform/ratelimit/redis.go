package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ulule/limiter/v3"
)

// The scripts read the clock from ARGV when the caller overrides it (tests) and from Redis TIME
// otherwise, so every process decides on Redis's clock. Times are microseconds: below 2^53, so
// exact in Lua's doubles. Each returns {admitted, count, reset_us, retry_us, now_us, token...}.

// luaArgs opens the take scripts: n, limit, period_us from ARGV, and now_us from ARGV[4] or,
// when that is 0, Redis's own clock (TIME), so every server process counts on one clock.
const luaArgs = `
local n, limit, period, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end`

// slidingScript: KEYS[1] = sorted set of admitted requests (score = time), KEYS[2] = sequence
// counter that makes members unique; ARGV = n, limit, period_us, now_us (0: Redis TIME).
var slidingScript = redis.NewScript(luaArgs + `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now - period))
local count = redis.call('ZCARD', KEYS[1])
local admitted, retry, first = 0, 0, 0
local function score_at(i)
  local e = redis.call('ZRANGE', KEYS[1], i, i, 'WITHSCORES')
  return tonumber(e[2])
end
if count + n <= limit then
  admitted = 1
  if n > 0 then
    local last = redis.call('INCRBY', KEYS[2], n)
    first = last - n + 1
    local at = string.format('%.0f', now)
    local i = first
    while i <= last do
      local args = {}
      local j = math.min(i + 499, last)
      for k = i, j do
        args[#args + 1] = at
        args[#args + 1] = at .. '-' .. string.format('%d', k)
      end
      redis.call('ZADD', KEYS[1], unpack(args))
      i = j + 1
    end
    count = count + n
    local ttl = math.ceil(period / 1000)
    redis.call('PEXPIRE', KEYS[1], ttl)
    redis.call('PEXPIRE', KEYS[2], ttl)
  end
elseif n <= limit then
  retry = score_at(count + n - limit - 1) + period - now
else
  retry = period
end
local reset = 0
if count >= limit then
  reset = score_at(count - limit) + period - now
elseif count > 0 then
  reset = score_at(-1) + period - now
end
return {admitted, count, reset, retry, now, first}
`)

// slidingRefundScript: KEYS[1] = the sorted set; ARGV = admission time, first sequence, n.
var slidingRefundScript = redis.NewScript(`
local first, n = tonumber(ARGV[2]), tonumber(ARGV[3])
local m = {}
for k = first, first + n - 1 do m[#m + 1] = ARGV[1] .. '-' .. string.format('%d', k) end
return redis.call('ZREM', KEYS[1], unpack(m))
`)

// fixedScript: KEYS[1] = the key's base; the counter of one window is base:<start_us>, in the same
// hash slot thanks to the base's {hash tag}. ARGV = n, limit, period_us, now_us (0: Redis TIME).
var fixedScript = redis.NewScript(luaArgs + `
local start = now - math.fmod(now, period)
local wkey = KEYS[1] .. ':' .. string.format('%.0f', start)
local count = tonumber(redis.call('GET', wkey) or '0')
local reset = start + period - now
local admitted, retry = 0, 0
if count + n <= limit then
  admitted = 1
  if n > 0 then
    count = redis.call('INCRBY', wkey, n)
    redis.call('PEXPIRE', wkey, math.ceil(period / 1000))
  end
else
  retry = reset
end
return {admitted, count, reset, retry, now, start}
`)

// fixedRefundScript: KEYS[1] = base; ARGV = window start, n.
var fixedRefundScript = redis.NewScript(`
local wkey = KEYS[1] .. ':' .. ARGV[1]
local cur = tonumber(redis.call('GET', wkey) or '0')
if cur <= 0 then return 0 end
return redis.call('DECRBY', wkey, math.min(cur, tonumber(ARGV[2])))
`)

// fixedResetScript: KEYS[1] = base; ARGV = period_us, now_us (0: Redis TIME). Deletes the current
// window's counter.
var fixedResetScript = redis.NewScript(`
local period, now = tonumber(ARGV[1]), tonumber(ARGV[2])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local start = now - math.fmod(now, period)
redis.call('DEL', KEYS[1] .. ':' .. string.format('%.0f', start))
return now
`)

// RedisStore counts in Redis, atomically, on Redis's clock: any number of server processes
// sharing one Redis share one count per key.
type RedisStore struct {
	viaTake
	client  redis.UniversalClient
	prefix  string
	window  Window
	now     func() time.Time // nil: Redis TIME
	timeout time.Duration
}

// NewRedisSlidingStore returns a sliding-window log in Redis under keys "{prefix:key}" (a sorted
// set, at most limit members) and "{prefix:key}:seq". The braces are a Redis Cluster hash tag:
// both keys live in one slot.
func NewRedisSlidingStore(client redis.UniversalClient, prefix string, opts ...StoreOption) *RedisStore {
	return newRedisStore(client, prefix, Sliding, opts)
}

// NewRedisFixedStore returns a clock-aligned fixed-window counter in Redis under keys
// "{prefix:key}:<window start in µs>", each expiring one period after its last admission.
func NewRedisFixedStore(client redis.UniversalClient, prefix string, opts ...StoreOption) *RedisStore {
	return newRedisStore(client, prefix, FixedClock, opts)
}

func newRedisStore(client redis.UniversalClient, prefix string, w Window, opts []StoreOption) *RedisStore {
	c := newStoreConfig(opts)
	s := &RedisStore{client: client, prefix: prefix, window: w, now: c.now, timeout: c.timeout}
	s.viaTake = viaTake{s.Take}
	return s
}

// Window reports how s counts.
func (s *RedisStore) Window() Window { return s.window }

func (s *RedisStore) base(key string) string { return "{" + s.prefix + ":" + key + "}" }

// clock is the time argument of the scripts: 0 asks for Redis TIME.
func (s *RedisStore) clock() int64 {
	if s.now == nil {
		return 0
	}
	return s.now().UnixMicro()
}

func (s *RedisStore) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.timeout)
}

// Take implements Store.
func (s *RedisStore) Take(ctx context.Context, key string, n int64, rate limiter.Rate) (Decision, error) {
	if err := checkRate(rate, n); err != nil {
		return Decision{}, err
	}
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	base := s.base(key)
	script, keys := fixedScript, []string{base}
	if s.window == Sliding {
		script, keys = slidingScript, []string{base, base + ":seq"}
	}
	v, err := script.Run(ctx, s.client, keys, n, rate.Limit, rate.Period.Microseconds(), s.clock()).Int64Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("redis %s rate limit: %w", s.window, err)
	}
	if len(v) != 6 {
		return Decision{}, fmt.Errorf("redis %s rate limit: script returned %d values", s.window, len(v))
	}
	r := raw{admitted: v[0] == 1, count: v[1], reset: v[2], retry: v[3], now: v[4]}
	if r.admitted && n > 0 {
		if s.window == Sliding {
			r.tok = token{at: v[4], first: v[5], n: n}
		} else {
			r.tok = token{at: v[5], n: n}
		}
	}
	return r.decision(rate.Limit), nil
}

// Refund implements Store.
func (s *RedisStore) Refund(ctx context.Context, key string, _ limiter.Rate, d Decision) error {
	t := d.token
	if t.n == 0 {
		return nil
	}
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	at := strconv.FormatInt(t.at, 10)
	var err error
	if s.window == Sliding {
		err = slidingRefundScript.Run(ctx, s.client, []string{s.base(key)}, at, t.first, t.n).Err()
	} else {
		err = fixedRefundScript.Run(ctx, s.client, []string{s.base(key)}, at, t.n).Err()
	}
	if err != nil {
		return fmt.Errorf("redis %s rate limit refund: %w", s.window, err)
	}
	return nil
}

// Reset implements limiter.Store: it forgets key's count (for a fixed window, the current
// window's).
func (s *RedisStore) Reset(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	if err := checkRate(rate, 0); err != nil {
		return limiter.Context{}, err
	}
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	base := s.base(key)
	var now int64
	var err error
	if s.window == Sliding {
		now = s.clock()
		if err = s.client.Del(ctx, base, base+":seq").Err(); err == nil && now == 0 {
			var t time.Time
			t, err = s.client.Time(ctx).Result()
			now = t.UnixMicro()
		}
	} else {
		now, err = fixedResetScript.Run(ctx, s.client, []string{base}, rate.Period.Microseconds(), s.clock()).Int64()
	}
	if err != nil {
		return limiter.Context{}, fmt.Errorf("redis %s rate limit reset: %w", s.window, err)
	}
	return limiter.Context{Limit: rate.Limit, Remaining: rate.Limit, Reset: time.UnixMicro(now).Unix()}, nil
}
