package contactsub

import (
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestContactSub_DeleteContact: DELETE /contacts/{id} removes everything of the contact: its
// phones, relationships (both directions), finances, timeline and notes, contracts, and the
// external ids of its notes and contracts (free again). Tasks, appointments and a converted
// lead that named the contact stay, without contactId, and read without error.
func TestContactSub_DeleteContact(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	x := insertContact(t, env, co.ID, "private", "X", nil)
	y := insertContact(t, env, co.ID, "private", "Y", nil)
	cx := "/contacts/" + x
	must(t, do(t, env, "POST", cx+"/phones", co.Secret, map[string]any{"number": "030 1234567"}), 201)
	must(t, do(t, env, "POST", cx+"/relationships", co.Secret, map[string]any{"relatedContactId": y, "role": "partner"}), 201)
	must(t, do(t, env, "PUT", cx+"/finance", co.Secret, map[string]any{}), 200)
	note := map[string]any{"content": "n", "externalReferences": []map[string]any{{"source": "crm", "externalId": "n-9"}}}
	must(t, do(t, env, "POST", cx+"/notes", co.Secret, note), 201)

	var ins struct {
		Data []struct{ ID string }
	}
	must(t, do(t, env, "GET", "/insurers?vuNumber=5501", co.Secret, nil), 200).Decode(t, &ins)
	contract := func(contactID string) map[string]any {
		return map[string]any{"contactId": contactID, "insurerId": ins.Data[0].ID, "policyNumber": "HR-1", "type": "130",
			"status": "active", "externalReferences": []map[string]any{{"source": "crm", "externalId": "V-1"}}}
	}
	must(t, do(t, env, "POST", "/contracts", co.Secret, contract(x)), 201)
	var task, appt, lead struct{ ID string }
	must(t, do(t, env, "POST", "/tasks", co.Secret, map[string]any{"title": "Anrufen", "contactId": x}), 201).Decode(t, &task)
	must(t, do(t, env, "POST", "/appointments", co.Secret, map[string]any{"title": "Beratung", "contactId": x,
		"startAt": "2026-05-04T10:00:00", "endAt": "2026-05-04T11:00:00"}), 201).Decode(t, &appt)
	must(t, do(t, env, "POST", "/leads", co.Secret, map[string]any{"firstName": "Ada", "lastName": "X", "email": "ada.x@example.com"}), 201).Decode(t, &lead)
	must(t, do(t, env, "POST", "/leads/"+lead.ID+"/convert", co.Secret,
		map[string]any{"contactType": "private", "existingContactId": x}), 201)

	must(t, env.Do(t, apitest.Request{Method: "DELETE", Path: cx, Key: co.Secret, Header: map[string]string{"If-Match": "*"}}), 204)
	n := count(t, env, co.ID, `SELECT (SELECT count(*) FROM contact_phones WHERE contact_id = $1)
		+ (SELECT count(*) FROM contact_relationships WHERE contact_id = $1 OR related_contact_id = $1)
		+ (SELECT count(*) FROM contact_finances WHERE contact_id = $1)
		+ (SELECT count(*) FROM contact_activities WHERE contact_id = $1)
		+ (SELECT count(*) FROM contracts WHERE contact_id = $1)
		+ (SELECT count(*) FROM tasks WHERE contact_id = $1)
		+ (SELECT count(*) FROM appointments WHERE contact_id = $1)
		+ (SELECT count(*) FROM leads WHERE contact_id = $1)
		+ (SELECT count(*) FROM external_refs WHERE resource_id NOT IN (SELECT id FROM contracts UNION ALL SELECT id FROM contact_activities
			UNION ALL SELECT id FROM contacts UNION ALL SELECT id FROM leads UNION ALL SELECT id FROM tasks UNION ALL SELECT id FROM users))`, x)
	if n != 0 {
		t.Errorf("%d rows of the deleted contact (or references to them) remain", n)
	}
	if got := relationships(t, env, co.Secret, y); len(got) != 0 {
		t.Errorf("y still relates to the deleted contact: %+v", got)
	}
	unlinked := func(t *testing.T, r *apitest.Response) {
		var v struct{ ContactID *string }
		r.Decode(t, &v)
		if v.ContactID != nil {
			t.Errorf("contactId %s, want null", *v.ContactID)
		}
	}
	env.Run(t, []apitest.Case{
		{Name: "the contact is gone", Key: co.Secret, Path: cx, Status: 404},
		{Name: "its notes are gone", Key: co.Secret, Path: cx + "/activities", Status: 404},
		{Name: "the task stays, unlinked", Key: co.Secret, Path: "/tasks/" + task.ID, Status: 200, Check: unlinked},
		{Name: "the appointment stays, unlinked", Key: co.Secret, Path: "/appointments/" + appt.ID, Status: 200, Check: unlinked},
		{Name: "the converted lead stays, unlinked", Key: co.Secret, Path: "/leads/" + lead.ID, Status: 200, Check: unlinked},
		{Name: "tasks list without error", Key: co.Secret, Path: "/tasks", Status: 200},
		{Name: "leads list without error", Key: co.Secret, Path: "/leads?converted=true", Status: 200},
		{Name: "deleting it again is 404", Key: co.Secret, Method: "DELETE", Path: cx, Header: map[string]string{"If-Match": "*"}, Status: 404},
	})
	// The external ids are free again: a note of y and a contract of y take them.
	must(t, do(t, env, "POST", "/contacts/"+y+"/notes", co.Secret, note), 201)
	must(t, do(t, env, "PUT", "/external/crm/contracts/V-1", co.Secret, contract(y)), 201)
}
