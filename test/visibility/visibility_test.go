// Package visibility proves issue 8's rule: a user-bound credential sees only its user's own
// contacts and leads, those delegated to it (while the delegation lasts), or all of them when
// its role may; company-level credentials see all. An invisible row is a 404 everywhere and
// leaves no trace in any list or in the event feed.
package visibility

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// world is one company with the matrix's credentials.
type world struct {
	env                    *apitest.Env
	co, other              *apitest.Company
	agentA, agentB, agentD operator.User
	agentE, manager        operator.User
	keys                   map[string]string // credential name -> key
	seesA, seesUnowned     map[string]bool   // credential name -> sees A's rows / unowned rows
	mail                   *mailWorld        // the e-mail fixtures, made on first use (w.mailboxes)
}

// newWorld builds the world on the package's server, or with opts on a server of its own.
func newWorld(t *testing.T, opts ...app.Option) *world {
	env := apitest.New(t, opts...)
	// The e-mail area (issue 21) needs its features: emails for mail, marketing for opt-outs
	// and tracked mail; the signing area (issue 22) digital_signature and advice.
	w := &world{env: env, co: env.NewCompany(t, "leads", "emails", "marketing", "digital_signature", "advice", "customer_portal"), other: env.NewCompany(t)}
	w.agentA = env.NewUser(t, w.co, "agent")
	w.agentB = env.NewUser(t, w.co, "agent")
	w.agentD = env.NewUser(t, w.co, "agent") // B with a delegation from A
	w.agentE = env.NewUser(t, w.co, "agent") // B after the delegation expired
	w.manager = env.NewUser(t, w.co, "manager")
	w.co.Delegate(t, w.agentA.ID, w.agentD.ID, nil)
	past := time.Now().Add(-time.Hour)
	w.co.Delegate(t, w.agentA.ID, w.agentE.ID, &past)
	sandboxAgentA := w.co.Key(t, operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvTest, UserID: &w.agentA.ID}).Secret
	w.keys = map[string]string{
		"admin user key":          w.co.UserKey(t, w.co.Admin),
		"manager key":             w.co.UserKey(t, w.manager),
		"agent A key":             w.co.UserKey(t, w.agentA),
		"agent B key":             w.co.UserKey(t, w.agentB),
		"agent B with delegation": w.co.UserKey(t, w.agentD),
		"agent B after expiry":    w.co.UserKey(t, w.agentE),
		"company key":             w.co.Secret,
		"other company's key":     w.other.Secret,
		"sandbox key":             w.co.TestSecret,
		"agent A's sandbox key":   sandboxAgentA,
		// OAuth access tokens (issue 9): a user's grant through the real code flow acts as a key
		// bound to that user, a company-bound client's client credentials as the company key.
		"agent A token":    w.co.UserOAuthToken(t, w.agentA).AccessToken,
		"agent B token":    w.co.UserOAuthToken(t, w.agentB).AccessToken,
		"admin user token": w.co.UserOAuthToken(t, w.co.Admin).AccessToken,
		"company token":    w.co.OAuthToken(t, "live"),
	}
	w.seesA = map[string]bool{"admin user key": true, "manager key": true, "agent A key": true,
		"agent B with delegation": true, "company key": true,
		"agent A token": true, "admin user token": true, "company token": true}
	w.seesUnowned = map[string]bool{"admin user key": true, "manager key": true, "company key": true,
		"admin user token": true, "company token": true}
	return w
}

type lead struct {
	ID      string  `json:"id"`
	OwnerID *string `json:"ownerId"`
	Version int64   `json:"version"`
}

func (w *world) createLead(t *testing.T, key string, body map[string]any) lead {
	t.Helper()
	r := w.env.Do(t, apitest.Request{Method: "POST", Path: "/leads", Key: key, Body: body})
	if r.Status != 201 {
		t.Fatalf("create lead: %d %s", r.Status, r.Body)
	}
	var l lead
	r.Decode(t, &l)
	return l
}

