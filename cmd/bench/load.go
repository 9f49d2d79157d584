package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

const (
	sideServer = "server"
	sideBare   = "bare"
	sideToken  = "token" // the server, GET /me with OAuth access tokens instead of keys
	// sidePGX is GET /me's in-process pgx program (no HTTP): an extra, stricter reference; the
	// bare side of GET /me is the net/http + pgx subprocess (barehttp.go).
	sidePGX = "pgx"
)

// doer makes one request (an HTTP request, or the bare program's transaction) and reports
// whether it succeeded with the expected answer. A transport or database error is err.
type doer interface {
	do(ctx context.Context) (ok bool, err error)
	close()
}

// result is one measured run of one side.
type result struct {
	side    string
	round   int
	n       int             // requests completed in the measured window
	elapsed time.Duration   // the measured window
	lat     []time.Duration // sorted latencies of those requests
	non200  int             // whole run, warm-up included
	errors  int             // whole run, warm-up included
	cpu     cpuUsage
}

func (r result) rps() float64 { return float64(r.n) / r.elapsed.Seconds() }

// quantile is the nearest-rank quantile q (0 < q <= 1) of the latencies.
func (r result) quantile(q float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	i := int(float64(len(r.lat))*q+0.999999999) - 1
	return r.lat[min(max(i, 0), len(r.lat)-1)]
}

func (r result) mean() time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range r.lat {
		sum += d
	}
	return sum / time.Duration(len(r.lat))
}

func (r result) summary() string {
	return fmt.Sprintf("%.0f req/s, p50 %s, p99 %s, %d non-200, %d errors, CPU busy %.0f%%, own CPU %s per request (server %s, bench %s, PostgreSQL %s, Redis %s)",
		r.rps(), fmtDur(r.quantile(0.50)), fmtDur(r.quantile(0.99)), r.non200, r.errors, r.cpu.busyPercent(),
		r.cpu.perRequest(r.cpu.own()), r.cpu.perRequest(r.cpu.server), r.cpu.perRequest(r.cpu.self),
		r.cpu.perRequest(r.cpu.postgres), r.cpu.perRequest(r.cpu.redis))
}

// best is the run with the most requests per second.
func best(rs []result) result {
	var b result
	for _, r := range rs {
		if r.rps() > b.rps() || b.n == 0 {
			b = r
		}
	}
	return b
}

// measure runs o.concurrency workers, each with its own doer, for o.warmup unmeasured and then
// o.duration measured. A request counts (and its latency is kept) when it completes inside the
// measured window.
func measure(ctx context.Context, o options, serverPID int, newDoer func(i int) (doer, error)) (result, error) {
	const (
		warming = iota
		measuring
		stopped
	)
	var phase atomic.Int32
	doers := make([]doer, o.concurrency)
	for i := range doers {
		d, err := newDoer(i)
		if err != nil {
			for _, d := range doers[:i] {
				d.close()
			}
			return result{}, err
		}
		doers[i] = d
	}
	lats := make([][]time.Duration, o.concurrency)
	non200 := make([]int, o.concurrency)
	errs := make([]int, o.concurrency)
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for i, d := range doers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer d.close()
			lat := make([]time.Duration, 0, 1<<16)
			for phase.Load() != stopped && ctx.Err() == nil {
				start := time.Now()
				ok, err := d.do(ctx)
				el := time.Since(start)
				switch {
				case err != nil:
					errs[i]++
					firstErr.CompareAndSwap(nil, err.Error())
					time.Sleep(10 * time.Millisecond) // no hot loop against a dead server
				case !ok:
					non200[i]++
				}
				if phase.Load() == measuring && err == nil && ok {
					lat = append(lat, el)
				}
			}
			lats[i] = lat
		}()
	}
	sleep(ctx, o.warmup)
	before := snapshotCPU(serverPID)
	t0 := time.Now()
	phase.Store(measuring)
	sleep(ctx, o.duration)
	phase.Store(stopped)
	elapsed := time.Since(t0)
	after := snapshotCPU(serverPID)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return result{}, err
	}
	r := result{elapsed: elapsed, cpu: after.sub(before)}
	for i := range doers {
		r.lat = append(r.lat, lats[i]...)
		r.non200 += non200[i]
		r.errors += errs[i]
	}
	slices.Sort(r.lat)
	r.n = len(r.lat)
	r.cpu.requests = r.n
	if e, ok := firstErr.Load().(string); ok {
		progressf("  first error: %s", e)
	}
	return r, nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func progressf(format string, args ...any) { progress(fmt.Sprintf(format, args...)) }

