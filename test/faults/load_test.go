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

// keys hands out the keys of one kind of a company, each for at most perKey requests of a load
// (under its quota: the load must never meet 429). When every key has served its share, next
// issues another: a load never stops quietly for want of keys (it used to, so a fault test
// could pass with no load left during the fault). A key that cannot be issued is an error
// that fails the test.
type keys struct {
	mu     sync.Mutex
	list   []string
	perKey int64
	n      int64
	issue  func() (string, error)
	// cycle: after the last key, next starts again at the first. Only for a sliding window of
	// period P, and only when one pass over all keys takes longer than P (the soak checks that
	// no 429 comes back); fixed clock windows (the intake's hour) need keys enough instead (add).
	cycle bool
}

func newKeys(t *testing.T, env *apitest.Env, co *apitest.Company, kind string, n int, perKey int64) *keys {
	t.Helper()
	k := &keys{perKey: perKey}
	k.issue = func() (string, error) {
		in := operator.NewKeyInput{Kind: kind, Env: tenancy.EnvLive, CompanyID: co.ID}
		if kind == tenancy.KindPublishable {
			in.UserID, in.AllowedDomains = &co.Admin.ID, []string{"example.com"}
		}
		key, err := env.Ops.CreateKey(context.Background(), in)
		return key.Secret, err
	}
	k.add(t, n)
	return k
}

// add issues n more keys ahead of a load, so that none is issued while it is measured.
func (k *keys) add(t *testing.T, n int) {
	t.Helper()
	for range n {
		key, err := k.issue()
		if err != nil {
			t.Fatalf("create key: %v", err)
		}
		k.mu.Lock()
		k.list = append(k.list, key)
		k.mu.Unlock()
	}
}

// left is how many requests the keys issued so far still serve (without cycling).
func (k *keys) left() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return max(0, int64(len(k.list))*k.perKey-k.n)
}

// next is the key of the next request; past the last key's share it issues another (the
// soak's cycling keys start again at the first instead).
func (k *keys) next() (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	i := k.n / k.perKey
	k.n++
	if k.cycle {
		i %= int64(len(k.list))
	}
	for i >= int64(len(k.list)) {
		key, err := k.issue()
		if err != nil {
			return "", fmt.Errorf("every key served its share and another could not be issued: %w", err)
		}
		k.list = append(k.list, key)
	}
	return k.list[i], nil
}

// answer is one exchange of a load: its operation, its status (0: no HTTP answer), the problem
// code of a 503, the X-Request-Id it was sent with, and when it was sent and answered.
type answer struct {
	op         string
	status     int
	code       string
	requestID  string
	start, end time.Time
}

func (a answer) success() bool { return a.status == 200 || a.status == 201 }

// tally counts the answers of a load by operation and status (0: no HTTP answer) and keeps each
// one, so that a test can ask what happened inside a fault's window.
type tally struct {
	mu      sync.Mutex
	counts  map[string]map[int]int
	all     []answer
	created []string // e-mails of intake submissions answered 201
	codes   map[string]int
	maxLat  time.Duration
}

func newTally() *tally { return &tally{counts: map[string]map[int]int{}, codes: map[string]int{}} }

func (y *tally) add(a answer) {
	y.mu.Lock()
	defer y.mu.Unlock()
	if y.counts[a.op] == nil {
		y.counts[a.op] = map[int]int{}
	}
	y.counts[a.op][a.status]++
	y.all = append(y.all, a)
	y.maxLat = max(y.maxLat, a.end.Sub(a.start))
	if a.status == 503 {
		y.codes[a.code]++
	}
}

func (y *tally) count(op string, status int) int {
	y.mu.Lock()
	defer y.mu.Unlock()
	return y.counts[op][status]
}

// answers counts the HTTP answers so far (transport errors excluded).
func (y *tally) answers() int {
	return len(y.where(func(a answer) bool { return a.status > 0 }))
}

// where returns the answers for which keep is true.
func (y *tally) where(keep func(answer) bool) []answer {
	y.mu.Lock()
	defer y.mu.Unlock()
	var out []answer
	for _, a := range y.all {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out
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

// loader sends the issue's mix: GET /me on meWorkers connections, the v1 lead intake on
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

// loop runs one until ctx ends. A worker that stops before (its keys could not be renewed)
// has said why with t.Errorf: the load did not run as long as the test claims.
func (l *loader) loop(ctx context.Context, t *testing.T, one func(context.Context, *testing.T) bool) {
	for ctx.Err() == nil && one(ctx, t) {
	}
}

func (l *loader) me(ctx context.Context, t *testing.T) bool {
	key, err := l.secrets.next()
	if err != nil {
		t.Errorf("GET /me load stopped before its end: %v", err)
		return false
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", l.base+"/api/public/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	a, _ := l.do(ctx, "me", req)
	if a.status < 0 {
		return false
	}
	l.y.add(a)
	return true
}

func (l *loader) intake(ctx context.Context, t *testing.T) bool {
	key, err := l.pubs.next()
	if err != nil {
		t.Errorf("intake load stopped before its end: %v", err)
		return false
	}
	email := fmt.Sprintf("lead%d-%d@example.org", time.Now().UnixNano(), l.seq.Add(1))
	body := fmt.Sprintf(`{"firstName":"Erika","lastName":"Muster","email":%q}`, email)
	req, _ := http.NewRequestWithContext(ctx, "POST", l.base+"/api/public/v1/leads/intake", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Origin", "https://example.com")
	a, _ := l.do(ctx, "intake", req)
	if a.status < 0 {
		return false
	}
	l.y.add(a)
	if a.status == 201 {
		l.y.mu.Lock()
		l.y.created = append(l.y.created, email)
		l.y.mu.Unlock()
	}
	return true
}

// do sends req with an X-Request-Id of its own (the server logs it with the status it
// answered); status 0 is a transport error (none is expected while the server runs), -1 the
// load's end mid-request (not an answer).
func (l *loader) do(ctx context.Context, op string, req *http.Request) (answer, []byte) {
	a := answer{op: op, requestID: fmt.Sprintf("faults-%s-%08d", op, l.seq.Add(1)), start: time.Now()}
	req.Header.Set("X-Request-Id", a.requestID)
	resp, err := l.client.Do(req)
	if err != nil {
		a.end = time.Now()
		if ctx.Err() != nil {
			a.status = -1
		}
		return a, nil
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	a.status, a.end = resp.StatusCode, time.Now()
	if a.status == 503 {
		if i := bytes.Index(b, []byte(`"code":"`)); i >= 0 {
			a.code, _, _ = strings.Cut(string(b[i+8:]), `"`)
		}
	}
	return a, b
}