func (w *world) leadIDs(t *testing.T, key string) []string {
	t.Helper()
	r := w.env.Do(t, apitest.Request{Path: "/leads?limit=100", Key: key})
	if r.Status != 200 {
		t.Fatalf("list leads: %d %s", r.Status, r.Body)
	}
	var page struct{ Data []lead }
	r.Decode(t, &page)
	var ids []string
	for _, l := range page.Data {
		ids = append(ids, l.ID)
	}
	return ids
}

// eventSubjects returns the ids of the resources in the feed's events of types, for key.
func (w *world) eventSubjects(t *testing.T, key, types string) []string {
	t.Helper()
	r := w.env.Do(t, apitest.Request{Path: "/events?limit=100&types=" + types, Key: key})
	if r.Status != 200 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	var page struct {
		Data []struct {
			Data json.RawMessage `json:"data"`
		}
	}
	r.Decode(t, &page)
	var ids []string
	for _, e := range page.Data {
		var d struct{ ID string }
		_ = json.Unmarshal(e.Data, &d)
		ids = append(ids, d.ID)
	}
	return ids
}

func TestVisibility_Leads(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ofA := w.createLead(t, w.co.Secret, map[string]any{"lastName": "Müller", "email": "a@example.com", "ownerId": w.agentA.ID})
	unowned := w.createLead(t, w.co.Secret, map[string]any{"lastName": "Niemand", "email": "n@example.com"})

	for name, key := range w.keys {
		t.Run(name, func(t *testing.T) {
			want := 404
			if w.seesA[name] {
				want = 200
			}
			r := w.env.Do(t, apitest.Request{Path: "/leads/" + ofA.ID, Key: key})
			if r.Status != want {
				t.Fatalf("GET A's lead: %d, want %d: %s", r.Status, want, r.Body)
			}
			if want == 404 && r.Problem(t).Code != "not_found" {
				t.Errorf("code %q, want not_found", r.Problem(t).Code)
			}
			wantUnowned := 404
			if w.seesUnowned[name] {
				wantUnowned = 200
			}
			if r := w.env.Do(t, apitest.Request{Path: "/leads/" + unowned.ID, Key: key}); r.Status != wantUnowned {
				t.Errorf("GET the unowned lead: %d, want %d", r.Status, wantUnowned)
			}
			ids := w.leadIDs(t, key)
			if slices.Contains(ids, ofA.ID) != w.seesA[name] {
				t.Errorf("list has A's lead: %v, want %v", slices.Contains(ids, ofA.ID), w.seesA[name])
			}
			if slices.Contains(ids, unowned.ID) != w.seesUnowned[name] {
				t.Errorf("list has the unowned lead: %v, want %v", slices.Contains(ids, unowned.ID), w.seesUnowned[name])
			}
			evs := w.eventSubjects(t, key, "lead.created")
			if slices.Contains(evs, ofA.ID) != w.seesA[name] {
				t.Errorf("feed has A's lead.created: %v, want %v", slices.Contains(evs, ofA.ID), w.seesA[name])
			}
			if slices.Contains(evs, unowned.ID) != w.seesUnowned[name] {
				t.Errorf("feed has the unowned lead.created: %v, want %v", slices.Contains(evs, unowned.ID), w.seesUnowned[name])
			}
			// Writes: an invisible lead cannot be changed or deleted (404); a visible one can.
			patch := w.env.Do(t, apitest.Request{Method: "PATCH", Path: "/leads/" + ofA.ID, Key: key,
				Header: map[string]string{"Content-Type": "application/merge-patch+json"}, Body: map[string]any{"notes": name}})
			if patch.Status != want {
				t.Errorf("PATCH A's lead: %d, want %d: %s", patch.Status, want, patch.Body)
			}
			if want == 404 {
				if r := w.env.Do(t, apitest.Request{Method: "DELETE", Path: "/leads/" + ofA.ID, Key: key}); r.Status != 404 {
					t.Errorf("DELETE A's lead: %d, want 404", r.Status)
				}
			}
		})
	}
}

