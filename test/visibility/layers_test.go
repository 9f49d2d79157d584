package visibility

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/ent/event"
	"github.com/brokerdesk/brokerdesk/ent/privacy"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// layered is what a layer route answers: the ids one layer alone lets through, and a positive
// control read in the same transaction that proves the other layer was really off (or, for raw
// SQL, which no ent rule sees, that the rows are there when the policies are lifted).
type layered struct {
	IDs     []string `json:"ids"`
	Control []string `json:"control"`
}

// layerRoutes read through one layer at a time inside the request's pinned transaction: raw
// SQL (row-level security only) and ent with the SQL visibility lifted (ent rules only).
func layerRoutes(v1 fiber.Router, m app.Middleware) {
	// Raw SQL: row-level security alone. Control: the same statement with the policies lifted.
	v1.Get("/_test/rls/:table", m.Auth, func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		table := c.Params("table")
		if !slices.Contains([]string{"leads", "events", "contacts", "lead_attachments", "contact_phones"}, table) {
			return fiber.ErrNotFound
		}
		col := "id::text"
		if table == "events" {
			col = "coalesce(data->>'id', '')"
		}
		var out layered
		var err error
		if out.IDs, err = queryTexts(ctx, "SELECT "+col+" FROM "+table); err != nil {
			return err
		}
		lift := tenancy.ReadCompanyWide
		if table == "events" {
			lift = liftPolicies
		}
		err = lift(ctx, func() (err error) {
			out.Control, err = queryTexts(ctx, "SELECT "+col+" FROM "+table)
			return err
		})
		if err != nil {
			return err
		}
		return c.JSON(out)
	})
	// ent with the policies lifted: the ent rules alone. Control: raw SQL in the same lifted
	// transaction reads every lead, so the policies were off.
	v1.Get("/_test/ent/leads", m.Auth, entAlone(liftPolicies, "SELECT id::text FROM leads", func(ctx context.Context) ([]string, error) {
		var ids []string
		ls, err := tenancy.Client(ctx).Lead.Query().All(ctx)
		for _, l := range ls {
			ids = append(ids, l.ID.String())
		}
		if err != nil {
			return nil, err
		}
		es, err := tenancy.Client(ctx).Event.Query().All(ctx)
		for _, e := range es {
			ids = append(ids, "event:"+e.Type+":"+string(e.Data))
		}
		return ids, err
	}))
	// The event feed's rows through each layer alone: event ids (committed ones), for
	// TestVisibility_EventsFollowResources. /rls is raw SQL; /ent is ent with the policies
	// lifted, with raw SQL of the same lifted transaction as its control.
	v1.Get("/_test/events/rls", m.Auth, func(c *fiber.Ctx) error {
		ids, err := queryTexts(c.UserContext(), "SELECT id::text FROM events WHERE seq IS NOT NULL")
		if err != nil {
			return err
		}
		return c.JSON(ids)
	})
	v1.Get("/_test/events/ent", m.Auth, entAlone(liftPolicies, "SELECT id::text FROM events WHERE seq IS NOT NULL", func(ctx context.Context) ([]string, error) {
		var ids []string
		es, err := tenancy.Client(ctx).Event.Query().Where(event.SeqNotNil()).IDs(ctx)
		for _, id := range es {
			ids = append(ids, id.String())
		}
		return ids, err
	}))
	// The contacts list's own owner filter alone: List with the SQL visibility lifted. Control:
	// raw SQL in the same lifted transaction.
	v1.Get("/_test/list/contacts", m.Auth, func(c *fiber.Ctx) error {
		q := c.Query("q")
		return entAlone(tenancy.ReadCompanyWide, "SELECT id::text FROM contacts", func(ctx context.Context) ([]string, error) {
			var ids []string
			rows, err := contacts.NewService(nil, nil, time.Now).List(ctx, contacts.ListFilter{Search: q, Sort: "-createdAt"}, nil, 100)
			for _, r := range rows {
				ids = append(ids, r.ID.String())
			}
			return ids, err
		})(c)
	})
	// The owners the credential lookup read (tenancy.VisibleOwners) beside the policies' own
	// array in the same transaction.
	v1.Get("/_test/owners", m.Auth, func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		var out struct {
			Lookup []string `json:"lookup"`
			Known  bool     `json:"known"`
			Policy []string `json:"policy"`
		}
		owners, known := tenancy.VisibleOwners(ctx)
		out.Known = known
		for _, o := range owners {
			out.Lookup = append(out.Lookup, o.String())
		}
		policy, err := queryTexts(ctx, "SELECT unnest(app_visible_owner_ids())::text")
		if err != nil {
			return err
		}
		out.Policy = policy
		return c.JSON(out)
	})
	// Privacy switched off: RLS alone, through ent. Control: the same query with the policies
	// lifted as well reads every lead, so privacy was off (on, its rules would still filter).
	v1.Get("/_test/bypass/leads", m.Auth, func(c *fiber.Ctx) error {
		ctx := privacy.DecisionContext(c.UserContext(), privacy.Allow)
		read := func() ([]string, error) {
			ls, err := tenancy.Client(ctx).Lead.Query().All(ctx)
			ids := []string{}
			for _, l := range ls {
				ids = append(ids, l.ID.String())
			}
			return ids, err
		}
		var out layered
		var err error
		if out.IDs, err = read(); err != nil {
			return err
		}
		err = liftPolicies(ctx, func() (err error) { out.Control, err = read(); return err })
		if err != nil {
			return err
		}
		return c.JSON(out)
	})
}

