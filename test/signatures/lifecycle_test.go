package signatures

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/ent/signaturerequest"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// simple is the body of a request of f's contact over one new one-page document.
func simple(t *testing.T, env *apitest.Env, f *fixture, extra map[string]any) map[string]any {
	t.Helper()
	doc := upload(t, env, f.co.Secret, f.contact, "Vollmacht.pdf", render(t, "Vollmacht", 1))
	m := map[string]any{"contactId": f.contact, "documents": []map[string]any{{"documentId": doc}}}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// TestSignatures_List: filters by contact, status and updatedSince, paging, and bad
// parameters. Catches a filter ignored, a status filter that does not bind the cursor, and a
// list of another company's requests.
func TestSignatures_List(t *testing.T) {
	t.Parallel()
	env := setup(t)
	f := newFixture(t, env)
	second := newContact(t, env, f.co.Secret, "zweiter@kunde.test", nil)
	a := create(t, env, f.co.Secret, simple(t, env, f, nil))
	doc := upload(t, env, f.co.Secret, second, "Z.pdf", render(t, "Z", 1))
	b := create(t, env, f.co.Secret, map[string]any{"contactId": second, "documents": []map[string]any{{"documentId": doc}}})
	mid := time.Now()
	time.Sleep(10 * time.Millisecond)
	c := create(t, env, f.co.Secret, simple(t, env, f, nil))
	if r := env.Do(t, apitest.Request{Method: "POST", Path: "/signature-requests/" + c.ID + "/cancel", Key: f.co.Secret}); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	other := newFixture(t, env)
	create(t, env, other.co.Secret, simple(t, env, other, nil))

	all := list(t, env, f.co.Secret, "")
	if len(all) != 3 || all[0].ID != a.ID || all[1].ID != b.ID || all[2].ID != c.ID || len(all[0].Signers) != 1 {
		t.Fatalf("list %+v", ids(all))
	}
	if got := ids(list(t, env, f.co.Secret, "contactId="+second)); len(got) != 1 || !got[b.ID] {
		t.Errorf("contactId filter %v", got)
	}
	if got := ids(list(t, env, f.co.Secret, "status=cancelled")); len(got) != 1 || !got[c.ID] {
		t.Errorf("status filter %v", got)
	}
	if got := ids(list(t, env, f.co.Secret, "status=pending,cancelled&contactId="+f.contact)); len(got) != 2 || !got[a.ID] || !got[c.ID] {
		t.Errorf("statuses %v", got)
	}
	if got := ids(list(t, env, f.co.Secret, "updatedSince="+mid.UTC().Format(time.RFC3339Nano))); len(got) != 1 || !got[c.ID] {
		t.Errorf("updatedSince %v", got)
	}
	var p apitest.Page[request]
	r := env.Do(t, apitest.Request{Path: "/signature-requests?limit=1&status=pending", Key: f.co.Secret})
	r.Decode(t, &p)
	if len(p.Data) != 1 || p.Data[0].ID != a.ID || !p.Pagination.HasMore || p.Pagination.NextCursor == "" {
		t.Fatalf("page 1: %s", r.Body)
	}
	r = env.Do(t, apitest.Request{Path: "/signature-requests?limit=1&status=pending&cursor=" + p.Pagination.NextCursor, Key: f.co.Secret})
	var p2 apitest.Page[request]
	r.Decode(t, &p2)
	if r.Status != 200 || len(p2.Data) != 1 || p2.Data[0].ID != b.ID || p2.Pagination.HasMore {
		t.Errorf("page 2: %d %s", r.Status, r.Body)
	}
	if r := env.Do(t, apitest.Request{Path: "/signature-requests?limit=1&status=cancelled&cursor=" + p.Pagination.NextCursor, Key: f.co.Secret}); r.Status != 422 {
		t.Errorf("a cursor of another filter: %d", r.Status)
	}
	r = env.Do(t, apitest.Request{Path: "/signature-requests?status=open&contactId=x&updatedSince=gestern", Key: f.co.Secret})
	if r.Status != 422 {
		t.Fatalf("bad filters: %d %s", r.Status, r.Body)
	}
	apitest.FieldErrorSet("status:invalid_enum", "contactId:invalid_uuid", "updatedSince:invalid_datetime")(t, r)
}

// TestSignatures_Visibility: another company's request is 404 for every route; an agent who
// may not see the contact gets 404, never lists the request and receives none of its events,
// while the contact's owner does. Catches a request read past RLS or the ent rule, and events
// scoped to the company instead of the contact.
func TestSignatures_Visibility(t *testing.T) {
	t.Parallel()
	env := setup(t)
	f := newFixture(t, env)
	owner, outsider := env.NewUser(t, f.co, "agent"), env.NewUser(t, f.co, "agent")
	owned := newContact(t, env, f.co.Secret, "eigen@kunde.test", &owner.ID)
	doc := upload(t, env, f.co.Secret, owned, "E.pdf", render(t, "E", 1))
	req := create(t, env, f.co.Secret, map[string]any{"contactId": owned, "documents": []map[string]any{{"documentId": doc}}})
	ownerKey, outsiderKey := f.co.UserKey(t, owner), f.co.UserKey(t, outsider)
	b := newFixture(t, env)
	path := "/signature-requests/" + req.ID
	env.Run(t, []apitest.Case{
		{Name: "other company get", Key: b.co.Secret, Path: path, Status: 404},
		{Name: "other company cancel", Key: b.co.Secret, Method: "POST", Path: path + "/cancel", Status: 404},
		{Name: "other company remind", Key: b.co.Secret, Method: "POST", Path: path + "/remind", Status: 404},
		{Name: "outsider get", Key: outsiderKey, Path: path, Status: 404},
		{Name: "outsider cancel", Key: outsiderKey, Method: "POST", Path: path + "/cancel", Status: 404},
		{Name: "owner get", Key: ownerKey, Path: path, Status: 200},
	})
	if got := ids(list(t, env, outsiderKey, "")); got[req.ID] {
		t.Error("the outsider lists the request")
	}
	if got := ids(list(t, env, b.co.Secret, "")); got[req.ID] {
		t.Error("another company lists the request")
	}
	if got := ids(list(t, env, ownerKey, "")); !got[req.ID] {
		t.Error("the owner does not list the request")
	}
	if n := apitest.EventsAbout(t, env, outsiderKey, "signature_request.created", req.ID); n != 0 {
		t.Errorf("the outsider sees %d signature_request.created", n)
	}
	if n := apitest.EventsAbout(t, env, ownerKey, "signature_request.created", req.ID); n != 1 {
		t.Errorf("the owner sees %d signature_request.created, want 1", n)
	}
	// An agent cannot send a request for a contact it may not see (422, like an unknown one).
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/signature-requests", Key: outsiderKey,
		Body: map[string]any{"contactId": owned, "documents": []map[string]any{{"documentId": doc}}}})
	if r.Status != 422 {
		t.Fatalf("outsider create: %d %s", r.Status, r.Body)
	}
	apitest.FieldErrors("contactId:unknown_contact")(t, r)
}