func TestVisibility_AgentCreatesAndHandsOver(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	keyA, keyB := w.keys["agent A key"], w.keys["agent B key"]

	own := w.createLead(t, keyA, map[string]any{"lastName": "Eigen", "email": "e@example.com", "ownerId": w.agentA.ID})
	forB := w.createLead(t, keyA, map[string]any{"lastName": "Für B", "email": "b@example.com", "ownerId": w.agentB.ID})
	if forB.OwnerID == nil || *forB.OwnerID != w.agentB.ID.String() {
		t.Fatalf("created for B: %+v", forB)
	}
	w.env.Run(t, []apitest.Case{
		{Name: "A created a lead for B and no longer sees it", Key: keyA, Path: "/leads/" + forB.ID, Status: 404, Problem: "not_found"},
		{Name: "B sees it", Key: keyB, Path: "/leads/" + forB.ID, Status: 200},
		{Name: "A gives its own lead to B: the answer shows it once", Key: keyA, Method: "PATCH", Path: "/leads/" + own.ID,
			Header: map[string]string{"Content-Type": "application/merge-patch+json"}, Body: map[string]any{"ownerId": w.agentB.ID},
			Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				var l lead
				r.Decode(t, &l)
				if l.OwnerID == nil || *l.OwnerID != w.agentB.ID.String() {
					t.Errorf("owner %v, want B", l.OwnerID)
				}
			}},
		{Name: "then A gets 404", Key: keyA, Path: "/leads/" + own.ID, Status: 404},
		{Name: "and B 200", Key: keyB, Path: "/leads/" + own.ID, Status: 200},
	})
	// The feed: lead.updated of the handover belongs to B now; A keeps lead.created of its time.
	evA := w.eventSubjects(t, keyA, "lead.updated")
	evB := w.eventSubjects(t, keyB, "lead.updated")
	if slices.Contains(evA, own.ID) || !slices.Contains(evB, own.ID) {
		t.Errorf("lead.updated after the handover: A sees %v, B sees %v", evA, evB)
	}
	if created := w.eventSubjects(t, keyA, "lead.created"); !slices.Contains(created, own.ID) || slices.Contains(created, forB.ID) {
		t.Errorf("A's lead.created: %v (own %s, for B %s)", created, own.ID, forB.ID)
	}
}