// entAlone answers what read finds through the ent rules alone (the policies lifted by lift),
// with the rows control (raw SQL) reads in the same lifted transaction: the proof that they
// were lifted.
func entAlone(lift func(context.Context, func() error) error, control string, read func(context.Context) ([]string, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		out := layered{IDs: []string{}}
		err := lift(ctx, func() error {
			ids, err := read(ctx)
			if err != nil {
				return err
			}
			out.IDs = append(out.IDs, ids...)
			out.Control, err = queryTexts(ctx, control)
			return err
		})
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

func TestVisibility_EachLayerAlone(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithTestRoutes(layerRoutes))
	co := env.NewCompany(t)
	agentA, agentB := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	keyA, keyB := co.UserKey(t, agentA), co.UserKey(t, agentB)
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/leads", Key: co.Secret,
		Body: map[string]any{"lastName": "Schicht", "email": "s@example.com", "ownerId": agentA.ID}})
	var l lead
	r.Decode(t, &l)

	get := func(t *testing.T, key, path string) layered {
		t.Helper()
		r := env.Do(t, apitest.Request{Path: path, Key: key})
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		var out layered
		r.Decode(t, &out)
		return out
	}
	has := func(ids []string) bool {
		return slices.ContainsFunc(ids, func(s string) bool { return s == l.ID || strings.Contains(s, l.ID) })
	}
	for _, path := range []string{"/_test/rls/leads", "/_test/rls/events", "/_test/ent/leads", "/_test/bypass/leads"} {
		if !has(get(t, keyA, path).IDs) {
			t.Errorf("%s: A does not see its own lead", path)
		}
		b := get(t, keyB, path)
		if has(b.IDs) {
			t.Errorf("%s: B sees A's lead", path)
		}
		// Positive control (issue 20): in the same transaction, with the layer under test lifted
		// too, B's credential reads A's lead; so the other layer was really off, and the layer
		// under test alone hid the lead.
		if !has(b.Control) {
			t.Errorf("%s: control: with the other layer off and this one lifted, B does not read A's lead: %v", path, b.Control)
		}
		if !has(get(t, co.Secret, path).IDs) {
			t.Errorf("%s: the company key does not see the lead", path)
		}
	}
}

// TestVisibility_ContactListOwnFilter: GET /contacts for a restricted key filters by the
// visible owners itself (not through the ent rule, see contacts.List); with the SQL layer
// lifted it still shows an agent its own and validly delegated contacts only, with and
// without q.
func TestVisibility_ContactListOwnFilter(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithTestRoutes(layerRoutes))
	co := env.NewCompany(t)
	agentA, agentB, agentC, agentD := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	past := time.Now().Add(-time.Minute)
	co.Delegate(t, agentB.ID, agentA.ID, nil)
	co.Delegate(t, agentC.ID, agentA.ID, &past)
	ids := map[string]string{}
	for name, owner := range map[string]string{"A": agentA.ID.String(), "B": agentB.ID.String(), "C": agentC.ID.String(), "D": agentD.ID.String()} {
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts", Key: co.Secret,
			Body: map[string]any{"type": "private", "firstName": "Eva", "lastName": "Müller" + name, "ownerId": owner}})
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		var c struct{ ID string }
		r.Decode(t, &c)
		ids[name] = c.ID
	}
	for _, q := range []string{"", "m%C3%BCll"} {
		for key, want := range map[string][]string{co.UserKey(t, agentA): {"A", "B"}, co.Secret: {"A", "B", "C", "D"}} {
			r := env.Do(t, apitest.Request{Path: "/_test/list/contacts?q=" + q, Key: key})
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			var got layered
			r.Decode(t, &got)
			for name, id := range ids {
				if slices.Contains(got.IDs, id) != slices.Contains(want, name) {
					t.Errorf("q=%s: contact of %s shown %v, want %v", q, name, slices.Contains(got.IDs, id), slices.Contains(want, name))
				}
				// Positive control: the policies were lifted, raw SQL reads every contact.
				if !slices.Contains(got.Control, id) {
					t.Errorf("q=%s: control: with the policies lifted raw SQL does not read the contact of %s", q, name)
				}
			}
		}
	}
}

