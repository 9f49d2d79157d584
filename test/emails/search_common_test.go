package emails

import (
	"context"
	"net/url"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestEmailThreads_SearchCommonTerm: a term in 500 or more messages takes the other form of
// the search (a probe per thread walked instead of the trigram index's matches); it must find
// exactly what the rare form finds, under the same visibility, page after page. 600 threads in
// a shared mailbox and 300 in another agent's personal one carry "kündigung"; 30 shared ones a
// rare word. Catches the common form matching other threads than the rare one (a LIKE without
// the escape, a probe not tied to its thread or company), leaking the other agent's threads,
// or paging through it wrongly.
func TestEmailThreads_SearchCommonTerm(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := newCompany(t, env)
	agent, other := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	shared, personal := mailbox(t, env, co, nil), mailbox(t, env, co, &other.ID)
	env.InCompany(t, co.ID, func(ctx context.Context, db *ent.Client) error {
		_, err := db.ExecContext(ctx, `
			WITH th AS (
				INSERT INTO email_threads (id, company_id, created_at, updated_at, mailbox_id, subject, subject_key, last_message_at, message_count)
				SELECT gen_random_uuid(), $1, now(), now(), CASE WHEN g <= 600 THEN $2::uuid ELSE $3::uuid END, 'Vertrag ' || g, 'vertrag ' || g,
				       now() - g * interval '1 minute', 1
				FROM generate_series(1, 900) g
				RETURNING id, mailbox_id, subject)
			INSERT INTO emails (id, company_id, created_at, updated_at, thread_id, mailbox_id, direction, status, message_id, "references",
			                    "to", cc, bcc, subject, text_body, search_text)
			SELECT gen_random_uuid(), $1, now(), now(), th.id, th.mailbox_id, 'inbound', 'received', gen_random_uuid()::text || '@example.com',
			       '[]', '[]', '[]', '[]', th.subject, 'Kündigung',
			       lower(th.subject) || ' kündigung' || CASE WHEN right(th.subject, 1) = '7' AND th.mailbox_id = $2::uuid THEN ' elementarschaden' ELSE '' END
			FROM th`, co.ID, shared, personal)
		return err
	})
	all := func(key, q string) []string {
		t.Helper()
		var ids []string
		path := "/email-threads?limit=200&q=" + url.QueryEscape(q)
		for path != "" {
			r := env.Do(t, apitest.Request{Path: path, Key: key})
			if r.Status != 200 {
				t.Fatalf("%s: %d %s", path, r.Status, r.Body)
			}
			var p apitest.Page[threadView]
			r.Decode(t, &p)
			for _, x := range p.Data {
				ids = append(ids, x.ID)
			}
			path = ""
			if p.Pagination.HasMore {
				path = "/email-threads?limit=200&q=" + url.QueryEscape(q) + "&cursor=" + url.QueryEscape(p.Pagination.NextCursor)
			}
		}
		return ids
	}
	unique := func(ids []string) int {
		m := map[string]bool{}
		for _, id := range ids {
			if _, err := uuid.Parse(id); err == nil {
				m[id] = true
			}
		}
		return len(m)
	}
	for _, c := range []struct {
		name, key, q string
		want         int
	}{
		{"company key, common term", co.Secret, "kündigung", 900},
		{"agent, common term: the shared mailbox only", co.UserKey(t, agent), "kündigung", 600},
		{"owner of the personal mailbox, common term", co.UserKey(t, other), "kündigung", 900},
		{"agent, rare term", co.UserKey(t, agent), "elementarschaden", 60},
		{"agent, common term narrowed by the subject", co.UserKey(t, agent), "vertrag 12", 11},
	} {
		got := all(c.key, c.q)
		if len(got) != c.want || unique(got) != c.want {
			t.Errorf("%s: %d threads (%d distinct), want %d", c.name, len(got), unique(got), c.want)
		}
	}
}
