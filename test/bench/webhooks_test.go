package bench

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// hookReceiver counts deliveries and the time from each event's commit to its arrival.
type hookReceiver struct {
	mu        sync.Mutex
	committed map[string]time.Time
	lat       []time.Duration
	n         atomic.Int64
	done      chan struct{}
	want      int64
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	id := r.Header.Get("webhook-id")
	h.mu.Lock()
	if c, ok := h.committed[id]; ok {
		h.lat = append(h.lat, at.Sub(c))
	}
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
	if h.n.Add(1) == h.want {
		close(h.done)
	}
}

// BenchmarkWebhooks: events committed by the app role delivered by the river queue to a local
// receiver through 10 endpoints subscribed to them. "throughput" commits b.N events in
// transactions of 100 from 2 writers (a burst: the outbox fills faster than it drains) and
// reports events and deliveries per second from the first commit to the last delivery; "latency"
// commits one event per transaction (as a write request does) every 100 ms (10 events, 100 deliveries per second: below saturation, so
// the figure is the path's latency, not a queue's; at most 300 events) and reports
// commit-to-delivery p50/p99 over all deliveries (woken by LISTEN/NOTIFY: the commit's NOTIFY wakes the dispatcher, river's insert
// notification wakes a worker; the poll interval is 1 s).
func BenchmarkWebhooks(b *testing.B) {
	env := apitest.New(b, app.WithClock(time.Now)) // a private server: its own job workers
	ctx := context.Background()
	if err := env.Server.StartJobs(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = env.Server.StopJobs(context.Background()) })

	run := func(b *testing.B, n, writers, batch int, every time.Duration) *hookReceiver {
		co := env.NewCompany(b)
		rcv := &hookReceiver{committed: map[string]time.Time{}, done: make(chan struct{})}
		srv := httptest.NewServer(rcv)
		b.Cleanup(srv.Close)
		for range 10 {
			r := env.Do(b, apitest.Request{Method: "POST", Path: "/webhook-endpoints", Key: co.Secret,
				Body: map[string]any{"url": srv.URL, "events": []string{"lead.created"}}})
			if r.Status != 201 {
				b.Fatalf("endpoint: %d %s", r.Status, r.Body)
			}
		}
		rcv.want = int64(n * 10)
		b.ResetTimer()
		start := time.Now()
		var wg sync.WaitGroup
		next := atomic.Int64{}
		for range writers {
			wg.Go(func() {
				for {
					from := next.Add(int64(batch)) - int64(batch)
					if from >= int64(n) {
						return
					}
					ids := make([]uuid.UUID, min(int64(batch), int64(n)-from))
					for i := range ids {
						ids[i] = uuid.Must(uuid.NewV7())
					}
					err := env.Pinned(ctx, co.ID, func(tx *sql.Tx) error {
						_, err := tx.Exec(`INSERT INTO events (id, company_id, type, occurred_at, data, actor)
							SELECT id, $2, 'lead.created', now(), '{"n":1}', '{"type":"system"}' FROM unnest($1::uuid[]) id`,
							ids, co.ID)
						return err
					})
					at := time.Now()
					rcv.mu.Lock()
					for _, id := range ids {
						rcv.committed[id.String()] = at
					}
					rcv.mu.Unlock()
					if err != nil {
						b.Error(err)
						return
					}
					if every > 0 {
						time.Sleep(every)
					}
				}
			})
		}
		wg.Wait()
		select {
		case <-rcv.done:
		case <-time.After(5 * time.Minute):
			b.Fatalf("only %d of %d deliveries arrived", rcv.n.Load(), rcv.want)
		}
		el := time.Since(start)
		b.StopTimer()
		b.ReportMetric(float64(n)/el.Seconds(), "events/s")
		b.ReportMetric(float64(rcv.want)/el.Seconds(), "deliveries/s")
		return rcv
	}
	b.Run("throughput", func(b *testing.B) { run(b, b.N, 2, 100, 0) })
	b.Run("latency", func(b *testing.B) {
		rcv := run(b, min(b.N, 300), 1, 1, 100*time.Millisecond)
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		sort.Slice(rcv.lat, func(i, j int) bool { return rcv.lat[i] < rcv.lat[j] })
		if len(rcv.lat) > 0 {
			b.ReportMetric(float64(rcv.lat[len(rcv.lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(rcv.lat[len(rcv.lat)*99/100].Microseconds())/1000, "p99-ms")
		}
	})
}
