package contactsub

import (
	"context"
	"database/sql"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// entRoutes read the sub-resource tables through ent with the SQL visibility lifted inside the
// request's pinned transaction: only the ent rules (VisibleByContact) stand in the way.
func entRoutes(v1 fiber.Router, m app.Middleware) {
	v1.Get("/_test/ent/contact-sub", m.Auth, func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		n := map[string]int{}
		err := tenancy.ReadCompanyWide(ctx, func() error {
			db := tenancy.Client(ctx)
			var err error
			if n["activities"], err = db.ContactActivity.Query().Count(ctx); err != nil {
				return err
			}
			if n["finances"], err = db.ContactFinance.Query().Count(ctx); err != nil {
				return err
			}
			if n["relationships"], err = db.ContactRelationship.Query().Count(ctx); err != nil {
				return err
			}
			// Writes through ent are narrowed the same way.
			u, err := db.ContactActivity.Update().SetContent("pwned").Save(ctx)
			n["updated"] = u
			return err
		})
		if err != nil {
			return err
		}
		return c.JSON(n)
	})
}

// TestContactSub_EntLayerAlone: with row-level security's visibility lifted, the ent rules
// alone keep an agent from another agent's sub-resources; the owner still sees its own.
func TestContactSub_EntLayerAlone(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithTestRoutes(entRoutes))
	co := env.NewCompany(t)
	agentA, agentB := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	x := insertContact(t, env, co.ID, "private", "X", &agentA.ID)
	y := insertContact(t, env, co.ID, "private", "Y", &agentA.ID)
	must(t, do(t, env, "POST", "/contacts/"+x+"/relationships", co.Secret, map[string]any{"relatedContactId": y, "role": "partner"}), 201)
	must(t, do(t, env, "PUT", "/contacts/"+x+"/finance", co.Secret, map[string]any{}), 200)
	must(t, do(t, env, "POST", "/contacts/"+x+"/notes", co.Secret, map[string]any{"content": "n"}), 201)

	read := func(key string) map[string]int {
		var n map[string]int
		must(t, do(t, env, "GET", "/_test/ent/contact-sub", key, nil), 200).Decode(t, &n)
		return n
	}
	if n := read(co.UserKey(t, agentB)); n["activities"]+n["finances"]+n["relationships"]+n["updated"] != 0 {
		t.Errorf("ent alone: agent B reaches %v of agent A's rows", n)
	}
	if n := read(co.UserKey(t, agentA)); n["activities"] == 0 || n["finances"] != 1 || n["relationships"] != 2 {
		t.Errorf("ent alone: agent A sees %v of its own rows", n)
	}
	var content string
	_ = env.Pinned(context.Background(), co.ID, func(tx *sql.Tx) error {
		return tx.QueryRow(`SELECT content FROM contact_activities WHERE kind = 'note'`).Scan(&content)
	})
	if content != "pwned" { // agent A's own update went through; B's before it touched nothing
		t.Errorf("note content %q after agent A's update", content)
	}
}
