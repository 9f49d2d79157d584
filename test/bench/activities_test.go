package bench

import (
	"context"
	"database/sql"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// BenchmarkActivitiesPage: GET /contacts/{id}/activities?limit=50 on a contact with 20,000
// timeline entries, in a company of 2,000 contacts of 20 agents, for the owning agent's key
// (row-level security and the ent rule check the contact's visibility) against the admin's
// (visibility all), first page and page 100. The visibility layer should cost little: every
// row of the page belongs to the same contact.
func BenchmarkActivitiesPage(b *testing.B) {
	env := apitest.New(b)
	ctx := context.Background()
	co := env.NewCompany(b)
	var agents []operator.User
	for range 20 {
		agents = append(agents, env.NewUser(b, co, "agent"))
	}
	x := uuid.Must(uuid.NewV7())
	err := env.Pinned(ctx, co.ID, func(tx *sql.Tx) error {
		for i, a := range agents {
			if _, err := tx.Exec(`INSERT INTO contacts (tags, labels, custom_fields, groups, sensitive, sort_name, search_text, id, company_id, type, first_name, last_name, company_name, owner_id, version, created_at, updated_at)
				SELECT '[]', '[]', '{}', '{}', '{}', '', '', gen_random_uuid(), $1, 'private', 'F', 'L' || n, '', $2, 1, now(), now() FROM generate_series(1, 100) n`, co.ID, a.ID); err != nil {
				return err
			}
			if i == 0 {
				if _, err := tx.Exec(`INSERT INTO contacts (tags, labels, custom_fields, groups, sensitive, sort_name, search_text, id, company_id, type, first_name, last_name, company_name, owner_id, version, created_at, updated_at)
					VALUES ('[]', '[]', '{}', '{}', '{}', '', '', $1, $2, 'private', 'X', 'X', '', $3, 1, now(), now())`, x, co.ID, a.ID); err != nil {
					return err
				}
			}
		}
		_, err := tx.Exec(`INSERT INTO contact_activities (id, company_id, contact_id, kind, event, content, occurred_at, version, created_at, updated_at)
			SELECT gen_random_uuid(), $1, $2, CASE WHEN n % 3 = 0 THEN 'system' ELSE 'note' END, '', 'Notiz ' || n,
			       now() - n * interval '1 minute', 1, now(), now() FROM generate_series(1, 20000) n`, co.ID, x)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	owner, err := sql.Open("pgx", env.OwnerURL)
	if err != nil {
		b.Fatal(err)
	}
	defer owner.Close()
	if _, err := owner.ExecContext(ctx, "ANALYZE contacts; ANALYZE contact_activities"); err != nil {
		b.Fatal(err)
	}
	base := "/contacts/" + x.String() + "/activities?limit=50"
	for _, who := range []struct {
		name string
		user operator.User
	}{{"admin", co.Admin}, {"agent", agents[0]}} {
		n := 0
		var key string
		next := func() string {
			if n%500 == 0 {
				b.StopTimer()
				key = co.UserKey(b, who.user)
				b.StartTimer()
			}
			n++
			return key
		}
		cursor := ""
		for range 99 {
			var p struct {
				Pagination struct{ NextCursor string } `json:"pagination"`
			}
			env.Do(b, apitest.Request{Path: base + "&cursor=" + cursor, Key: next()}).Decode(b, &p)
			cursor = p.Pagination.NextCursor
		}
		for _, page := range []struct{ name, path string }{{"page-1", base}, {"page-100", base + "&cursor=" + cursor}} {
			b.Run(who.name+"/"+page.name, func(b *testing.B) {
				var lat []time.Duration
				for b.Loop() {
					t0 := time.Now()
					r := env.Do(b, apitest.Request{Path: page.path, Key: next()})
					lat = append(lat, time.Since(t0))
					if r.Status != 200 {
						b.Fatalf("%d %s", r.Status, r.Body)
					}
				}
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
	}
}
