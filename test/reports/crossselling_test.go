package reports

import (
	"slices"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestReports_CrossSelling(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	agent := env.NewUser(t, co, "agent")
	keyA := co.UserKey(t, agent)
	ins := insurerID(t, env, co.Secret, "5501")
	with := func(contact string, held ...string) string {
		for _, h := range held {
			typ, status, _ := strings.Cut(h, ":")
			if status == "" {
				status = "active"
			}
			mustContract(t, env, co.Secret, ct{Contact: contact, Insurer: ins, Type: typ, Status: status})
		}
		return contact
	}
	p1 := with(mustContact(t, env, co, "private", "P1", &agent.ID), "041", "130")              // lacks 010, 070, 030: 50
	p2 := with(mustContact(t, env, co, "private", "P2", &agent.ID), "011")                     // lacks 041, 130, 070, 030: 80
	_ = with(mustContact(t, env, co, "private", "P3", nil), "041", "010", "130", "071", "030") // lacks nothing
	_ = with(mustContact(t, env, co, "private", "P4", nil), "041:offer")                       // no customer yet
	p5 := with(mustContact(t, env, co, "private", "P5", nil), "130", "041:offer")              // the offer holds 041: 50
	p6 := with(mustContact(t, env, co, "private", "P6", nil), "041:cancelled", "130")          // cancelled holds nothing: 80
	b1 := with(mustContact(t, env, co, "business", "B1 GmbH", nil), "042")                     // lacks 080, 044, 070, 230: 65
	_ = with(mustContact(t, env, co, "business", "B2 AG", nil), "040", "080", "231", "076", "044")
	_ = mustContact(t, env, co, "private", "P7", nil) // no contracts at all: a prospect, not listed

	pair := func(a, b string) []string {
		if b < a {
			return []string{b, a}
		}
		return []string{a, b}
	}
	id := func(x crossItem) string { return x.Contact.ID }

	t.Run("score desc then id, paged at every size", func(t *testing.T) {
		// Catches: offers not holding a cover, cancelled contracts holding one, business rules
		// applied to private contacts, prospects listed, unstable paging on equal scores.
		want := slices.Concat(pair(p2, p6), []string{b1}, pair(p1, p5))
		for _, limit := range []int{1, 2, 3, 50} {
			if got := walk[crossItem](t, env, co.Secret, "/reports/cross-selling?", limit, id); !slices.Equal(got, want) {
				t.Errorf("limit %d: %v, want %v", limit, got, want)
			}
		}
	})
	t.Run("gaps and score of an item", func(t *testing.T) {
		page := apitest.Get[crossPage](t, env, co.Secret, "/reports/cross-selling?gap=230")
		if len(page.Data) != 1 || page.Data[0].Contact.ID != b1 {
			t.Fatalf("gap 230: %+v", page.Data)
		}
		b := page.Data[0]
		var gaps []string
		for _, g := range b.Gaps {
			gaps = append(gaps, g.Type)
		}
		if b.Score != 65 || !slices.Equal(gaps, []string{"080", "044", "070", "230"}) || b.Gaps[0].Weight != 20 ||
			b.Contact.Name != "B1 GmbH" || b.Contact.Type != "business" || b.Gaps[0].Label != "Feuerversicherung" {
			t.Errorf("B1 %+v", b)
		}
		r := env.Do(t, apitest.Request{Path: "/reports/cross-selling?gap=230", Key: co.Secret, Header: map[string]string{"Accept-Language": "en"}})
		if !strings.Contains(string(r.Body), `"label":"Fire insurance"`) {
			t.Errorf("english labels: %s", r.Body)
		}
	})
	t.Run("gap filter", func(t *testing.T) {
		if got := walk[crossItem](t, env, co.Secret, "/reports/cross-selling?gap=041", 50, id); !slices.Equal(got, pair(p2, p6)) {
			t.Errorf("gap 041: %v", got)
		}
		if got := walk[crossItem](t, env, co.Secret, "/reports/cross-selling?gap=044", 50, id); !slices.Equal(got, []string{b1}) {
			t.Errorf("gap 044: %v", got)
		}
	})
	t.Run("an agent's report covers its own contacts only", func(t *testing.T) {
		if got := walk[crossItem](t, env, keyA, "/reports/cross-selling?", 50, id); !slices.Equal(got, []string{p2, p1}) {
			t.Errorf("agent %v, want [%s %s]", got, p2, p1)
		}
	})

	p := apitest.Get[crossPage](t, env, co.Secret, "/reports/cross-selling?limit=1")
	env.Run(t, []apitest.Case{
		{Name: "no key", Path: "/reports/cross-selling", Status: 401},
		{Name: "scope missing", Key: co.KeyWithScopes(t, "contacts:read"), Path: "/reports/cross-selling", Status: 403},
		// Catches: a typo read as "no gaps" (an empty report instead of an error).
		{Name: "gap outside the rule table", Key: co.Secret, Path: "/reports/cross-selling?gap=999&limit=500", Status: 422,
			Check: apitest.FieldErrorSet("gap:invalid_enum", "limit:out_of_range")},
		{Name: "cursor of another filter", Key: co.Secret, Path: "/reports/cross-selling?gap=041&cursor=" + p.Pagination.NextCursor,
			Status: 422, Check: apitest.FieldErrors("cursor:cursor_mismatch")},
		{Name: "not a cursor", Key: co.Secret, Path: "/reports/cross-selling?cursor=abc", Status: 422,
			Check: apitest.FieldErrors("cursor:invalid_cursor")},
	})
}
