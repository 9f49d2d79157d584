package signatures

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/ent/signaturerequest"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestSignatures_Invalid: every field's 422, each naming the field and its code, and nothing
// stored by any of them (no request, no mail). Each case names the bug it catches.
func TestSignatures_Invalid(t *testing.T) {
	t.Parallel()
	env := setup(t)
	f := newFixture(t, env)
	ok := upload(t, env, f.co.Secret, f.contact, "Vertrag.pdf", render(t, "Vertrag", 2))
	other := newContact(t, env, f.co.Secret, "andere@kunde.test", nil)
	othersDoc := upload(t, env, f.co.Secret, other, "Fremd.pdf", render(t, "Fremd", 1))
	b := env.NewCompany(t, "digital_signature")
	bContact := newContact(t, env, b.Secret, "b@kunde.test", nil)
	foreignDoc := upload(t, env, b.Secret, bContact, "B.pdf", render(t, "B", 1))
	text := upload(t, env, f.co.Secret, f.contact, "Notiz.txt", []byte("nur Text, kein PDF\n"))
	js := upload(t, env, f.co.Secret, f.contact, "Aktiv.pdf",
		pagesPDF(1, "/OpenAction 4 0 R", "<< /Type /Action /S /JavaScript /JS (app.alert\\(1\\)) >>"))
	var enc bytes.Buffer
	if err := api.Encrypt(bytes.NewReader(render(t, "Geheim", 1)), &enc, model.NewAESConfiguration("user", "owner", 256)); err != nil {
		t.Fatal(err)
	}
	encrypted := upload(t, env, f.co.Secret, f.contact, "Geheim.pdf", enc.Bytes())
	// 300 pages each: the second crosses the 500 pages of a request.
	big := upload(t, env, f.co.Secret, f.contact, "Lang.pdf", pagesPDF(300, ""))
	noMail := newContact(t, env, f.co.Secret, "", nil)
	body := func(mod func(m map[string]any)) map[string]any {
		m := map[string]any{"contactId": f.contact, "documents": []map[string]any{{"documentId": ok}}}
		mod(m)
		return m
	}
	docs := func(ds ...map[string]any) func(m map[string]any) {
		return func(m map[string]any) { m["documents"] = ds }
	}
	field := func(fl map[string]any) func(m map[string]any) {
		return func(m map[string]any) { m["fields"] = []map[string]any{fl} }
	}
	now := time.Now()
	cases := []struct {
		name string
		body any
		want []string
	}{
		// A body without the contact must not reach the database as a nil id.
		{"no contact", map[string]any{"documents": []map[string]any{{"documentId": ok}}}, []string{"contactId:required"}},
		{"bad ids", body(func(m map[string]any) {
			m["contactId"], m["mailboxId"] = "x", "y"
			m["documents"] = []map[string]any{{"documentId": "z"}}
		}), []string{"contactId:invalid_uuid", "mailboxId:invalid_uuid", "documents.0.documentId:invalid_uuid"}},
		// An unknown or invisible contact is a field error, not a 404 of the route.
		{"unknown contact", body(func(m map[string]any) { m["contactId"] = uuid.NewString() }), []string{"contactId:unknown_contact"}},
		{"no documents", body(func(m map[string]any) { delete(m, "documents") }), []string{"documents:required"}},
		{"empty documents", body(func(m map[string]any) { m["documents"] = []any{} }), []string{"documents:too_short"}},
		{"eleven documents", body(docs(make([]map[string]any, 11)...)), []string{"documents:too_long"}},
		// A document naming both kinds (or neither) would be read as one of them silently.
		{"both ids", body(docs(map[string]any{"documentId": ok, "standardDocumentId": ok})), []string{"documents.0:one_of"}},
		// Another company's document must never be merged into this company's PDF.
		{"foreign document", body(docs(map[string]any{"documentId": foreignDoc})), []string{"documents.0.documentId:unknown_document"}},
		// A document of another contact of the company must not be sent to this contact.
		{"another contact's document", body(docs(map[string]any{"documentId": ok}, map[string]any{"documentId": othersDoc})),
			[]string{"documents.1.documentId:unknown_document"}},
		{"not a PDF", body(docs(map[string]any{"documentId": text})), []string{"documents.0.documentId:not_pdf"}},
		// Active content in a signed PDF could show the signer something else than was sealed.
		{"javascript", body(docs(map[string]any{"documentId": js})), []string{"documents.0.documentId:javascript"}},
		{"encrypted", body(docs(map[string]any{"documentId": encrypted})), []string{"documents.0.documentId:encrypted"}},
		// The total bound, not only each document's: two 300-page documents are 600 pages.
		{"too many pages together", body(docs(map[string]any{"documentId": big}, map[string]any{"documentId": big})),
			[]string{"documents.1.documentId:too_many_pages"}},
		{"unknown standard document", body(docs(map[string]any{"standardDocumentId": uuid.NewString()})),
			[]string{"documents.0.standardDocumentId:unknown_standard_document"}},
		{"blank title, long message", body(func(m map[string]any) {
			m["title"], m["message"] = "  ", strings.Repeat("x", 2001)
		}), []string{"title:blank", "message:too_long"}},
		{"long title", body(func(m map[string]any) { m["title"] = strings.Repeat("T", 201) }), []string{"title:too_long"}},
		{"no signers", body(func(m map[string]any) { m["signers"] = []any{} }), []string{"signers:too_short"}},
		{"signer roles", body(func(m map[string]any) {
			m["signers"] = []map[string]any{{"role": "boss"}, {"role": "other"}, {"role": "other", "name": "X", "email": "kein"},
				{"role": "contact", "email": "x@example.org"}}
		}), []string{"signers.0.role:invalid_enum", "signers.1.name:required", "signers.1.email:required",
			"signers.2.email:invalid_email", "signers.3.email:not_allowed"}},
		{"two contacts", body(func(m map[string]any) { m["signers"] = []map[string]any{{"role": "contact"}, {"role": "contact"}} }),
			[]string{"signers.1.role:duplicate"}},
		// A company-level key has no user to default the broker to.
		{"broker without user", body(func(m map[string]any) { m["signers"] = []map[string]any{{"role": "broker"}} }),
			[]string{"signers.0.userId:required"}},
		{"unknown broker", body(func(m map[string]any) {
			m["signers"] = []map[string]any{{"role": "broker", "userId": b.Admin.ID.String()}}
		}), []string{"signers.0.userId:unknown_user"}},
		// One person with two links could sign twice.
		{"same address twice", body(func(m map[string]any) {
			m["signers"] = []map[string]any{{"role": "contact"}, {"role": "other", "name": "Erika", "email": strings.ToUpper(f.contactEmail)}}
		}), []string{"signers.1:duplicate_signer"}},
		{"field signer", body(field(map[string]any{"signer": 1, "page": 1, "x": 0, "y": 0, "width": 0.1, "height": 0.1})),
			[]string{"fields.0.signer:out_of_range"}},
		// A field beyond the page's edge would be stamped off the page.
		{"field off the page", body(field(map[string]any{"signer": 0, "page": 1, "x": 0.8, "y": 0, "width": 0.3, "height": 0.1})),
			[]string{"fields.0.width:out_of_range"}},
		{"field coordinates", body(field(map[string]any{"signer": 0, "page": 0, "x": -0.1, "y": 1.5, "width": 0, "height": 0.1})),
			[]string{"fields.0.page:out_of_range", "fields.0.x:out_of_range", "fields.0.y:out_of_range", "fields.0.width:out_of_range"}},
		// The page bound is the merged PDF's: the document has 2 pages.
		{"field page beyond the PDF", body(field(map[string]any{"signer": 0, "page": 3, "x": 0, "y": 0, "width": 0.1, "height": 0.1})),
			[]string{"fields.0.page:out_of_range"}},
		{"field incomplete", body(field(map[string]any{"signer": 0})),
			[]string{"fields.0.page:required", "fields.0.x:required", "fields.0.y:required", "fields.0.width:required", "fields.0.height:required"}},
		{"unknown provider", body(func(m map[string]any) { m["provider"] = "docusign" }), []string{"provider:unknown_provider"}},
		{"expiry in the past", body(func(m map[string]any) { m["expiresAt"] = now.Add(-time.Minute).Format(time.RFC3339) }),
			[]string{"expiresAt:not_in_future"}},
		{"expiry too late", body(func(m map[string]any) { m["expiresAt"] = now.Add(91 * 24 * time.Hour).Format(time.RFC3339) }),
			[]string{"expiresAt:too_late"}},
		{"expiry not a time", body(func(m map[string]any) { m["expiresAt"] = "morgen" }), []string{"expiresAt:invalid_datetime"}},
		// A mailbox of another company must not send this company's links.
		{"unknown mailbox", body(func(m map[string]any) { m["mailboxId"] = uuid.NewString() }), []string{"mailboxId:unknown_mailbox"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := env.Do(t, apitest.Request{Method: "POST", Path: "/signature-requests", Key: f.co.Secret, Body: c.body})
			if r.Status != 422 {
				t.Fatalf("status %d, want 422: %s", r.Status, r.Body)
			}
			apitest.FieldErrorSet(c.want...)(t, r)
		})
	}
	// A contact without an address cannot get a link.
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/signature-requests", Key: f.co.Secret,
		Body: map[string]any{"contactId": noMail, "documents": []map[string]any{{"documentId": upload(t, env, f.co.Secret, noMail, "N.pdf", render(t, "N", 1))}}}})
	if r.Status != 422 {
		t.Fatalf("contact without e-mail: %d %s", r.Status, r.Body)
	}
	apitest.FieldErrors("signers.0:contact_without_email")(t, r)
	// Nothing of any of them was stored or sent.
	env.InCompany(t, f.co.ID, func(ctx context.Context, db *ent.Client) error {
		n, err := db.SignatureRequest.Query().Count(ctx)
		if err == nil && n != 0 {
			t.Errorf("%d requests stored by refused creates", n)
		}
		m, err2 := db.Email.Query().Where(email.SubjectHasPrefix("Bitte unterschreiben")).Count(ctx)
		if err2 == nil && m != 0 {
			t.Errorf("%d mails sent by refused creates", m)
		}
		if err == nil {
			err = err2
		}
		return err
	})
}

