package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// quota is the server's request quota per credential, read from the RateLimit-Limit and
// RateLimit-Policy (w=) headers of its first answer; limit 0 means none was announced.
type quota struct {
	limit  int
	window time.Duration
	policy string // the RateLimit-Policy header as sent
}

func quotaOf(h http.Header) quota {
	q := quota{policy: h.Get("RateLimit-Policy")}
	q.limit, _ = strconv.Atoi(h.Get("RateLimit-Limit"))
	q.window = time.Minute
	for _, f := range strings.Split(q.policy, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(f), "w="); ok {
			if s, err := strconv.Atoi(v); err == nil && s > 0 {
				q.window = time.Duration(s) * time.Second
			}
		}
	}
	return q
}

// perKey is how many requests one lease of a key may make: nine tenths of the quota, so that
// no key ever reaches it (a 429 would be a failed request).
func (q quota) perKey() int {
	if q.limit <= 0 {
		return math.MaxInt
	}
	return max(1, q.limit*9/10)
}

// benchKey is one key of the seeded company: a company-level secret key (GET /me) or a
// publishable key of the bench user (the intake).
type benchKey struct {
	secret  string
	hash    []byte
	leased  bool
	retired time.Time // end of its last lease; zero if never leased
}

// keyPool hands out keys so that the load stays under the server's per-credential quota: a
// worker leases a key for quota.perKey() requests, then takes the next; a key is leased again
// only when its last lease ended more than a quota window ago (for the intake's clock hour:
// never within a run). Both sides (the server's load and the bare program) rotate over the
// same pool, so they send the same SQL with the same spread of key hashes.
type keyPool struct {
	mu     sync.Mutex
	keys   []*benchKey
	next   int
	q      quota
	ops    *operator.Service
	in     operator.NewKeyInput // what each key is created with (company, kind, env, user)
	domain string               // the allowed domain of publishable keys
	late   int                  // keys created during a run because the pool ran dry
	// make, when set, creates a credential instead of ops.CreateKey (OAuth access tokens).
	make func(ctx context.Context, n int) (*benchKey, error)
}

// newSecretPool is a pool of company-level live secret keys of company.
func newSecretPool(ops *operator.Service, company uuid.UUID) *keyPool {
	return &keyPool{ops: ops, in: operator.NewKeyInput{CompanyID: company, Kind: tenancy.KindSecret, Env: tenancy.EnvLive}}
}

// newPublishablePool is a pool of live publishable keys of company bound to user, for pages on
// domain (and its subdomains).
func newPublishablePool(ops *operator.Service, company, user uuid.UUID, domain string) *keyPool {
	return &keyPool{ops: ops, in: operator.NewKeyInput{CompanyID: company, UserID: &user, Kind: tenancy.KindPublishable,
		Env: tenancy.EnvLive}, domain: domain}
}

func (p *keyPool) create(ctx context.Context) (*benchKey, error) {
	if p.make != nil {
		return p.make(ctx, len(p.keys)+1)
	}
	in := p.in
	in.Name = fmt.Sprintf("bench %s %d", in.Kind, len(p.keys)+1)
	if p.domain != "" {
		in.AllowedDomains = []string{p.domain} // CreateKey normalises the slice in place
	}
	k, err := p.ops.CreateKey(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("create %s key: %w", in.Kind, err)
	}
	return &benchKey{secret: k.Secret, hash: tenancy.HashKey(k.Secret)}, nil
}

func (p *keyPool) free(k *benchKey, now time.Time) bool {
	return !k.leased && (k.retired.IsZero() || now.Sub(k.retired) > p.q.window+2*time.Second)
}

// ensure creates keys until n are free: called between runs, so that no key is created while
// one is measured.
func (p *keyPool) ensure(ctx context.Context, n int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	have := 0
	for _, k := range p.keys {
		if p.free(k, now) {
			have++
		}
	}
	for ; have < n; have++ {
		k, err := p.create(ctx)
		if err != nil {
			return err
		}
		p.keys = append(p.keys, k)
	}
	return nil
}

// lease returns the next free key, creating one if none is (counted in late).
func (p *keyPool) lease(ctx context.Context) (*benchKey, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for i := range p.keys {
		j := (p.next + i) % len(p.keys)
		if k := p.keys[j]; p.free(k, now) {
			k.leased = true
			p.next = j + 1
			return k, nil
		}
	}
	k, err := p.create(ctx)
	if err != nil {
		return nil, err
	}
	p.late++
	k.leased = true
	p.keys = append(p.keys, k)
	return k, nil
}

func (p *keyPool) release(k *benchKey) {
	p.mu.Lock()
	k.leased, k.retired = false, time.Now()
	p.mu.Unlock()
}

// needed is how many free keys a run of rps requests per second for d needs.
func (p *keyPool) needed(rps float64, d time.Duration, workers int) int {
	per := p.q.perKey()
	if per == math.MaxInt {
		return workers
	}
	return int(rps*d.Seconds()*1.25)/per + 2*workers
}

// lease is a worker's current key and what it may still send with it.
type lease struct {
	pool *keyPool
	key  *benchKey
	left int
}

// get returns the key for the next request and whether it changed.
func (l *lease) get(ctx context.Context) (*benchKey, bool, error) {
	if l.key != nil && l.left > 0 {
		l.left--
		return l.key, false, nil
	}
	l.close()
	k, err := l.pool.lease(ctx)
	if err != nil {
		return nil, false, err
	}
	l.key, l.left = k, l.pool.q.perKey()-1
	return k, true, nil
}

func (l *lease) close() {
	if l.key != nil {
		l.pool.release(l.key)
		l.key = nil
	}
}
