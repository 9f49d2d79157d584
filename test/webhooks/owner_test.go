package webhooks

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// Issue 20 §5: a webhook endpoint belongs to the credential that created it (or last changed
// its url): only that credential and the company's admin credentials (admin:write; an admin's
// when user-bound) see or change it. Everyone else gets 404 on every operation and does not
// find it in lists.

// listIDs returns the endpoint ids of GET /webhook-endpoints as key sees them.
func listIDs(t *testing.T, env *apitest.Env, key string) []string {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/webhook-endpoints?limit=200", Key: key})
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var page apitest.Page[endpoint]
	r.Decode(t, &page)
	ids := []string{}
	for _, e := range page.Data {
		ids = append(ids, e.ID)
	}
	slices.Sort(ids)
	return ids
}

func sorted(ids ...string) []string {
	out := append([]string{}, ids...)
	slices.Sort(out)
	return out
}

// everyOperation is each endpoint operation on id: all must be 404 for a credential that does
// not own the endpoint and is no admin.
func everyOperation(id string) []apitest.Request {
	one := "/webhook-endpoints/" + id
	merge := map[string]string{"Content-Type": "application/merge-patch+json"}
	return []apitest.Request{
		{Method: "GET", Path: one},
		{Method: "PATCH", Path: one, Body: map[string]any{"url": "https://attacker.example.com/x"}, Header: merge},
		{Method: "PATCH", Path: one, Body: map[string]any{"enabled": false}, Header: merge},
		{Method: "POST", Path: one + "/rotate-secret"},
		{Method: "POST", Path: one + "/test"},
		{Method: "GET", Path: one + "/deliveries"},
		{Method: "POST", Path: one + "/deliveries/" + uuid.NewString() + "/retry"},
		{Method: "DELETE", Path: one},
	}
}