func TestVisibility_Delegations(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	admin := w.co.Secret
	ofA := w.createLead(t, admin, map[string]any{"lastName": "Delegiert", "email": "d@example.com", "ownerId": w.agentA.ID})
	keyB := w.keys["agent B key"]
	base := "/users/" + w.agentA.ID.String() + "/delegations"
	var created struct {
		ID         string  `json:"id"`
		DelegateID string  `json:"delegateId"`
		ValidUntil *string `json:"validUntil"`
		Active     bool    `json:"active"`
	}
	future := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	w.env.Run(t, []apitest.Case{
		{Name: "B does not see A's lead yet", Key: keyB, Path: "/leads/" + ofA.ID, Status: 404},
		{Name: "an agent may not delegate", Key: w.keys["agent A key"], Method: "POST", Path: base,
			Body: map[string]any{"delegateId": w.agentB.ID}, Status: 403, Problem: "role_forbidden"},
		{Name: "a key without admin:write may not", Key: w.co.KeyWithScopes(t, "users:write"), Method: "POST", Path: base,
			Body: map[string]any{"delegateId": w.agentB.ID}, Status: 403, Problem: "insufficient_scope"},
		{Name: "A delegates to B", Key: admin, Method: "POST", Path: base,
			Body: map[string]any{"delegateId": w.agentB.ID, "validUntil": future}, Status: 201,
			Check: func(t *testing.T, r *apitest.Response) {
				r.Decode(t, &created)
				if created.DelegateID != w.agentB.ID.String() || !created.Active || created.ValidUntil == nil {
					t.Errorf("created %+v", created)
				}
				if loc := r.Header.Get("Location"); loc != "/api/public/v1"+base+"/"+created.ID {
					t.Errorf("Location %q", loc)
				}
			}},
		{Name: "B sees A's lead now", Key: keyB, Path: "/leads/" + ofA.ID, Status: 200},
		{Name: "the same pair again", Key: admin, Method: "POST", Path: base,
			Body: map[string]any{"delegateId": w.agentB.ID}, Status: 409, Problem: "delegation_exists"},
		{Name: "to oneself", Key: admin, Method: "POST", Path: base,
			Body: map[string]any{"delegateId": w.agentA.ID}, Status: 422},
		{Name: "until the past", Key: admin, Method: "POST", Path: base,
			Body: map[string]any{"delegateId": w.manager.ID, "validUntil": "2020-01-01T00:00:00Z"}, Status: 422},
		{Name: "without a delegate", Key: admin, Method: "POST", Path: base, Body: map[string]any{}, Status: 422},
		{Name: "to a user of another company", Key: admin, Method: "POST", Path: base,
			Body: map[string]any{"delegateId": w.other.Admin.ID}, Status: 422},
		{Name: "unknown delegator", Key: admin, Method: "POST", Path: "/users/" + uuid.NewString() + "/delegations",
			Body: map[string]any{"delegateId": w.agentB.ID}, Status: 404},
		{Name: "malformed delegator", Key: admin, Method: "POST", Path: "/users/x/delegations",
			Body: map[string]any{"delegateId": w.agentB.ID}, Status: 400},
		{Name: "malformed body", Key: admin, Method: "POST", Path: base, Body: "{", Status: 400},
		{Name: "list", Key: admin, Path: base, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var page struct {
				Data []struct{ ID, DelegateID string }
			}
			r.Decode(t, &page)
			// newWorld delegated A to D and (expired) to E; then B.
			if len(page.Data) != 3 || page.Data[2].DelegateID != w.agentB.ID.String() {
				t.Errorf("list %s", r.Body)
			}
		}},
		{Name: "another company lists none of them", Key: w.other.Secret, Path: base, Status: 404},
		{Name: "another company cannot delete it", Key: w.other.Secret, Method: "DELETE",
			Path: base + "/" + "00000000-0000-0000-0000-000000000000", Status: 404},
	})
	w.env.Run(t, []apitest.Case{
		{Name: "another company's key on the real id", Key: w.other.Secret, Method: "DELETE", Path: base + "/" + created.ID, Status: 404},
		{Name: "delete", Key: admin, Method: "DELETE", Path: base + "/" + created.ID, Status: 204},
		{Name: "delete again", Key: admin, Method: "DELETE", Path: base + "/" + created.ID, Status: 404},
		{Name: "B no longer sees A's lead", Key: keyB, Path: "/leads/" + ofA.ID, Status: 404},
	})
}

func TestVisibility_CLI(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	co, from, to := w.co.ID.String(), w.agentB.ID.String(), w.agentA.ID.String()
	out := w.env.CLI(t, "delegation", "create", "--company", co, "--from", from, "--to", to, "--json")
	var d struct{ ID, DelegatorID, DelegateID string }
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.DelegateID != to {
		t.Fatalf("create: %v %s", err, out)
	}
	ofB := w.createLead(t, w.co.Secret, map[string]any{"lastName": "B", "email": "bb@example.com", "ownerId": w.agentB.ID})
	if r := w.env.Do(t, apitest.Request{Path: "/leads/" + ofB.ID, Key: w.keys["agent A key"]}); r.Status != 200 {
		t.Errorf("A after the CLI delegation: %d", r.Status)
	}
	if out := w.env.CLI(t, "delegation", "list", "--company", co, "--from", from); !strings.Contains(out, d.ID) {
		t.Errorf("list: %s", out)
	}
	w.env.CLI(t, "delegation", "delete", "--company", co, "--from", from, d.ID)
	if r := w.env.Do(t, apitest.Request{Path: "/leads/" + ofB.ID, Key: w.keys["agent A key"]}); r.Status != 404 {
		t.Errorf("A after the CLI deletion: %d", r.Status)
	}
}