// clocked is a server of the package database whose clock the test moves (the package's
// server works the jobs, so the mails of this one are delivered too).
func clocked(t *testing.T) (*apitest.Env, *atomic.Int64) {
	t.Helper()
	setup(t)
	var offset atomic.Int64
	env := apitest.New(t, app.WithClock(func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }))
	return env, &offset
}

// TestSignatures_CancelRemind: cancel answers 200 with the cancelled request and then 409
// naming the status; remind right after the invitation is 409 remind_too_soon with a
// Retry-After of about an hour, an hour later 202 listing the pending signers, who get the same
// link again, and then too soon again; a signed signer is not reminded; remind of a cancelled
// request is 409. Catches a second cancel accepted, reminders more often than hourly, a
// reminder with a new link (the first one would stop working) or to a signer who signed.
func TestSignatures_CancelRemind(t *testing.T) {
	t.Parallel()
	env, offset := clocked(t)
	f := newFixture(t, env)
	req := create(t, env, f.co.Secret, simple(t, env, f, map[string]any{"signers": []map[string]any{{"role": "contact"},
		{"role": "other", "name": "Max Zeuge", "email": "zeuge@example.org"}, {"role": "other", "name": "Eva", "email": "eva@example.org"}}}))
	invitations := received(t, f.srv, 3)
	first := map[string]string{}
	for _, m := range invitations {
		first[m.To[0].Email] = linkIn(t, m.Text)
	}
	path := "/signature-requests/" + req.ID

	r := env.Do(t, apitest.Request{Method: "POST", Path: path + "/remind", Key: f.co.Secret})
	if r.Status != 409 || r.Problem(t).Code != "remind_too_soon" {
		t.Fatalf("remind at once: %d %s", r.Status, r.Body)
	}
	if s, _ := strconv.Atoi(r.Header.Get("Retry-After")); s < 3500 || s > 3600 {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	// Eva signed meanwhile (the signing page's work, written here).
	env.InCompany(t, f.co.ID, func(ctx context.Context, db *ent.Client) error {
		return db.SignatureSigner.UpdateOneID(uuid.MustParse(req.Signers[2].ID)).SetStatus("signed").SetSignedAt(time.Now()).Exec(ctx)
	})
	offset.Store(int64(time.Hour + time.Minute))
	r = env.Do(t, apitest.Request{Method: "POST", Path: path + "/remind", Key: f.co.Secret})
	if r.Status != 202 {
		t.Fatalf("remind after an hour: %d %s", r.Status, r.Body)
	}
	var rem struct{ Reminded []string }
	r.Decode(t, &rem)
	if len(rem.Reminded) != 2 || rem.Reminded[0] != req.Signers[0].ID || rem.Reminded[1] != req.Signers[1].ID {
		t.Errorf("reminded %v", rem.Reminded)
	}
	got := get(t, env, f.co.Secret, req.ID)
	if got.Signers[0].RemindedAt == nil || got.Signers[1].RemindedAt == nil || got.Signers[2].RemindedAt != nil {
		t.Errorf("remindedAt %+v", got.Signers)
	}
	all := received(t, f.srv, 5)
	for _, m := range all[3:] {
		if !strings.HasPrefix(m.Subject, "Erinnerung: Bitte unterschreiben") || linkIn(t, m.Text) != first[m.To[0].Email] {
			t.Errorf("reminder to %v: %q, link %s, first %s", m.To, m.Subject, linkIn(t, m.Text), first[m.To[0].Email])
		}
	}
	if r := env.Do(t, apitest.Request{Method: "POST", Path: path + "/remind", Key: f.co.Secret}); r.Status != 409 ||
		r.Problem(t).Code != "remind_too_soon" {
		t.Errorf("second remind: %d %s", r.Status, r.Body)
	}

	r = env.Do(t, apitest.Request{Method: "POST", Path: path + "/cancel", Key: f.co.Secret})
	if r.Status != 200 || r.Header.Get("ETag") == "" {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	var cancelled request
	r.Decode(t, &cancelled)
	if cancelled.Status != "cancelled" || cancelled.CancelledAt == nil {
		t.Errorf("cancelled %+v", cancelled)
	}
	if n := apitest.EventsAbout(t, env, f.co.Secret, "signature_request.cancelled", req.ID); n != 1 {
		t.Errorf("%d signature_request.cancelled, want 1", n)
	}
	env.Run(t, []apitest.Case{
		{Name: "cancel again", Key: f.co.Secret, Method: "POST", Path: path + "/cancel", Status: 409, Problem: "request_not_pending",
			Check: func(t *testing.T, r *apitest.Response) {
				if !strings.Contains(r.Problem(t).Detail, "cancelled") {
					t.Errorf("detail %q does not name the status", r.Problem(t).Detail)
				}
			}},
		{Name: "remind cancelled", Key: f.co.Secret, Method: "POST", Path: path + "/remind", Status: 409, Problem: "request_not_pending"},
	})
}

// TestSignatures_ExpiryJob: a request expiring in a few seconds is expired by its own job
// (the row changes without any read of the API), signature_request.expired is recorded once,
// and cancel then answers 409. Catches requests that stay pending forever when nobody reads
// them, and an expiry recorded twice (job and read).
func TestSignatures_ExpiryJob(t *testing.T) {
	t.Parallel()
	env := setup(t)
	f := newFixture(t, env)
	req := create(t, env, f.co.Secret, simple(t, env, f, map[string]any{"expiresAt": time.Now().Add(3 * time.Second).Format(time.RFC3339Nano)}))
	deadline := time.Now().Add(45 * time.Second)
	for row(t, env, f.co.ID, req.ID).Status != signaturerequest.StatusExpired {
		if time.Now().After(deadline) {
			t.Fatal("the expiry job did not expire the request")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := get(t, env, f.co.Secret, req.ID); got.Status != "expired" {
		t.Errorf("status %s", got.Status)
	}
	if n := apitest.EventsAbout(t, env, f.co.Secret, "signature_request.expired", req.ID); n != 1 {
		t.Errorf("%d signature_request.expired, want 1", n)
	}
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/signature-requests/" + req.ID + "/cancel", Key: f.co.Secret})
	if r.Status != 409 || r.Problem(t).Code != "request_not_pending" {
		t.Errorf("cancel expired: %d %s", r.Status, r.Body)
	}
}

// TestSignatures_ExpiryOnRead: past its expiresAt (the server's clock moved on, the job not yet
// run) a request reads as expired in GET and the list and cannot be reminded or cancelled; the
// event is recorded once however often it is read. Catches a pending request shown (and
// signable) after its expiry because its job is late.
func TestSignatures_ExpiryOnRead(t *testing.T) {
	t.Parallel()
	env, offset := clocked(t)
	f := newFixture(t, env)
	req := create(t, env, f.co.Secret, simple(t, env, f, nil))
	offset.Store(int64(15 * 24 * time.Hour))
	if got := list(t, env, f.co.Secret, "status=pending"); len(got) != 1 || got[0].Status != "expired" {
		t.Fatalf("list %+v", got)
	}
	if got := get(t, env, f.co.Secret, req.ID); got.Status != "expired" {
		t.Errorf("status %s", got.Status)
	}
	if got := list(t, env, f.co.Secret, "status=pending"); len(got) != 0 {
		t.Errorf("still listed as pending: %+v", ids(got))
	}
	for _, action := range []string{"remind", "cancel"} {
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/signature-requests/" + req.ID + "/" + action, Key: f.co.Secret})
		if r.Status != 409 || r.Problem(t).Code != "request_not_pending" {
			t.Errorf("%s expired: %d %s", action, r.Status, r.Body)
		}
	}
	if n := apitest.EventsAbout(t, env, f.co.Secret, "signature_request.expired", req.ID); n != 1 {
		t.Errorf("%d signature_request.expired, want 1", n)
	}
}

// TestSignatures_Idempotent: the same Idempotency-Key replays the first answer: one request,
// one mail. Catches a retried create that sends the customer a second link.
func TestSignatures_Idempotent(t *testing.T) {
	t.Parallel()
	env := setup(t)
	f := newFixture(t, env)
	body := simple(t, env, f, nil)
	key := map[string]string{"Idempotency-Key": uuid.NewString()}
	r1 := env.Do(t, apitest.Request{Method: "POST", Path: "/signature-requests", Key: f.co.Secret, Body: body, Header: key})
	r2 := env.Do(t, apitest.Request{Method: "POST", Path: "/signature-requests", Key: f.co.Secret, Body: body, Header: key})
	if r1.Status != 201 || r2.Status != 201 || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("create twice: %d, %d %v", r1.Status, r2.Status, r2.Header)
	}
	var a, b request
	r1.Decode(t, &a)
	r2.Decode(t, &b)
	if a.ID != b.ID {
		t.Errorf("two requests %s, %s", a.ID, b.ID)
	}
	if n := countRequests(t, env, f.co.ID, signaturerequest.StatusPending); n != 1 {
		t.Errorf("%d requests stored", n)
	}
	env.InCompany(t, f.co.ID, func(ctx context.Context, db *ent.Client) error {
		n, err := db.Email.Query().Where(email.SubjectHasPrefix("Bitte unterschreiben")).Count(ctx)
		if err == nil && n != 1 {
			t.Errorf("%d mails, want 1", n)
		}
		return err
	})
}