// TestWebhooks_EndpointOwnerMatrix: endpoints of a company key, a manager's key, a manager's
// OAuth grant (partner app) and a client-credentials token, each without admin:write; who sees
// and changes which. Catches every agent and partner reading every endpoint URL, and any
// webhooks:write credential re-pointing, disabling, rotating or deleting another's endpoint.
func TestWebhooks_EndpointOwnerMatrix(t *testing.T) {
	t.Parallel()
	env := setup(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	manager, manager2, agent := env.NewUser(t, a, "manager"), env.NewUser(t, a, "manager"), env.NewUser(t, a, "agent")
	keys := map[string]string{
		"company key":                     a.KeyWithScopes(t, "webhooks:write", "leads:read"),
		"manager's key":                   a.UserKey(t, manager),
		"manager's partner app (grant)":   a.UserOAuthToken(t, manager2, "webhooks:write", "leads:read").AccessToken,
		"client-credentials token":        a.OAuthToken(t, "live", "webhooks:write", "leads:read"),
		"another company key":             a.KeyWithScopes(t, "webhooks:write", "leads:read"),
		"the manager's second key":        a.UserKey(t, manager),
		"an agent's key":                  a.UserKey(t, agent),
		"an agent's partner app (grant)":  a.UserOAuthToken(t, agent).AccessToken,
		"admin's key without admin:write": a.UserKey(t, a.Admin, "webhooks:write", "leads:read"),
		"admin's key":                     a.UserKey(t, a.Admin),
		"company admin key":               a.Secret,
		"company admin client":            a.OAuthToken(t, "live"),
		"B's admin key":                   b.Secret,
	}
	owners := []string{"company key", "manager's key", "manager's partner app (grant)", "client-credentials token"}
	eps := map[string]string{} // owner → endpoint id
	var all []string
	for _, o := range owners {
		ep := apitest.Create[endpoint](t, env, keys[o], "/webhook-endpoints", map[string]any{"url": "https://hooks.example.com/" + strings.ReplaceAll(o, " ", "-"),
			"events": []string{"lead.deleted"}})
		eps[o] = ep.ID
		all = append(all, ep.ID)
	}
	want := map[string][]string{
		"another company key":             {},
		"the manager's second key":        {},
		"an agent's key":                  {},
		"an agent's partner app (grant)":  {},
		"admin's key without admin:write": {},
		"admin's key":                     all,
		"company admin key":               all,
		"company admin client":            all,
		"B's admin key":                   {},
	}
	for _, o := range owners {
		want[o] = []string{eps[o]}
	}
	for name, key := range keys {
		t.Run(name+" lists", func(t *testing.T) {
			if got := listIDs(t, env, key); !slices.Equal(got, sorted(want[name]...)) {
				t.Errorf("lists %v, want %v", got, sorted(want[name]...))
			}
		})
	}
	// Every operation on every endpoint it does not own is 404 for a credential without
	// admin:write (run before the owners' and admins' operations, which change the endpoints).
	// Agents hold no webhooks:write (their role): their writes stop at the scope check (403)
	// before any endpoint is looked at.
	readOnly := []string{"an agent's key", "an agent's partner app (grant)"}
	for name, key := range keys {
		for _, o := range owners {
			if slices.Contains(want[name], eps[o]) {
				continue
			}
			for _, op := range everyOperation(eps[o]) {
				t.Run(name+" "+op.Method+" "+strings.Replace(op.Path, eps[o], "{"+o+"}", 1), func(t *testing.T) {
					op.Key = key
					status := 404
					if op.Method != "GET" && slices.Contains(readOnly, name) {
						status = 403
					}
					if r := env.Do(t, op); r.Status != status {
						t.Errorf("status %d, want %d: %s", r.Status, status, r.Body)
					}
				})
			}
		}
	}
	// Nothing changed: each owner reads its endpoint as it was.
	for _, o := range owners {
		r := env.Do(t, apitest.Request{Path: "/webhook-endpoints/" + eps[o], Key: keys[o]})
		var got endpoint
		r.Decode(t, &got)
		if r.Status != 200 || !got.Enabled || !strings.HasPrefix(got.URL, "https://hooks.example.com/") {
			t.Errorf("%s's endpoint after the others' attempts: %d %s", o, r.Status, r.Body)
		}
	}
	// The owner changes its own endpoint; an admin changes anyone's.
	merge := map[string]string{"Content-Type": "application/merge-patch+json"}
	for _, o := range owners {
		r := env.Do(t, apitest.Request{Method: "PATCH", Path: "/webhook-endpoints/" + eps[o], Key: keys[o], Header: merge,
			Body: map[string]any{"description": "owner's"}})
		if r.Status != 200 {
			t.Errorf("%s patches its own endpoint: %d %s", o, r.Status, r.Body)
		}
	}
	r := env.Do(t, apitest.Request{Method: "PATCH", Path: "/webhook-endpoints/" + eps["manager's key"], Key: keys["admin's key"],
		Header: merge, Body: map[string]any{"enabled": false}})
	if r.Status != 200 {
		t.Errorf("admin disables the manager's endpoint: %d %s", r.Status, r.Body)
	}
	// An admin re-pointing an endpoint binds it to the admin's credential: it is the admin's
	// now, gone from its former owner's view.
	r = env.Do(t, apitest.Request{Method: "PATCH", Path: "/webhook-endpoints/" + eps["company key"], Key: keys["admin's key"],
		Header: merge, Body: map[string]any{"url": "https://hooks.example.com/admin"}})
	if r.Status != 200 {
		t.Fatalf("admin re-points: %d %s", r.Status, r.Body)
	}
	if got := listIDs(t, env, keys["company key"]); len(got) != 0 {
		t.Errorf("the former owner still lists %v", got)
	}
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/webhook-endpoints/" + eps["client-credentials token"],
		Key: keys["client-credentials token"]}); r.Status != 204 {
		t.Errorf("owner deletes its endpoint: %d %s", r.Status, r.Body)
	}
}

// TestWebhooks_EndpointLimitCountsEveryCredential: the limit of 20 endpoints is the company's,
// counted over every credential's endpoints, though a credential sees only its own.
func TestWebhooks_EndpointLimitCountsEveryCredential(t *testing.T) {
	t.Parallel()
	env := setup(t)
	a := env.NewCompany(t)
	mine, other := a.KeyWithScopes(t, "webhooks:write", "leads:read"), a.KeyWithScopes(t, "webhooks:write", "leads:read")
	for i := range 20 {
		key := a.Secret
		if i == 0 {
			key = mine
		}
		apitest.Create[endpoint](t, env, key, "/webhook-endpoints", map[string]any{"url": "https://hooks.example.com/" + string(rune('a'+i)), "events": []string{"lead.deleted"}})
	}
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/webhook-endpoints", Key: other,
		Body: map[string]any{"url": "https://hooks.example.com/z", "events": []string{"lead.deleted"}}})
	if r.Status != 409 || r.Problem(t).Code != "endpoint_limit" {
		t.Errorf("21st endpoint by a credential that sees none: %d %s", r.Status, r.Body)
	}
	if got := listIDs(t, env, other); len(got) != 0 {
		t.Errorf("it sees %v", got)
	}
}

