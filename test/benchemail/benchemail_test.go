// Package benchemail holds the benchmarks of the e-mail area (issue 21, "Numbers"): the thread
// search at 100,000 messages, the initial and the incremental IMAP sync of a 10,000-message
// mailbox, and POST /emails to the loopback SMTP server. Its own package: go tool task bench
// runs it once (-benchtime 1x); each benchmark seeds its data and measures many requests in
// that one iteration. go tool task test compiles it and runs no benchmark.
package benchemail

import (
	"context"
	"database/sql"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// serve runs env's server on a loopback listener and returns the v1 base URL.
func serve(b *testing.B, env *apitest.Env) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = env.Server.ServeListener(ctx, ln, time.Second) }()
	b.Cleanup(cancel)
	return "http://" + ln.Addr().String() + app.V1Prefix
}

// call sends method url with key (and body as JSON when not empty) and returns the status and
// the answer's body.
func call(b *testing.B, method, url, key, idem, body string) (int, []byte) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	r, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Body.Close()
	got, err := io.ReadAll(r.Body)
	if err != nil {
		b.Fatal(err)
	}
	return r.StatusCode, got
}

// userKeys hands out keys bound to user, a new one every 500 requests (the 600/min quota).
type userKeys struct {
	co   *apitest.Company
	user operator.User
	key  string
	n    int
}

func (r *userKeys) next(b *testing.B) string {
	if r.n%500 == 0 {
		b.StopTimer() // issuing a key is setup, not the request
		r.key = r.co.UserKey(b, r.user)
		b.StartTimer()
	}
	r.n++
	return r.key
}

// envInt reads a positive number from the environment, else def.
func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number", name, s)
	}
	return n
}

// percentiles sorts lat and returns its p50 and p99.
func percentiles(lat []time.Duration) (p50, p99 time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat[len(lat)/2], lat[len(lat)*99/100]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func uuidArray(ids []uuid.UUID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return "{" + strings.Join(s, ",") + "}"
}

// loadavg is the first three fields of /proc/loadavg ("" where there is none).
func loadavg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// seedContacts writes n contacts of company owned in turn by owners, kunde<i>@example.com for i
// in 0..n-1, with ids md5(company || 'c' || i), straight in SQL as the operator role.
func seedContacts(b *testing.B, env *apitest.Env, company uuid.UUID, owners []uuid.UUID, contacts int) {
	b.Helper()
	ctx := context.Background()
	err := env.Operator(ctx, company, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO contacts (id, company_id, type, first_name, last_name, company_name, email, email_key, owner_id,
			                      tags, labels, custom_fields, groups, sensitive, search_text, sort_name, version, created_at, updated_at)
			SELECT md5($1::uuid::text || 'c' || n)::uuid, $1, 'private', f, l, '', e, e, ($2::uuid[])[1 + n % array_length($2::uuid[], 1)],
			       '[]', '[]', '{}', '{}', '{}', lower(f || E'\n' || l || E'\n' || e || E'\n'), lower(l || ' ' || f), 1, now(), now()
			FROM (SELECT n,
			    (ARRAY['Anna','Ben','Clara','David','Emma','Felix','Greta','Hans','Ida','Jonas','Karla','Lukas','Mia','Noah','Olga','Paul'])[1 + n % 16] AS f,
			    (ARRAY['Müller','Schmidt','Schneider','Fischer','Weber','Meyer','Wagner','Becker','Schulz','Hoffmann','Schäfer','Koch','Bauer','Richter','Klein','Wolf'])[1 + (n / 16) % 16] AS l,
			    'kunde' || n || '@example.com' AS e
			  FROM generate_series(0, $3 - 1) n) s`, company, uuidArray(owners), contacts)
		return err
	})
	if err != nil {
		b.Fatalf("seed contacts: %v", err)
	}
}