// reqSpec is the request the server side sends: method and path, the headers and body of one
// request with key k (body nil for none; each call may build a new one, e.g. a new person), and
// the status that counts as success.
type reqSpec struct {
	method, path string
	want         int
	headers      func(k *benchKey) [][2]string
	body         func(dst []byte, k *benchKey) []byte
}

func newHTTPDoer(kind, addr string, spec reqSpec, l *lease) doer {
	if kind == "nethttp" {
		return newNetHTTPDoer(addr, spec, l)
	}
	return &rawDoer{addr: addr, spec: spec, lease: l}
}

// rawDoer is a minimal HTTP/1.1 client on one keep-alive connection: it writes the request and
// reads the status line, the headers and a Content-Length body. It spends far less CPU per
// request than net/http, which matters on a small machine where the load generator, the server
// and PostgreSQL share the cores.
type rawDoer struct {
	addr  string
	spec  reqSpec
	lease *lease
	req   []byte
	body  []byte
	conn  net.Conn
	br    *bufio.Reader
}

var errChunked = errors.New("response without Content-Length")

func (c *rawDoer) do(ctx context.Context) (bool, error) {
	k, _, err := c.lease.get(ctx)
	if err != nil {
		return false, err
	}
	c.req = c.build(c.req[:0], k)
	if c.conn == nil {
		conn, err := net.Dial("tcp", c.addr)
		if err != nil {
			return false, err
		}
		c.conn, c.br = conn, bufio.NewReaderSize(conn, 16<<10)
	}
	status, keep, err := c.roundTrip()
	if err != nil || !keep {
		c.closeConn()
	}
	return status == c.spec.want, err
}

// build appends the request with key k to dst.
func (c *rawDoer) build(dst []byte, k *benchKey) []byte {
	dst = append(dst, c.spec.method...)
	dst = append(dst, ' ')
	dst = append(dst, c.spec.path...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, c.addr...)
	dst = append(dst, "\r\n"...)
	for _, h := range c.spec.headers(k) {
		dst = append(dst, h[0]...)
		dst = append(dst, ": "...)
		dst = append(dst, h[1]...)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "User-Agent: brokerdesk-bench\r\n"...)
	if c.spec.body != nil {
		c.body = c.spec.body(c.body[:0], k)
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(c.body)), 10)
		dst = append(dst, "\r\n\r\n"...)
		return append(dst, c.body...)
	}
	return append(dst, "\r\n"...)
}

func (c *rawDoer) roundTrip() (status int, keep bool, err error) {
	if err := c.conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return 0, false, err
	}
	if _, err := c.conn.Write(c.req); err != nil {
		return 0, false, err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	// HTTP/1.1 200 OK
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, false, fmt.Errorf("bad status line %q", line)
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return 0, false, fmt.Errorf("bad status line %q", line)
	}
	length, keep := -1, true
	for {
		h, err := c.br.ReadSlice('\n')
		if err != nil {
			return status, false, err
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		name, value, _ := bytes.Cut(h, []byte(":"))
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return status, false, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Connection")) && bytes.EqualFold(value, []byte("close")):
			keep = false
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return status, false, errChunked
		}
	}
	if length < 0 {
		return status, false, errChunked
	}
	if _, err := c.br.Discard(length); err != nil {
		return status, false, err
	}
	return status, keep, nil
}

func (c *rawDoer) close() {
	c.closeConn()
	c.lease.close()
}

func (c *rawDoer) closeConn() {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn, c.br = nil, nil
	}
}

// netHTTPDoer is the same request through net/http, one transport (one connection) per worker.
type netHTTPDoer struct {
	client *http.Client
	url    string
	spec   reqSpec
	lease  *lease
}

func newNetHTTPDoer(addr string, spec reqSpec, l *lease) *netHTTPDoer {
	tr := &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1, DisableCompression: true}
	return &netHTTPDoer{client: &http.Client{Transport: tr}, url: "http://" + addr + spec.path, spec: spec, lease: l}
}

func (c *netHTTPDoer) do(ctx context.Context) (bool, error) {
	k, _, err := c.lease.get(ctx)
	if err != nil {
		return false, err
	}
	var body io.Reader
	if c.spec.body != nil {
		body = bytes.NewReader(c.spec.body(nil, k))
	}
	req, err := http.NewRequestWithContext(ctx, c.spec.method, c.url, body)
	if err != nil {
		return false, err
	}
	for _, h := range c.spec.headers(k) {
		req.Header.Set(h[0], h[1])
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return false, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == c.spec.want, err
}

func (c *netHTTPDoer) close() {
	c.client.CloseIdleConnections()
	c.lease.close()
}