// queryTexts runs query (one text column) in the request transaction of ctx.
// liftPolicies runs fn with every policy that narrows events (and leads) within a company
// lifted: the visibility (tenancy.ReadCompanyWide), and the pinned user that the policy on
// webhook endpoint events (event_endpoint_owner, issue 20 §5) reads, cleared for the while and
// then restored. Not for the contacts list, whose own filter reads the pinned user too.
func liftPolicies(ctx context.Context, fn func() error) error {
	return tenancy.ReadCompanyWide(ctx, func() error {
		user, err := queryTexts(ctx, "SELECT coalesce(current_setting('app.user_id', true), '')")
		if err != nil {
			return err
		}
		db := tenancy.Client(ctx)
		const pin = "SELECT set_config('app.user_id', $1, true)"
		if _, err := db.ExecContext(ctx, pin, ""); err != nil {
			return err
		}
		ferr := fn()
		if _, err := db.ExecContext(ctx, pin, user[0]); err != nil {
			return errors.Join(ferr, err)
		}
		return ferr
	})
}

func queryTexts(ctx context.Context, query string) ([]string, error) {
	rows, err := tenancy.Client(ctx).QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// TestVisibility_OwnersWithCredential: the credential lookups (auth_credential, auth_token)
// return the owners a restricted credential sees, the same set as the policies' own array in
// the same transaction: the user and the users with a valid delegation to it, not an expired
// one, nor one of another company; nothing for credentials that see all. For keys and OAuth
// tokens alike, live and sandbox.
func TestVisibility_OwnersWithCredential(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithTestRoutes(layerRoutes))
	co, other := env.NewCompany(t), env.NewCompany(t)
	agentA, agentB, agentC := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	past, future := time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	co.Delegate(t, agentB.ID, agentA.ID, &future)
	co.Delegate(t, agentC.ID, agentA.ID, &past)
	otherAgent := env.NewUser(t, other, "agent")
	other.Delegate(t, otherAgent.ID, env.NewUser(t, other, "agent").ID, nil)
	sandboxA := co.Key(t, operator.NewKeyInput{Kind: "secret", Env: "test", UserID: &agentA.ID}).Secret
	sorted := func(ids ...string) []string { slices.Sort(ids); return ids }
	for _, tc := range []struct {
		name, key string
		want      []string // nil: sees all
	}{
		{"agent A key", co.UserKey(t, agentA), sorted(agentA.ID.String(), agentB.ID.String())},
		{"agent A token", co.UserOAuthToken(t, agentA).AccessToken, sorted(agentA.ID.String(), agentB.ID.String())},
		{"agent B key", co.UserKey(t, agentB), []string{agentB.ID.String()}},
		{"agent A sandbox key", sandboxA, nil}, // its twin: checked against the policy below
		{"admin key", co.UserKey(t, co.Admin), nil},
		{"company key", co.Secret, nil},
	} {
		r := env.Do(t, apitest.Request{Path: "/_test/owners", Key: tc.key})
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", tc.name, r.Status, r.Body)
		}
		var got struct {
			Lookup []string
			Known  bool
			Policy []string
		}
		r.Decode(t, &got)
		slices.Sort(got.Lookup)
		slices.Sort(got.Policy)
		switch {
		case tc.name == "agent A sandbox key":
			if !got.Known || len(got.Lookup) != 1 || !slices.Equal(got.Lookup, got.Policy) || got.Lookup[0] == agentA.ID.String() {
				t.Errorf("%s: lookup %v (known %v), policy %v: want the twin of A alone in both", tc.name, got.Lookup, got.Known, got.Policy)
			}
		case tc.want == nil:
			if got.Known || got.Lookup != nil {
				t.Errorf("%s: lookup %v (known %v), want none: it sees all", tc.name, got.Lookup, got.Known)
			}
		default:
			if !got.Known || !slices.Equal(got.Lookup, tc.want) || !slices.Equal(got.Policy, tc.want) {
				t.Errorf("%s: lookup %v (known %v), policy %v, want %v in both", tc.name, got.Lookup, got.Known, got.Policy, tc.want)
			}
		}
	}
}
