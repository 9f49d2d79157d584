package visibility

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// emailTables are the user-scoped tables of the e-mail area (issue 21) and how ent reads each.
var emailTables = map[string]func(ctx context.Context, db *ent.Client) ([]uuid.UUID, error){
	"mailboxes": func(ctx context.Context, db *ent.Client) ([]uuid.UUID, error) { return db.Mailbox.Query().IDs(ctx) },
	"mailbox_folders": func(ctx context.Context, db *ent.Client) ([]uuid.UUID, error) {
		return db.MailboxFolder.Query().IDs(ctx)
	},
	"email_threads": func(ctx context.Context, db *ent.Client) ([]uuid.UUID, error) { return db.EmailThread.Query().IDs(ctx) },
	"emails":        func(ctx context.Context, db *ent.Client) ([]uuid.UUID, error) { return db.Email.Query().IDs(ctx) },
	"email_attachments": func(ctx context.Context, db *ent.Client) ([]uuid.UUID, error) {
		return db.EmailAttachment.Query().IDs(ctx)
	},
	"email_links": func(ctx context.Context, db *ent.Client) ([]uuid.UUID, error) { return db.EmailLink.Query().IDs(ctx) },
}

// emailLayerRoutes read a table of the e-mail area through one layer at a time, in the
// request's pinned transaction: /rls is raw SQL (row-level security alone; control: the same
// statement with the visibility policies lifted), /ent is ent with the policies lifted (the ent
// rules alone; control: raw SQL in the same lifted transaction).
func emailLayerRoutes(v1 fiber.Router, m app.Middleware) {
	v1.Get("/_test/email/rls/:table", m.Auth, func(c *fiber.Ctx) error {
		ctx, table := c.UserContext(), c.Params("table")
		if _, ok := emailTables[table]; !ok {
			return fiber.ErrNotFound
		}
		var out layered
		var err error
		if out.IDs, err = queryTexts(ctx, "SELECT id::text FROM "+table); err != nil {
			return err
		}
		err = tenancy.ReadCompanyWide(ctx, func() (err error) {
			out.Control, err = queryTexts(ctx, "SELECT id::text FROM "+table)
			return err
		})
		if err != nil {
			return err
		}
		return c.JSON(out)
	})
	v1.Get("/_test/email/ent/:table", m.Auth, func(c *fiber.Ctx) error {
		table := c.Params("table")
		read, ok := emailTables[table]
		if !ok {
			return fiber.ErrNotFound
		}
		return entAlone(liftPolicies, "SELECT id::text FROM "+table, func(ctx context.Context) ([]string, error) {
			ids, err := read(ctx, tenancy.Client(ctx))
			out := make([]string, len(ids))
			for i, id := range ids {
				out[i] = id.String()
			}
			return out, err
		})(c)
	})
}