// TestWebhooks_DisabledEventFollowsTheEndpoint: when its credential dies at a delivery the
// endpoint is disabled and stays visible to admins, who may re-point it; the
// webhook_endpoint.disabled event (it carries the URL) reaches exactly who reads the endpoint:
// the admin, not an agent, not the owner's user through another key, not a company key without
// admin:write.
func TestWebhooks_DisabledEventFollowsTheEndpoint(t *testing.T) {
	t.Parallel()
	env := setup(t)
	a := env.NewCompany(t)
	manager, agent := env.NewUser(t, a, "manager"), env.NewUser(t, a, "agent")
	k := a.Key(t, operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvLive, UserID: &manager.ID})
	agentKey := a.UserKey(t, agent)
	rcv := newReceiver(t)
	ep := apitest.Create[endpoint](t, env, k.Secret, "/webhook-endpoints", map[string]any{"url": rcv.URL + "/capability-token-xyz", "events": []string{"lead.created"}})
	if _, err := env.Ops.DeactivateKey(context.Background(), k.ID.String()); err != nil {
		t.Fatal(err)
	}
	createLead(t, env, a.Secret, "Owner")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var got endpoint
		env.Do(t, apitest.Request{Path: "/webhook-endpoints/" + ep.ID, Key: a.Secret}).Decode(t, &got)
		if !got.Enabled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the endpoint of the deactivated key was not disabled at the delivery")
		}
	}
	assertDisabled(t, env, a.Secret, ep.ID, "credential_inactive")
	seen := func(key string) bool {
		r := env.Do(t, apitest.Request{Path: "/events?limit=200&types=webhook_endpoint.disabled", Key: key})
		if r.Status != 200 {
			t.Fatalf("events: %d %s", r.Status, r.Body)
		}
		return strings.Contains(string(r.Body), ep.ID)
	}
	if !seen(a.UserKey(t, a.Admin)) {
		t.Errorf("the admin does not see webhook_endpoint.disabled")
	}
	if seen(agentKey) {
		t.Errorf("an agent reads webhook_endpoint.disabled with the manager's endpoint URL")
	}
	// Exactly as visible as the endpoint: not to the manager's other key, nor to a company key
	// without admin:write, which get 404 on the endpoint as well.
	for name, key := range map[string]string{"the manager's other key": a.UserKey(t, manager),
		"a company key without admin:write": a.KeyWithScopes(t, "webhooks:read", "events:read")} {
		if seen(key) {
			t.Errorf("%s reads webhook_endpoint.disabled", name)
		}
		if r := env.Do(t, apitest.Request{Path: "/webhook-endpoints/" + ep.ID, Key: key}); r.Status != 404 {
			t.Errorf("%s reads the endpoint: %d", name, r.Status)
		}
	}
	if ids := listIDs(t, env, agentKey); len(ids) != 0 {
		t.Errorf("the agent lists %v", ids)
	}
	// Its owner is dead; an admin re-points it (binding it to the admin's key) and enables it.
	admin := a.UserKey(t, a.Admin)
	r := env.Do(t, apitest.Request{Method: "PATCH", Path: "/webhook-endpoints/" + ep.ID, Key: admin,
		Header: map[string]string{"Content-Type": "application/merge-patch+json"},
		Body:   map[string]any{"url": rcv.URL + "/new", "enabled": true}})
	var got endpoint
	r.Decode(t, &got)
	if r.Status != 200 || !got.Enabled || got.CredentialID == nil || *got.CredentialID == k.ID.String() {
		t.Fatalf("admin re-points: %d %s", r.Status, r.Body)
	}
	createLead(t, env, a.Secret, "Neu")
	rcv.waitFor(t, 30*time.Second, "the delivery as the admin's key", func(g []received) bool {
		return slices.ContainsFunc(g, func(x received) bool { return strings.Contains(string(x.Body), "Neu") })
	})
}

