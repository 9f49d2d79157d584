package leads

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/leadattachment"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// contact is the Contact resource as tests read it.
type contact struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Business  *struct {
		CompanyName string `json:"companyName"`
	} `json:"business"`
	Email  *string `json:"email"`
	Phones []struct {
		Number    string `json:"number"`
		Type      string `json:"type"`
		IsPrimary bool   `json:"isPrimary"`
	} `json:"phones"`
	OwnerID *string `json:"ownerId"`
}

type convertResult struct {
	Lead           lead    `json:"lead"`
	Contact        contact `json:"contact"`
	LinkedExisting bool    `json:"linkedExisting"`
}

type dryRun struct {
	Duplicates []struct {
		Contact   contact  `json:"contact"`
		MatchedBy []string `json:"matchedBy"`
	} `json:"duplicates"`
	Conflicts []struct {
		Field        string  `json:"field"`
		LeadValue    *string `json:"leadValue"`
		ContactValue *string `json:"contactValue"`
	} `json:"conflicts"`
}

func mustConvert(t *testing.T, env *apitest.Env, key, leadID string, body any) convertResult {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/leads/" + leadID + "/convert", Key: key, Body: body})
	if r.Status != 201 {
		t.Fatalf("convert %s: %d %s", leadID, r.Status, r.Body)
	}
	var res convertResult
	r.Decode(t, &res)
	return res
}