// TestVisibility_EmailEachLayerAlone: the e-mail area's visibility (docs/decisions/email.md)
// holds in each layer alone, with a positive control each. Agent A owns a personal mailbox
// with two threads: T1 (about nobody) and T3 (linked to a contact of agent B); a shared
// mailbox holds T2. A sees both mailboxes and every thread (T3 through its own mailbox) but
// not the link to B's contact; B sees the shared mailbox only, T2, and T3 through the link to
// its contact, never T1, its message, its attachment or A's folder. Bugs caught: a policy or
// rule that lets a personal mailbox (or what hangs off it) through to another agent, one that
// forgets the link path (B would miss T3), a link readable without its contact, and either
// layer failing open while the other hides it (each layer is read alone).
func TestVisibility_EmailEachLayerAlone(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithTestRoutes(emailLayerRoutes))
	ctx := context.Background()
	co := env.NewCompany(t, "leads", "emails")
	agentA, agentB := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	keyA, keyB := co.UserKey(t, agentA), co.UserKey(t, agentB)
	mailbox := func(email string, owner *uuid.UUID) uuid.UUID {
		m, err := env.Ops.CreateMailbox(ctx, env.Config.DataKeys, operator.NewMailbox{CompanyID: co.ID, Email: email,
			IMAPURL: "imap://127.0.0.1:1143", SMTPURL: "smtp://127.0.0.1:1025", Username: email, Password: "pw",
			OwnerID: owner, Shared: owner == nil})
		if err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	personalA, shared := mailbox("a@makler.test", &agentA.ID), mailbox("team@makler.test", nil)
	ids := map[string]uuid.UUID{}
	env.InCompany(t, co.ID, func(ctx context.Context, db *ent.Client) error {
		contactB, err := db.Contact.Create().SetType("private").SetFirstName("Bea").SetLastName("B").SetOwnerID(agentB.ID).Save(ctx)
		if err != nil {
			return err
		}
		f, err := db.MailboxFolder.Create().SetMailboxID(personalA).SetName("INBOX").Save(ctx)
		if err != nil {
			return err
		}
		ids["folderA"] = f.ID
		msg := func(name string, mb uuid.UUID) (uuid.UUID, uuid.UUID, error) {
			th, err := db.EmailThread.Create().SetMailboxID(mb).SetSubject(name).SetLastMessageAt(time.Now()).Save(ctx)
			if err != nil {
				return uuid.Nil, uuid.Nil, err
			}
			e, err := db.Email.Create().SetThreadID(th.ID).SetMailboxID(mb).SetDirection("inbound").SetStatus("received").
				SetMessageID(uuid.NewString() + "@example.com").SetTo([]schematype.MailAddress{{Email: "x@example.com"}}).
				SetSubject(name).Save(ctx)
			if err != nil {
				return uuid.Nil, uuid.Nil, err
			}
			return th.ID, e.ID, nil
		}
		if ids["T1"], ids["E1"], err = msg("T1", personalA); err != nil {
			return err
		}
		if ids["T2"], ids["E2"], err = msg("T2", shared); err != nil {
			return err
		}
		if ids["T3"], ids["E3"], err = msg("T3", personalA); err != nil {
			return err
		}
		a, err := db.EmailAttachment.Create().SetEmailID(ids["E1"]).SetThreadID(ids["T1"]).SetBlobKey("x").Save(ctx)
		if err != nil {
			return err
		}
		ids["A1"] = a.ID
		l, err := db.EmailLink.Create().SetEmailID(ids["E3"]).SetThreadID(ids["T3"]).SetContactID(contactB.ID).Save(ctx)
		if err != nil {
			return err
		}
		ids["L3"] = l.ID
		return nil
	})
	ids["MA"], ids["MS"] = personalA, shared

	// sees[table] lists, per row name, whether A and B see it.
	type seen struct{ a, b bool }
	sees := map[string]map[string]seen{
		"mailboxes":         {"MA": {true, false}, "MS": {true, true}},
		"mailbox_folders":   {"folderA": {true, false}},
		"email_threads":     {"T1": {true, false}, "T2": {true, true}, "T3": {true, true}},
		"emails":            {"E1": {true, false}, "E2": {true, true}, "E3": {true, true}},
		"email_attachments": {"A1": {true, false}},
		"email_links":       {"L3": {false, true}},
	}
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
	for table, rows := range sees {
		for _, layer := range []string{"rls", "ent"} {
			path := "/_test/email/" + layer + "/" + table
			for who, key := range map[string]string{"A": keyA, "B": keyB, "company key": co.Secret} {
				got := get(t, key, path)
				for name, s := range rows {
					id := ids[name].String()
					want := who == "company key" || (who == "A" && s.a) || (who == "B" && s.b)
					if slices.Contains(got.IDs, id) != want {
						t.Errorf("%s: %s sees %s = %v, want %v", path, who, name, !want, want)
					}
					// Positive control: with the layer under test lifted too, the row is there,
					// so the other layer was really off and this one alone decided.
					if !slices.Contains(got.Control, id) {
						t.Errorf("%s: control of %s misses %s: the other layer was not off", path, who, name)
					}
				}
			}
		}
	}
}