// TestSignatures_NoMailbox: a company without any mailbox gets 422 mailbox_required; a user's
// personal mailbox is the default before the company's shared one. Catches links sent from no
// mailbox (a 500 in the e-mail area) and a broker's request sent from the office mailbox when
// the broker has one of their own.
func TestSignatures_NoMailbox(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t, "digital_signature")
	contact := newContact(t, env, co.Secret, "kunde@example.org", nil)
	doc := upload(t, env, co.Secret, contact, "V.pdf", render(t, "V", 1))
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/signature-requests", Key: co.Secret,
		Body: map[string]any{"contactId": contact, "documents": []map[string]any{{"documentId": doc}}}})
	if r.Status != 422 {
		t.Fatalf("no mailbox: %d %s", r.Status, r.Body)
	}
	apitest.FieldErrors("mailboxId:mailbox_required")(t, r)

	f := newFixture(t, env)
	u := env.NewUser(t, f.co, "admin")
	personal := newPersonalMailbox(t, env, f, u.ID)
	key := f.co.UserKey(t, u)
	doc2 := upload(t, env, f.co.Secret, f.contact, "V.pdf", render(t, "V", 1))
	got := create(t, env, key, map[string]any{"contactId": f.contact, "documents": []map[string]any{{"documentId": doc2}}})
	if got.MailboxID == nil || *got.MailboxID != personal || got.CreatorID == nil || *got.CreatorID != u.ID.String() {
		t.Errorf("mailbox %v (personal %s), creator %v", got.MailboxID, personal, got.CreatorID)
	}
	// The broker signer defaults to the key's user.
	got = create(t, env, key, map[string]any{"contactId": f.contact, "documents": []map[string]any{{"documentId": doc2}},
		"signers": []map[string]any{{"role": "broker"}}})
	if got.Signers[0].UserID == nil || *got.Signers[0].UserID != u.ID.String() || got.Signers[0].Email != u.Email {
		t.Errorf("broker signer %+v", got.Signers[0])
	}
}

