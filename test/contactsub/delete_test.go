package contactsub

import (
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/httpx"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// deleteRoutes deletes a contact the way DELETE /contacts/{id} must (contacts core): the notes'
// external references first, then the contact, whose sub-resources go by ON DELETE CASCADE.
func deleteRoutes(v1 fiber.Router, m app.Middleware) {
	v1.Delete("/_test/contacts/:contactId", m.Auth, func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		id, err := httpx.UUIDParam(c, "contactId")
		if err != nil {
			return err
		}
		if err := new(contacts.Service).DeleteActivityRefs(ctx, id); err != nil {
			return err
		}
		if err := tenancy.Client(ctx).Contact.DeleteOneID(id).Exec(ctx); err != nil {
			return err
		}
		return httpx.NoContent(c)
	})
}

// TestContactSub_DeleteContact: deleting a contact removes its phones, relationships (both
// directions), finances and timeline, and frees its notes' external ids.
func TestContactSub_DeleteContact(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithTestRoutes(deleteRoutes))
	co := env.NewCompany(t)
	x := insertContact(t, env, co.ID, "private", "X", nil)
	y := insertContact(t, env, co.ID, "private", "Y", nil)
	cx := "/contacts/" + x
	must(t, do(t, env, "POST", cx+"/phones", co.Secret, map[string]any{"number": "030 1234567"}), 201)
	must(t, do(t, env, "POST", cx+"/relationships", co.Secret, map[string]any{"relatedContactId": y, "role": "partner"}), 201)
	must(t, do(t, env, "PUT", cx+"/finance", co.Secret, map[string]any{}), 200)
	ref := map[string]any{"content": "n", "externalReferences": []map[string]any{{"source": "crm", "externalId": "n-9"}}}
	must(t, do(t, env, "POST", cx+"/notes", co.Secret, ref), 201)

	must(t, env.Do(t, apitest.Request{Method: "DELETE", Path: "/_test/contacts/" + x, Key: co.Secret}), 204)
	n := count(t, env, co.ID, `SELECT (SELECT count(*) FROM contact_phones WHERE contact_id = $1)
		+ (SELECT count(*) FROM contact_relationships WHERE contact_id = $1 OR related_contact_id = $1)
		+ (SELECT count(*) FROM contact_finances WHERE contact_id = $1)
		+ (SELECT count(*) FROM contact_activities WHERE contact_id = $1)`, x)
	if n != 0 {
		t.Errorf("%d rows of the deleted contact remain", n)
	}
	if got := relationships(t, env, co.Secret, y); len(got) != 0 {
		t.Errorf("y still relates to the deleted contact: %+v", got)
	}
	must(t, do(t, env, "POST", "/contacts/"+y+"/notes", co.Secret, ref), 201) // the external id is free
}