func TestLeads_Convert(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	agent := env.NewUser(t, a, "agent")
	stages := mustStages(t, env, a.Secret)
	anna := apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"firstName": "Anna", "lastName": "Berger",
		"email": "Anna.Berger@example.com", "phone": "0170 1234567", "ownerId": agent.ID.String()})
	pdf := []byte("%PDF-1.7 offer")
	att1 := addAttachment(t, env, a.ID, anna.ID, "angebot.pdf", "application/pdf", pdf)
	att2 := addAttachment(t, env, a.ID, anna.ID, "Übersicht.txt", "not a type", []byte("hallo"))

	// Dry run before any contact exists: nothing matches.
	env.Run(t, []apitest.Case{
		{Name: "dry run finds nothing yet", Key: a.Secret, Method: "POST", Path: "/leads/" + anna.ID + "/convert",
			Body: `{"contactType":"private","dryRun":true}`, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				var d dryRun
				r.Decode(t, &d)
				if len(d.Duplicates) != 0 || len(d.Conflicts) != 0 {
					t.Errorf("got %+v", d)
				}
			}},
	})
	if r := env.Do(t, apitest.Request{Path: "/leads/" + anna.ID, Key: a.Secret}); r.Header.Get("ETag") != `"1"` {
		t.Fatalf("a dry run changed the lead: %s", r.Body)
	}

	res := mustConvert(t, env, a.Secret, anna.ID, `{"contactType":"private"}`)
	c := res.Contact
	if res.LinkedExisting || c.Type != "private" || c.FirstName != "Anna" || c.LastName != "Berger" ||
		*c.Email != "Anna.Berger@example.com" || c.Business != nil || len(c.Phones) != 1 || c.Phones[0].Type != "mobile" ||
		!c.Phones[0].IsPrimary || *c.OwnerID != agent.ID.String() {
		t.Errorf("contact %+v", c)
	}
	l := res.Lead
	if !l.Converted || l.ConvertedAt == nil || *l.ContactID != c.ID || l.StageID != stages["converted"].ID || len(l.Attachments) != 2 {
		t.Errorf("lead %+v", l)
	}
	env.InCompany(t, a.ID, func(ctx context.Context, db *ent.Client) error {
		n, err := db.LeadAttachment.Query().Where(leadattachment.ContactID(uuid.MustParse(c.ID))).Count(ctx)
		if n != 2 {
			t.Errorf("%d attachments moved to the contact, want 2", n)
		}
		return err
	})

	// A second lead for the same person: the contact is a duplicate, its last name a conflict.
	schmidt := apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"firstName": "anna", "lastName": "Schmidt",
		"email": "ANNA.BERGER@example.com", "phone": "+49 170 1234567", "source": "event"})
	business := apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"firstName": "Carl", "email": "carl@example.com"})
	noName := apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"phone": "030 1234567"})
	bLead := apitest.Create[lead](t, env, b.Secret, "/leads", map[string]any{"email": "b@example.com", "firstName": "Bo", "lastName": "B"})
	bContact := mustConvert(t, env, b.Secret, bLead.ID, `{"contactType":"private"}`).Contact
	path := func(id string) string { return "/leads/" + id + "/convert" }

	env.Run(t, []apitest.Case{
		{Name: "converting twice is 409", Key: a.Secret, Method: "POST", Path: path(anna.ID), Body: `{"contactType":"private"}`,
			Status: 409, Problem: "lead_already_converted"},
		{Name: "a dry run of a converted lead is 409 too", Key: a.Secret, Method: "POST", Path: path(anna.ID),
			Body: `{"contactType":"private","dryRun":true}`, Status: 409, Problem: "lead_already_converted"},
		{Name: "a converted lead may leave the stage converted", Key: a.Secret, Method: "PATCH", Path: "/leads/" + anna.ID,
			Body: map[string]any{"stageId": stages["new"].ID}, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				var l lead
				r.Decode(t, &l)
				if l.StageID != stages["new"].ID || !l.Converted || l.ContactID == nil || *l.ContactID != c.ID {
					t.Errorf("lead %+v: it moves, and stays converted with its contact", l)
				}
			}},
		{Name: "and come back", Key: a.Secret, Method: "PATCH", Path: "/leads/" + anna.ID,
			Body: map[string]any{"stageId": stages["converted"].ID}, Status: 200},
		{Name: "its notes may change", Key: a.Secret, Method: "PATCH", Path: "/leads/" + anna.ID, Body: `{"notes":"customer now"}`, Status: 200},
		{Name: "dry run lists the duplicate", Key: a.Secret, Method: "POST", Path: path(schmidt.ID),
			Body: `{"contactType":"private","dryRun":true}`, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				var d dryRun
				r.Decode(t, &d)
				if len(d.Duplicates) != 1 || d.Duplicates[0].Contact.ID != c.ID || strings.Join(d.Duplicates[0].MatchedBy, ",") != "email,phone" ||
					len(d.Conflicts) != 0 {
					t.Errorf("got %+v", d)
				}
			}},
		{Name: "dry run against the contact lists the conflict", Key: a.Secret, Method: "POST", Path: path(schmidt.ID),
			Body: map[string]any{"contactType": "private", "dryRun": true, "existingContactId": c.ID}, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var d dryRun
				r.Decode(t, &d)
				if len(d.Conflicts) != 1 || d.Conflicts[0].Field != "lastName" || *d.Conflicts[0].LeadValue != "Schmidt" ||
					*d.Conflicts[0].ContactValue != "Berger" {
					t.Errorf("conflicts %+v (first name and e-mail differ only in case)", d.Conflicts)
				}
			}},
		{Name: "an override decides the conflict in a dry run", Key: a.Secret, Method: "POST", Path: path(schmidt.ID),
			Body: map[string]any{"contactType": "private", "dryRun": true, "existingContactId": c.ID,
				"overrides": map[string]any{"lastName": "Berger-Schmidt"}}, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var d dryRun
				r.Decode(t, &d)
				if len(d.Conflicts) != 0 {
					t.Errorf("conflicts %+v", d.Conflicts)
				}
			}},
		{Name: "a conflict without override is 409", Key: a.Secret, Method: "POST", Path: path(schmidt.ID),
			Body: map[string]any{"contactType": "private", "existingContactId": c.ID}, Status: 409, Problem: "contact_conflict"},
		{Name: "another company's contact is not found", Key: a.Secret, Method: "POST", Path: path(schmidt.ID),
			Body: map[string]any{"contactType": "private", "existingContactId": bContact.ID}, Status: 404, Problem: "not_found"},
		{Name: "a private contact needs first and last name", Key: a.Secret, Method: "POST", Path: path(noName.ID),
			Body: `{"contactType":"private"}`, Status: 422, Check: apitest.FieldErrors("overrides.firstName:required", "overrides.lastName:required")},
		{Name: "a business contact needs a company name", Key: a.Secret, Method: "POST", Path: path(business.ID),
			Body: `{"contactType":"business"}`, Status: 422, Check: apitest.FieldErrors("overrides.business.companyName:required")},
		{Name: "every bad field is listed", Key: a.Secret, Method: "POST", Path: path(business.ID), Status: 422,
			Body: map[string]any{"contactType": "person", "existingContactId": "1", "overrides": map[string]any{"email": "x",
				"phones": []map[string]any{{"number": "abc", "type": "pager"}}, "ownerId": "2"}},
			Check: apitest.FieldErrors("contactType:invalid_enum", "existingContactId:invalid_uuid", "overrides.email:invalid_email",
				"overrides.phones.0.number:invalid_phone", "overrides.phones.0.type:invalid_enum", "overrides.ownerId:invalid_uuid",
				"overrides.phones:not_patchable")},
		{Name: "contactType is required", Key: a.Secret, Method: "POST", Path: path(business.ID), Body: `{}`, Status: 422,
			Check: apitest.FieldErrors("contactType:required")},
		{Name: "business fields on a private contact", Key: a.Secret, Method: "POST", Path: path(business.ID),
			Body: `{"contactType":"private","overrides":{"lastName":"C","business":{"companyName":"X"}}}`, Status: 422,
			Check: apitest.FieldErrors("overrides.business:group_not_applicable")},
		{Name: "unknown owner override", Key: a.Secret, Method: "POST", Path: path(business.ID), Status: 422,
			Body:  map[string]any{"contactType": "business", "overrides": map[string]any{"ownerId": uuid.NewString(), "business": map[string]any{"companyName": "X"}}},
			Check: apitest.FieldErrors("overrides.ownerId:unknown_user")},
		{Name: "unknown override field", Key: a.Secret, Method: "POST", Path: path(business.ID),
			Body: `{"contactType":"private","overrides":{"birthday":"1990-01-01"}}`, Status: 422, Check: apitest.FieldErrors("overrides.birthday:unknown_field")},
		{Name: "malformed", Key: a.Secret, Method: "POST", Path: path(business.ID), Body: `{`, Status: 400, Problem: "malformed_json"},
		{Name: "leads:write alone is not enough", Key: a.KeyWithScopes(t, "leads:write"), Method: "POST", Path: path(business.ID),
			Body: `{"contactType":"business"}`, Status: 403, Problem: "insufficient_scope"},
		{Name: "contacts:write alone is not enough", Key: a.KeyWithScopes(t, "contacts:write"), Method: "POST", Path: path(business.ID),
			Body: `{"contactType":"business"}`, Status: 403, Problem: "insufficient_scope"},
		{Name: "other company's lead is 404", Key: b.Secret, Method: "POST", Path: path(business.ID), Body: `{"contactType":"private"}`,
			Status: 404, Problem: "not_found"},
		{Name: "unknown lead is 404", Key: a.Secret, Method: "POST", Path: path(uuid.NewString()), Body: `{"contactType":"private"}`,
			Status: 404, Problem: "not_found"},
		{Name: "bad id", Key: a.Secret, Method: "POST", Path: path("x"), Body: `{"contactType":"private"}`, Status: 400, Problem: "invalid_id"},
		{Name: "no key", Method: "POST", Path: path(business.ID), Body: `{"contactType":"private"}`, Status: 401},
	})

	merged := mustConvert(t, env, a.Secret, schmidt.ID, map[string]any{"contactType": "private", "existingContactId": c.ID,
		"overrides": map[string]any{"lastName": "Berger-Schmidt"}})
	if !merged.LinkedExisting || merged.Contact.ID != c.ID || merged.Contact.LastName != "Berger-Schmidt" ||
		merged.Contact.FirstName != "Anna" || len(merged.Contact.Phones) != 1 || *merged.Lead.ContactID != c.ID {
		t.Errorf("merge %+v", merged)
	}
	biz := mustConvert(t, env, a.Secret, business.ID, `{"contactType":"business","overrides":{"business":{"companyName":"Carl GmbH"}}}`).Contact
	if biz.Type != "business" || biz.Business == nil || biz.Business.CompanyName != "Carl GmbH" || len(biz.Phones) != 0 ||
		biz.FirstName != "Carl" || biz.Email == nil || *biz.Email != "carl@example.com" {
		t.Errorf("business contact %+v", biz)
	}
	env.Run(t, []apitest.Case{
		{Name: "the existing contact is of the other type", Key: a.Secret, Method: "POST", Path: path(noName.ID),
			Body: map[string]any{"contactType": "private", "existingContactId": biz.ID}, Status: 409, Problem: "contact_type_mismatch"},
	})

	// Events: one contact.created per created contact, contact.updated for the merge that changed
	// the contact, one lead.converted per lead.
	created := events(t, env, a.Secret, "contact.created")
	updated := events(t, env, a.Secret, "contact.updated")
	converted := events(t, env, a.Secret, "lead.converted")
	if len(created) != 2 || created[0].Data["id"] != c.ID || len(converted) != 3 || converted[0].Data["contactId"] != c.ID {
		t.Errorf("contact.created %d, lead.converted %d", len(created), len(converted))
	}
	if len(updated) != 1 || updated[0].Data["id"] != c.ID || updated[0].Data["lastName"] != "Berger-Schmidt" {
		t.Errorf("contact.updated %+v", updated)
	}
	if got := events(t, env, a.KeyWithScopes(t, "events:read", "leads:read"), "contact.updated"); len(got) != 0 {
		t.Errorf("a key without contacts:read sees %d contact.updated events", len(got))
	}
	if got := events(t, env, a.KeyWithScopes(t, "events:read", "leads:read"), "contact.created,lead.converted"); len(got) != 3 {
		t.Errorf("a key without contacts:read sees %d events, want only the 3 lead.converted", len(got))
	}

	content := "/leads/" + anna.ID + "/attachments/"
	onContact := "/contacts/" + c.ID + "/attachments/"
	downloads := func(want []byte, ct, disposition string) func(t *testing.T, r *apitest.Response) {
		return func(t *testing.T, r *apitest.Response) {
			if string(r.Body) != string(want) || r.Header.Get("Content-Type") != ct ||
				r.Header.Get("Content-Disposition") != disposition || r.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("got %q %v", r.Body, r.Header)
			}
		}
	}
	pdfFile := downloads(pdf, "application/pdf", `attachment; filename="angebot.pdf"`)
	// The stored type ("not a type") is not trusted: the type is sniffed from the bytes.
	txtFile := downloads([]byte("hallo"), "text/plain; charset=utf-8", `attachment; filename="Uebersicht.txt"; filename*=UTF-8''%C3%9Cbersicht.txt`)
	env.Run(t, []apitest.Case{
		{Name: "downloads the file", Key: a.KeyWithScopes(t, "leads:read"), Path: content + att1 + "/content", Status: 200, Check: pdfFile},
		{Name: "a sniffed type, a non-ASCII name with an ASCII fallback", Key: a.Secret, Path: content + att2 + "/content",
			Status: 200, Check: txtFile},
		{Name: "the contact holds the file too", Key: a.KeyWithScopes(t, "contacts:read"), Path: onContact + att1 + "/content",
			Status: 200, Check: pdfFile},
		{Name: "another lead's path is 404", Key: a.Secret, Path: "/leads/" + schmidt.ID + "/attachments/" + att1 + "/content", Status: 404},
		{Name: "other company is 404", Key: b.Secret, Path: content + att1 + "/content", Status: 404, Problem: "not_found"},
		{Name: "sandbox key is 404", Key: a.TestSecret, Path: content + att1 + "/content", Status: 404, Problem: "not_found"},
		{Name: "unknown attachment", Key: a.Secret, Path: content + uuid.NewString() + "/content", Status: 404},
		{Name: "bad attachment id", Key: a.Secret, Path: content + "x/content", Status: 400, Problem: "invalid_id"},
		{Name: "bad lead id", Key: a.Secret, Path: "/leads/x/attachments/" + att1 + "/content", Status: 400, Problem: "invalid_id"},
		{Name: "scope missing", Key: a.KeyWithScopes(t, "contacts:read"), Path: content + att1 + "/content", Status: 403},
		{Name: "no key", Path: content + att1 + "/content", Status: 401},
	})

	// Deleting the converted lead leaves the contact's files: they outlive the lead, where they
	// belong now. An unconverted lead's files go with it.
	plain := apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"lastName": "Plain", "email": "plain@example.com"})
	plainAtt := addAttachment(t, env, a.ID, plain.ID, "weg.txt", "text/plain", []byte("weg"))
	env.Run(t, []apitest.Case{
		{Name: "a converted lead can be deleted", Key: a.Secret, Method: "DELETE", Path: "/leads/" + anna.ID, Status: 204},
		{Name: "an unconverted lead with a file too", Key: a.Secret, Method: "DELETE", Path: "/leads/" + plain.ID, Status: 204},
		{Name: "the lead's path is gone", Key: a.Secret, Path: content + att1 + "/content", Status: 404},
		{Name: "the contact's path still serves the file", Key: a.Secret, Path: onContact + att1 + "/content", Status: 200, Check: pdfFile},
		{Name: "both files", Key: a.Secret, Path: onContact + att2 + "/content", Status: 200, Check: txtFile},
		{Name: "another contact's path is 404", Key: a.Secret, Path: "/contacts/" + biz.ID + "/attachments/" + att1 + "/content", Status: 404},
		{Name: "other company is 404 on the contact's path", Key: b.Secret, Path: onContact + att1 + "/content", Status: 404, Problem: "not_found"},
		{Name: "sandbox key is 404 on the contact's path", Key: a.TestSecret, Path: onContact + att1 + "/content", Status: 404},
		{Name: "unknown contact", Key: a.Secret, Path: "/contacts/" + uuid.NewString() + "/attachments/" + att1 + "/content", Status: 404},
		{Name: "unknown attachment of the contact", Key: a.Secret, Path: onContact + uuid.NewString() + "/content", Status: 404},
		{Name: "bad contact id", Key: a.Secret, Path: "/contacts/x/attachments/" + att1 + "/content", Status: 400, Problem: "invalid_id"},
		{Name: "bad attachment id on the contact's path", Key: a.Secret, Path: onContact + "x/content", Status: 400, Problem: "invalid_id"},
		{Name: "contacts:read is needed", Key: a.KeyWithScopes(t, "leads:read"), Path: onContact + att1 + "/content", Status: 403,
			Problem: "insufficient_scope"},
		{Name: "no key on the contact's path", Path: onContact + att1 + "/content", Status: 401},
	})
	env.InCompany(t, a.ID, func(ctx context.Context, db *ent.Client) error {
		held, err := db.LeadAttachment.Query().Where(leadattachment.ContactID(uuid.MustParse(c.ID)), leadattachment.LeadIDIsNil()).Count(ctx)
		if err != nil {
			return err
		}
		gone, err := db.LeadAttachment.Query().Where(leadattachment.ID(uuid.MustParse(plainAtt))).Exist(ctx)
		if held != 2 || gone {
			t.Errorf("%d files held by the contact without a lead (want 2); the plain lead's file still there: %v", held, gone)
		}
		return err
	})
	if d := events(t, env, a.Secret, "lead.deleted"); len(d) != 2 || len(d[0].Data["attachments"].([]any)) != 2 {
		t.Errorf("lead.deleted %+v: the lead as it was, with its attachments", d)
	}
}