// Conversion: an agent converts its lead into a contact for a colleague (allowed, the answer
// shows it once); an invisible contact as existingContactId is refused exactly like another
// company's or none at all (404 not_found), so its existence does not leak; the contact.created event
// reaches only who may see the contact.
func TestVisibility_Convert(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	keyA, keyB := w.keys["agent A key"], w.keys["agent B key"]
	convert := func(key, leadID string, body any) *apitest.Response {
		return w.env.Do(t, apitest.Request{Method: "POST", Path: "/leads/" + leadID + "/convert", Key: key, Body: body})
	}
	type result struct {
		Contact struct {
			ID      string  `json:"id"`
			OwnerID *string `json:"ownerId"`
		} `json:"contact"`
	}

	l1 := w.createLead(t, keyA, map[string]any{"firstName": "Eva", "lastName": "Fuchs", "email": "eva@example.com", "ownerId": w.agentA.ID})
	r := convert(keyA, l1.ID, map[string]any{"contactType": "private", "overrides": map[string]any{"ownerId": w.agentB.ID}})
	if r.Status != 201 {
		t.Fatalf("A converts for B: %d %s", r.Status, r.Body)
	}
	var res result
	r.Decode(t, &res)
	if res.Contact.OwnerID == nil || *res.Contact.OwnerID != w.agentB.ID.String() {
		t.Fatalf("contact owner %v, want B", res.Contact.OwnerID)
	}
	forB := res.Contact.ID
	if evs := w.eventSubjects(t, keyA, "contact.created"); slices.Contains(evs, forB) {
		t.Errorf("A's feed has contact.created of B's contact")
	}
	if evs := w.eventSubjects(t, keyB, "contact.created"); !slices.Contains(evs, forB) {
		t.Errorf("B's feed lacks contact.created of its contact")
	}
	if evs := w.eventSubjects(t, w.keys["agent B with delegation"], "contact.created"); slices.Contains(evs, forB) {
		t.Errorf("A's delegate sees B's contact.created")
	}

	// A converts another lead into B's contact: the contact is invisible to A.
	l2 := w.createLead(t, keyA, map[string]any{"firstName": "Eva", "lastName": "Fuchs", "email": "eva2@example.com", "ownerId": w.agentA.ID})
	for name, key := range map[string]string{"agent A": keyA, "agent A's delegate": w.keys["agent B with delegation"]} {
		r := convert(key, l2.ID, map[string]any{"contactType": "private", "existingContactId": forB})
		if r.Status != 404 {
			t.Fatalf("%s: existingContactId of an invisible contact: %d %s", name, r.Status, r.Body)
		}
		if p := r.Problem(t); p.Code != "not_found" || strings.Contains(string(r.Body), "Fuchs") {
			t.Errorf("%s: %s", name, r.Body)
		}
		// A contact that does not exist at all answers the same.
		none := convert(key, l2.ID, map[string]any{"contactType": "private", "existingContactId": uuid.NewString()})
		if none.Status != 404 || none.Problem(t).Code != "not_found" {
			t.Errorf("%s: existingContactId of no contact: %d %s", name, none.Status, none.Body)
		}
	}
	// B may merge A's next lead into its own contact once it sees the lead (delegation B <- A is
	// not given; the company key does it instead).
	if r := convert(w.co.Secret, l2.ID, map[string]any{"contactType": "private", "existingContactId": forB,
		"overrides": map[string]any{"email": "eva@example.com"}}); r.Status != 201 {
		t.Errorf("company key merges into B's contact: %d %s", r.Status, r.Body)
	}
}
