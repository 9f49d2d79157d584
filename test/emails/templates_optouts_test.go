package emails

import (
	"context"
	"database/sql"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

type template struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Subject      string   `json:"subject"`
	Category     *string  `json:"category"`
	Placeholders []string `json:"placeholders"`
	Marketing    bool     `json:"marketing"`
	BodyText     string   `json:"bodyText"`
}

func templates(t *testing.T, env *apitest.Env, key string) []template {
	t.Helper()
	var body struct {
		Data []template `json:"data"`
	}
	r := env.Do(t, apitest.Request{Path: "/email-templates", Key: key})
	if r.Status != 200 {
		t.Fatalf("templates: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &body)
	return body.Data
}

// TestEmailTemplates: a new company (and its sandbox) starts with the German defaults, each
// listing the placeholders of subject and body; the operator adds one (a taken name refused)
// and seeds back a default the company lacks. Catches a company created without templates,
// placeholders taken from the body only, a seed that duplicates what exists.
func TestEmailTemplates(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co, b := newCompany(t, env), newCompany(t, env)
	key := co.KeyWithScopes(t, "emails:read")
	defaults := emails.DefaultTemplates()

	got := templates(t, env, key)
	if len(got) != len(defaults) {
		t.Fatalf("%d templates, want the %d defaults", len(got), len(defaults))
	}
	byName := map[string]template{}
	for _, x := range got {
		byName[x.Name] = x
	}
	tb, ok := byName["Terminbestätigung"]
	if !ok || !slices.Equal(tb.Placeholders, []string{"appointment.date", "appointment.location", "appointment.time",
		"company.name", "contact.firstName", "contact.lastName", "user.name"}) {
		t.Errorf("Terminbestätigung: %+v", tb)
	}
	if !byName["Geburtstagsgruß"].Marketing || byName["Schadenmeldung erhalten"].Marketing {
		t.Errorf("marketing flags: %+v", byName)
	}
	if !slices.IsSortedFunc(got, func(a, b template) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("not sorted by name")
	}
	if n := len(templates(t, env, co.TestSecret)); n != len(defaults) {
		t.Errorf("sandbox has %d templates, want %d", n, len(defaults))
	}

	ctx := context.Background()
	html := "<p>Hallo {{ contact.salutation }}</p>"
	cat := "Service"
	v, err := env.Ops.CreateTemplate(ctx, co.ID, emails.NewTemplate{Name: "Eigene Vorlage", Subject: "Ihr Anliegen, {{contact.lastName}}",
		Text: "Hallo {{contact.firstName}}", HTML: &html, Category: &cat})
	if err != nil {
		t.Fatalf("create template: %v", err)
	}
	if !slices.Equal(v.Placeholders, []string{"contact.firstName", "contact.lastName", "contact.salutation"}) {
		t.Errorf("placeholders %v", v.Placeholders)
	}
	if _, err := env.Ops.CreateTemplate(ctx, co.ID, emails.NewTemplate{Name: "Eigene Vorlage", Text: "x"}); err == nil {
		t.Errorf("a second template of the same name was taken")
	}
	if _, err := env.Ops.CreateTemplate(ctx, co.ID, emails.NewTemplate{Name: "Ohne Text"}); err == nil {
		t.Errorf("a template without text was taken")
	}
	if _, err := env.Ops.CreateTemplate(ctx, co.ID, emails.NewTemplate{Name: "Kopfzeile", Subject: "a\r\nBcc: x@example.com", Text: "x"}); err == nil {
		t.Errorf("a subject with a line break was taken")
	}
	if n := len(templates(t, env, key)); n != len(defaults)+1 {
		t.Errorf("%d templates after create, want %d", n, len(defaults)+1)
	}
	if n := len(templates(t, env, b.Secret)); n != len(defaults) {
		t.Errorf("company B sees %d templates, want its %d", n, len(defaults))
	}

	added, err := env.Ops.SeedTemplates(ctx, co.ID)
	if err != nil || len(added) != 0 {
		t.Errorf("seed on a complete company added %d (%v)", len(added), err)
	}
	err = env.Operator(ctx, co.ID, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM email_templates WHERE company_id = $1 AND name = 'Geburtstagsgruß'`, co.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	added, err = env.Ops.SeedTemplates(ctx, co.ID)
	if err != nil || len(added) != 1 || added[0].Name != "Geburtstagsgruß" {
		t.Errorf("seed added %+v (%v), want Geburtstagsgruß", added, err)
	}

	env.Run(t, []apitest.Case{
		{Name: "scope missing", Key: co.KeyWithScopes(t, "marketing:read"), Path: "/email-templates", Status: 403, Problem: "insufficient_scope"},
		{Name: "feature emails missing", Key: env.NewCompany(t, "marketing").Secret, Path: "/email-templates", Status: 403,
			Problem: "feature_not_licensed"},
		{Name: "no credential", Path: "/email-templates", Status: 401},
	})
}

type optOut struct {
	ID     string `json:"id"`
	Email  string `json:"email"`
	Reason string `json:"reason"`
	Source string `json:"source"`
}

type event struct {
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

func events(t *testing.T, env *apitest.Env, key, types string) []event {
	t.Helper()
	var p apitest.Page[event]
	r := env.Do(t, apitest.Request{Path: "/events?limit=200&types=" + types, Key: key})
	if r.Status != 200 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &p)
	return p.Data
}

// TestEmailOptOuts: create (lower case, 201, then 200 with the entry as it is), list newest
// first with the exact filter, delete only with a consent reference (kept in the event), and
// the errors. Catches a duplicate row or a second event on a repeated POST, a case-sensitive
// list, a DELETE without documented consent, another company's entry reachable.
func TestEmailOptOuts(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co, b := newCompany(t, env), newCompany(t, env)
	key := co.KeyWithScopes(t, "marketing:write")

	first := apitest.Create[optOut](t, env, key, "/email-opt-outs", map[string]any{"email": " Max.Mustermann@Example.DE ",
		"reason": "Widerspruch am Telefon"})
	if first.Email != "max.mustermann@example.de" || first.Source != "api" || first.Reason != "Widerspruch am Telefon" {
		t.Errorf("created %+v", first)
	}
	second := apitest.Create[optOut](t, env, key, "/email-opt-outs", map[string]any{"email": "erika@example.de"})
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/email-opt-outs", Key: key,
		Body: map[string]any{"email": "MAX.mustermann@example.de", "reason": "anders"}})
	var again optOut
	r.Decode(t, &again)
	if r.Status != 200 || again.ID != first.ID || again.Reason != "Widerspruch am Telefon" {
		t.Errorf("repeated POST: %d %+v, want 200 with the first entry", r.Status, again)
	}

	var page apitest.Page[optOut]
	env.Do(t, apitest.Request{Path: "/email-opt-outs", Key: key}).Decode(t, &page)
	if len(page.Data) != 2 || page.Data[0].ID != second.ID || page.Data[1].ID != first.ID {
		t.Errorf("list %+v, want newest first", page.Data)
	}
	page = apitest.Page[optOut]{}
	env.Do(t, apitest.Request{Path: "/email-opt-outs?limit=1", Key: key}).Decode(t, &page)
	if len(page.Data) != 1 || !page.Pagination.HasMore {
		t.Errorf("limit=1: %+v", page)
	}
	next := apitest.Get[apitest.Page[optOut]](t, env, key, "/email-opt-outs?limit=1&cursor="+url.QueryEscape(page.Pagination.NextCursor))
	if len(next.Data) != 1 || next.Data[0].ID != first.ID {
		t.Errorf("second page %+v", next.Data)
	}
	filtered := apitest.Get[apitest.Page[optOut]](t, env, key, "/email-opt-outs?email="+url.QueryEscape("MAX.Mustermann@example.de"))
	if len(filtered.Data) != 1 || filtered.Data[0].ID != first.ID {
		t.Errorf("?email: %+v", filtered.Data)
	}
	if n := len(events(t, env, co.Secret, "email_opt_out.created")); n != 2 {
		t.Errorf("%d email_opt_out.created events, want 2 (none for the repeat)", n)
	}

	del := "/email-opt-outs/" + url.PathEscape("Max.Mustermann@example.de")
	long := strings.Repeat("x", 501)
	env.Run(t, []apitest.Case{
		{Name: "email missing", Key: key, Method: "POST", Path: "/email-opt-outs", Body: map[string]any{"reason": "x"}, Status: 422,
			Check: apitest.FieldErrors("email:required")},
		{Name: "not an address, reason too long", Key: key, Method: "POST", Path: "/email-opt-outs",
			Body: map[string]any{"email": "kein-at", "reason": long}, Status: 422,
			Check: apitest.FieldErrorSet("email:invalid_email", "reason:too_long")},
		{Name: "address too long", Key: key, Method: "POST", Path: "/email-opt-outs",
			Body: map[string]any{"email": strings.Repeat("a", 310) + "@example.de"}, Status: 422, Check: apitest.FieldErrors("email:too_long")},
		{Name: "unknown field", Key: key, Method: "POST", Path: "/email-opt-outs", Body: map[string]any{"email": "a@example.de", "source": "unsubscribe"},
			Status: 422},
		{Name: "malformed JSON", Key: key, Method: "POST", Path: "/email-opt-outs", Body: "{", Status: 400},
		{Name: "write scope needed", Key: co.KeyWithScopes(t, "marketing:read"), Method: "POST", Path: "/email-opt-outs",
			Body: map[string]any{"email": "a@example.de"}, Status: 403, Problem: "insufficient_scope"},
		{Name: "read scope lists", Key: co.KeyWithScopes(t, "marketing:read"), Path: "/email-opt-outs", Status: 200},
		{Name: "emails scope does not list", Key: co.KeyWithScopes(t, "emails:read"), Path: "/email-opt-outs", Status: 403,
			Problem: "insufficient_scope"},
		{Name: "feature marketing missing", Key: env.NewCompany(t, "emails").Secret, Path: "/email-opt-outs", Status: 403,
			Problem: "feature_not_licensed"},
		{Name: "other company does not see A's list", Key: b.Secret, Path: "/email-opt-outs?email=erika@example.de", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[optOut]
				r.Decode(t, &p)
				if len(p.Data) != 0 {
					t.Errorf("B sees %+v", p.Data)
				}
			}},
		{Name: "delete without consentReference", Key: key, Method: "DELETE", Path: del, Status: 422,
			Check: apitest.FieldErrors("consentReference:required")},
		{Name: "delete with a blank consentReference", Key: key, Method: "DELETE", Path: del + "?consentReference=%20", Status: 422,
			Check: apitest.FieldErrors("consentReference:required")},
		{Name: "delete with a too long consentReference", Key: key, Method: "DELETE", Path: del + "?consentReference=" + strings.Repeat("r", 201),
			Status: 422, Check: apitest.FieldErrors("consentReference:too_long")},
		{Name: "other company cannot delete A's entry", Key: b.Secret, Method: "DELETE", Path: del + "?consentReference=x", Status: 404},
		{Name: "delete needs the write scope", Key: co.KeyWithScopes(t, "marketing:read"), Method: "DELETE", Path: del + "?consentReference=x",
			Status: 403, Problem: "insufficient_scope"},
		{Name: "delete with renewed consent", Key: key, Method: "DELETE", Path: del + "?consentReference=Einwilligung-0815", Status: 204},
		{Name: "delete again is 404", Key: key, Method: "DELETE", Path: del + "?consentReference=Einwilligung-0815", Status: 404},
		{Name: "delete of an address never listed", Key: key, Method: "DELETE", Path: "/email-opt-outs/nie%40example.de?consentReference=x",
			Status: 404},
	})
	ev := events(t, env, co.Secret, "email_opt_out.deleted")
	if len(ev) != 1 || ev[0].Data["consentReference"] != "Einwilligung-0815" || ev[0].Data["email"] != "max.mustermann@example.de" {
		t.Errorf("deleted events %+v", ev)
	}
	rest := apitest.Get[apitest.Page[optOut]](t, env, key, "/email-opt-outs")
	if len(rest.Data) != 1 || rest.Data[0].ID != second.ID {
		t.Errorf("after delete: %+v", rest.Data)
	}
	// Added again after the delete: a new entry (201), as the unsubscribe link would add it.
	apitest.Create[optOut](t, env, key, "/email-opt-outs", map[string]any{"email": "max.mustermann@example.de"})
}