// ownerLayerRoutes read webhook endpoints through one layer at a time inside the request's
// pinned transaction: raw SQL (row-level security alone) and ent with the pinned user cleared
// (app.user_id empty: the policy endpoint_owner admits everything, the ent rule alone decides).
func ownerLayerRoutes(v1 fiber.Router, m app.Middleware) {
	v1.Get("/_test/rls/webhook-endpoints", m.Auth, func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		rows, err := tenancy.Client(ctx).QueryContext(ctx, "SELECT id::text FROM webhook_endpoints")
		if err != nil {
			return err
		}
		defer rows.Close()
		ids := []string{}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return c.JSON(ids)
	})
	v1.Get("/_test/ent/webhook-endpoints", m.Auth, func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		db := tenancy.Client(ctx)
		if _, err := db.ExecContext(ctx, "SELECT set_config('app.user_id', '', true)"); err != nil {
			return err
		}
		eps, err := db.WebhookEndpoint.Query().All(ctx)
		if err != nil {
			return err
		}
		ids := []string{}
		for _, e := range eps {
			ids = append(ids, e.ID.String())
		}
		return c.JSON(ids)
	})
}

// TestWebhooks_EndpointOwnerLayers: each layer alone. Row-level security (raw SQL in the pinned
// transaction) hides other users' endpoints from a user-bound session whose user is no admin;
// the database cannot tell a company's keys apart, so company-level sessions see every endpoint
// there. The ent rule alone (the policy opened by clearing app.user_id) narrows to the
// credential. Positive controls: the admin sees everything through each layer, and each owner
// its own, so neither layer was simply off.
func TestWebhooks_EndpointOwnerLayers(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithTestRoutes(ownerLayerRoutes))
	a := env.NewCompany(t)
	m1, m2, agent := env.NewUser(t, a, "manager"), env.NewUser(t, a, "manager"), env.NewUser(t, a, "agent")
	m1Key, m1Other, m2Key := a.UserKey(t, m1), a.UserKey(t, m1), a.UserKey(t, m2)
	companyKey, companyOther := a.KeyWithScopes(t, "webhooks:write", "leads:read"), a.KeyWithScopes(t, "webhooks:read")
	adminKey, agentKey := a.UserKey(t, a.Admin), a.UserKey(t, agent)
	body := func(n string) map[string]any {
		return map[string]any{"url": "https://hooks.example.com/" + n, "events": []string{"lead.deleted"}}
	}
	e1, e2, ec := apitest.Create[endpoint](t, env, m1Key, "/webhook-endpoints", body("m1")).ID, apitest.Create[endpoint](t, env, m2Key, "/webhook-endpoints", body("m2")).ID, apitest.Create[endpoint](t, env, companyKey, "/webhook-endpoints", body("c")).ID
	all := sorted(e1, e2, ec)
	ids := func(t *testing.T, key, path string) []string {
		t.Helper()
		var out []string
		r := env.Do(t, apitest.Request{Path: path, Key: key})
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		r.Decode(t, &out)
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		name, key     string
		rls, entAlone []string
	}{
		{"manager 1's key", m1Key, sorted(e1), sorted(e1)},
		{"manager 1's other key: same user, other credential", m1Other, sorted(e1), []string{}},
		{"manager 2's key", m2Key, sorted(e2), sorted(e2)},
		{"agent's key", agentKey, []string{}, []string{}},
		{"company key", companyKey, all, sorted(ec)},
		{"another company key: the database sees a company-level session", companyOther, all, []string{}},
		{"admin's key", adminKey, all, all},
		{"company admin key", a.Secret, all, all},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ids(t, c.key, "/_test/rls/webhook-endpoints"); !slices.Equal(got, c.rls) {
				t.Errorf("row-level security alone: %v, want %v", got, c.rls)
			}
			if got := ids(t, c.key, "/_test/ent/webhook-endpoints"); !slices.Equal(got, c.entAlone) {
				t.Errorf("ent rule alone: %v, want %v", got, c.entAlone)
			}
		})
	}
}
