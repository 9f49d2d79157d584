package faults

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// serve runs env's server in this process on a loopback port until the test ends.
func serve(t *testing.T, env *apitest.Env) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = env.Server.ServeListener(ctx, ln, 5*time.Second); close(done) }()
	t.Cleanup(func() { cancel(); <-done; env.Server.Close() })
	return "http://" + ln.Addr().String()
}

// keys issues n keys of kind for co; each serves at most perKey requests of a load (under its
// quota: the load must never meet 429).
type keys struct {
	list   []string
	perKey int64
	n      atomic.Int64
	// cycle: after the last key, next starts again at the first. Only for a sliding window of
	// period P, and only when one pass over all keys takes longer than P (the soak checks that
	// no 429 comes back); fixed clock windows (the intake's hour) need keys enough instead (add).
	cycle bool
}

func newKeys(t *testing.T, co *apitest.Company, kind string, n int, perKey int64) *keys {
	t.Helper()
	k := &keys{perKey: perKey}
	k.add(t, co, kind, n)
	return k
}

// add issues n more keys; never while a load uses k.
func (k *keys) add(t *testing.T, co *apitest.Company, kind string, n int) {
	t.Helper()
	for range n {
		in := operator.NewKeyInput{Kind: kind, Env: tenancy.EnvLive}
		if kind == tenancy.KindPublishable {
			in.UserID, in.AllowedDomains = &co.Admin.ID, []string{"example.com"}
		}
		k.list = append(k.list, co.Key(t, in).Secret)
	}
}

// left is how many requests the keys still serve (without cycling).
func (k *keys) left() int64 { return max(0, int64(len(k.list))*k.perKey-k.n.Load()) }

// next is the key of the next request, or false when every key used its share.
func (k *keys) next() (string, bool) {
	i := (k.n.Add(1) - 1) / k.perKey
	if k.cycle {
		i %= int64(len(k.list))
	}
	if i >= int64(len(k.list)) {
		return "", false
	}
	return k.list[i], true
}

// tally counts the answers of a load by operation and status (0: no HTTP answer).
type tally struct {
	mu      sync.Mutex
	counts  map[string]map[int]int
	created []string // e-mails of intake submissions answered 201
	codes   map[string]int
	maxLat  time.Duration
}

func newTally() *tally { return &tally{counts: map[string]map[int]int{}, codes: map[string]int{}} }

func (y *tally) add(op string, status int) {
	y.mu.Lock()
	defer y.mu.Unlock()
	if y.counts[op] == nil {
		y.counts[op] = map[int]int{}
	}
	y.counts[op][status]++
}

func (y *tally) count(op string, status int) int {
	y.mu.Lock()
	defer y.mu.Unlock()
	return y.counts[op][status]
}

// answers counts the HTTP answers so far (transport errors excluded).
func (y *tally) answers() int {
	y.mu.Lock()
	defer y.mu.Unlock()
	n := 0
	for _, m := range y.counts {
		for s, c := range m {
			if s > 0 {
				n += c
			}
		}
	}
	return n
}

func (y *tally) String() string {
	y.mu.Lock()
	defer y.mu.Unlock()
	var ops []string
	for op := range y.counts {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	var b strings.Builder
	for _, op := range ops {
		fmt.Fprintf(&b, "%s:", op)
		var st []int
		for s := range y.counts[op] {
			st = append(st, s)
		}
		sort.Ints(st)
		for _, s := range st {
			fmt.Fprintf(&b, " %d×%d", s, y.counts[op][s])
		}
		b.WriteString("; ")
	}
	for c, n := range y.codes {
		fmt.Fprintf(&b, "%s×%d ", c, n)
	}
	fmt.Fprintf(&b, "slowest %s", y.maxLat.Round(time.Millisecond))
	return b.String()
}

// loader sends the mix: GET /me on meWorkers connections, the v1 lead intake on
// intakeWorkers, keys rotated under their quotas, until ctx ends. Every exchange is validated
// against the OpenAPI document.
type loader struct {
	base          string
	client        *http.Client
	secrets, pubs *keys
	meWorkers     int
	intakeWorkers int
	y             *tally
	seq           atomic.Int64
}

func (l *loader) run(ctx context.Context, t *testing.T) {
	var wg sync.WaitGroup
	for range l.meWorkers {
		wg.Add(1)
		go func() { defer wg.Done(); l.loop(ctx, t, l.me) }()
	}
	for range l.intakeWorkers {
		wg.Add(1)
		go func() { defer wg.Done(); l.loop(ctx, t, l.intake) }()
	}
	wg.Wait()
}

func (l *loader) loop(ctx context.Context, t *testing.T, one func(context.Context, *testing.T) bool) {
	for ctx.Err() == nil && one(ctx, t) {
	}
}

func (l *loader) me(ctx context.Context, t *testing.T) bool {
	key, ok := l.secrets.next()
	if !ok {
		return false
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", l.base+"/api/public/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	status, _ := l.do(ctx, req)
	if status < 0 {
		return false
	}
	l.y.add("me", status)
	return true
}

func (l *loader) intake(ctx context.Context, t *testing.T) bool {
	key, ok := l.pubs.next()
	if !ok {
		return false
	}
	email := fmt.Sprintf("lead%d-%d@example.org", time.Now().UnixNano(), l.seq.Add(1))
	body := fmt.Sprintf(`{"firstName":"Erika","lastName":"Muster","email":%q}`, email)
	req, _ := http.NewRequestWithContext(ctx, "POST", l.base+"/api/public/v1/leads/intake", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Origin", "https://example.com")
	status, b := l.do(ctx, req)
	if status < 0 {
		return false
	}
	l.y.add("intake", status)
	if status == 201 {
		l.y.mu.Lock()
		l.y.created = append(l.y.created, email)
		l.y.mu.Unlock()
	}
	if status == 503 {
		var code string
		if i := bytes.Index(b, []byte(`"code":"`)); i >= 0 {
			code, _, _ = strings.Cut(string(b[i+8:]), `"`)
		}
		l.y.mu.Lock()
		l.y.codes[code]++
		l.y.mu.Unlock()
	}
	return true
}

// do sends req; status 0 is a transport error (none is expected while the server runs) or the
// load's end.
func (l *loader) do(ctx context.Context, req *http.Request) (int, []byte) {
	start := time.Now()
	defer func() {
		l.y.mu.Lock()
		l.y.maxLat = max(l.y.maxLat, time.Since(start))
		l.y.mu.Unlock()
	}()
	resp, err := l.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return -1, nil // the load ended mid-request: not counted as an answer
		}
		return 0, nil
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, b
}