// TestSignatures_Forbidden: without the feature digital_signature every route is 403, and a
// key without signatures:write cannot create, cancel or remind. Catches a route mounted without
// its scope or feature check.
func TestSignatures_Forbidden(t *testing.T) {
	t.Parallel()
	env := setup(t)
	unlicensed := env.NewCompany(t, "emails")
	f := newFixture(t, env)
	reader := f.co.KeyWithScopes(t, "signatures:read")
	id := uuid.NewString()
	body := map[string]any{"contactId": f.contact, "documents": []map[string]any{{"documentId": uuid.NewString()}}}
	env.Run(t, []apitest.Case{
		{Name: "list unlicensed", Key: unlicensed.Secret, Path: "/signature-requests", Status: 403, Problem: "feature_not_licensed"},
		{Name: "create unlicensed", Key: unlicensed.Secret, Method: "POST", Path: "/signature-requests", Body: body, Status: 403,
			Problem: "feature_not_licensed"},
		{Name: "get unlicensed", Key: unlicensed.Secret, Path: "/signature-requests/" + id, Status: 403, Problem: "feature_not_licensed"},
		{Name: "create read-only", Key: reader, Method: "POST", Path: "/signature-requests", Body: body, Status: 403},
		{Name: "cancel read-only", Key: reader, Method: "POST", Path: "/signature-requests/" + id + "/cancel", Status: 403},
		{Name: "remind read-only", Key: reader, Method: "POST", Path: "/signature-requests/" + id + "/remind", Status: 403},
		{Name: "list read-only", Key: reader, Path: "/signature-requests", Status: 200},
		{Name: "get unknown", Key: reader, Path: "/signature-requests/" + id, Status: 404},
		{Name: "get bad id", Key: reader, Path: "/signature-requests/nope", Status: 400},
		{Name: "cancel unknown", Key: f.co.Secret, Method: "POST", Path: "/signature-requests/" + id + "/cancel", Status: 404},
		{Name: "remind unknown", Key: f.co.Secret, Method: "POST", Path: "/signature-requests/" + id + "/remind", Status: 404},
	})
}

// countRequests counts company's requests as stored.
func countRequests(t *testing.T, env *apitest.Env, company uuid.UUID, status signaturerequest.Status) int {
	t.Helper()
	n := 0
	env.InCompany(t, company, func(ctx context.Context, db *ent.Client) error {
		var err error
		n, err = db.SignatureRequest.Query().Where(signaturerequest.StatusEQ(status)).Count(ctx)
		return err
	})
	return n
}
