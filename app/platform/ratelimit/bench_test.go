package ratelimit

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// benchTake spreads requests over 1000 credentials at the v1 rate (600/min), so most keys fill
// up and both admissions and refusals are measured, from parallel goroutines.
func benchTake(b *testing.B, s Store) {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "cred-" + strconv.Itoa(i)
	}
	rate := rateOf(APILimit, APIPeriod)
	var next atomic.Int64
	b.SetParallelism(8) // goroutines per CPU: Redis calls wait on the network, as requests do
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			k := keys[next.Add(1)%int64(len(keys))]
			if _, err := s.Take(ctx, k, 1, rate); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkRedisSliding(b *testing.B) {
	benchTake(b, redisBackend.new(b, Sliding, nil))
}

func BenchmarkRedisFixed(b *testing.B) {
	benchTake(b, redisBackend.new(b, FixedClock, nil))
}

func BenchmarkMemorySliding(b *testing.B) {
	benchTake(b, memoryBackend.new(b, Sliding, nil))
}

func BenchmarkMemoryFixed(b *testing.B) {
	benchTake(b, memoryBackend.new(b, FixedClock, time.Now))
}