// TestLeads_ConvertDuplicatesSamePerson: a dry run lists only contacts that are the lead's
// person (app/platform/identity): a contact that merely shares the household's landline is not one.
func TestLeads_ConvertDuplicatesSamePerson(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	const landline = "+49 30 1234567"
	anna := apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"firstName": "Anna", "lastName": "Berger",
		"email": "anna.berger@example.com", "phone": landline})
	c := mustConvert(t, env, a.Secret, anna.ID, `{"contactType":"private"}`).Contact
	dups := func(want ...string) func(t *testing.T, r *apitest.Response) {
		return func(t *testing.T, r *apitest.Response) {
			var d dryRun
			r.Decode(t, &d)
			var got []string
			for _, x := range d.Duplicates {
				got = append(got, x.Contact.ID+":"+strings.Join(x.MatchedBy, ","))
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("duplicates %v, want %v", got, want)
			}
		}
	}
	for _, l := range []struct {
		name string
		lead map[string]any
		want []string
	}{
		{"her husband: same landline, other name and e-mail", map[string]any{"firstName": "Paul", "lastName": "Schmidt",
			"email": "paul@example.com", "phone": "030 1234567"}, nil},
		{"her daughter: same landline and last name, no e-mail", map[string]any{"firstName": "Petra", "lastName": "Berger",
			"phone": "030 1234567"}, nil},
		{"someone of her name with another e-mail", map[string]any{"firstName": "Anna", "lastName": "Berger",
			"email": "anna@other.example", "phone": "030 1234567"}, nil},
		{"Anna without e-mail", map[string]any{"firstName": "anna", "lastName": "BERGER", "phone": "030 1234567"},
			[]string{c.ID + ":phone"}},
		{"Anna by e-mail with a new phone", map[string]any{"lastName": "Berger", "email": "Anna.Berger@example.com",
			"phone": "0170 5556666"}, []string{c.ID + ":email"}},
	} {
		lead := apitest.Create[lead](t, env, a.Secret, "/leads", l.lead)
		env.Run(t, []apitest.Case{{Name: l.name, Key: a.Secret, Method: "POST", Path: "/leads/" + lead.ID + "/convert",
			Body: `{"contactType":"private","dryRun":true}`, Status: 200, Check: dups(l.want...)}})
	}
}
