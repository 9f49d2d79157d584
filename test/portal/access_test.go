package portal

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portalaccess"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/portaltest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

// The invitation: a pending access with the spec's fields, the mail with a link that opens the
// portal's invitation page, naming the brokerage; a re-send voids the earlier link (only the
// newest mail's link opens); each invitation is an event.
func TestPortalAccess_Invite(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co := broker(t, w)
	email := signingtest.Address("Ada")
	ada := contact(t, w, co, "Ada", email)

	before := time.Now()
	a := invite(t, w, co.Secret, ada)
	if a.Status != "pending" || a.ContactID != ada || a.Email != strings.ToLower(email) || a.InvitationsSent != 1 ||
		a.ActivatedAt != nil || a.RevokedAt != nil || a.TwoFactorEnabled || a.InvitationExpiresAt == nil {
		t.Fatalf("invited: %+v", a)
	}
	exp, _ := time.Parse(time.RFC3339Nano, *a.InvitationExpiresAt)
	if d := exp.Sub(before); d < 7*24*time.Hour-time.Minute || d > 7*24*time.Hour+time.Minute {
		t.Errorf("invitation expires in %s, want 7 days", d)
	}
	m := w.WaitMails(t, email, invitationSubject, 1)[0]
	if !strings.Contains(m.Subject, "Makler ") || !strings.Contains(m.Text, "Guten Tag Ada Kunde") {
		t.Errorf("mail does not name the brokerage or the customer: %q\n%s", m.Subject, m.Text)
	}
	first := linkPath(t, w, email, 1)
	if !strings.HasPrefix(first, "/portal/"+co.ID.String()+"/invitation/") {
		t.Fatalf("link %s is not the company's portal", first)
	}
	b := portaltest.NewBrowser(t, w.Base, nil)
	if p := b.Get(t, first); p.Status != 200 {
		t.Fatalf("invitation page: %d\n%s", p.Status, p.Body)
	}
	got := apitest.Get[accessView](t, w.Env, co.Secret, "/contacts/"+ada+"/portal-access")
	if got.ID != a.ID || got.Status != "pending" {
		t.Errorf("GET: %+v", got)
	}

	again := invite(t, w, co.Secret, ada)
	if again.ID != a.ID || again.InvitationsSent != 2 || again.Status != "pending" {
		t.Fatalf("re-sent: %+v", again)
	}
	second := linkPath(t, w, email, 2)
	if second == first {
		t.Fatal("the re-sent invitation has the same link")
	}
	if p := b.Get(t, first); p.Status == 200 {
		t.Errorf("the superseded link still opens the invitation page")
	}
	if p := b.Get(t, second); p.Status != 200 {
		t.Errorf("the new link: %d", p.Status)
	}
	if n := apitest.EventsAbout(t, w.Env, co.Secret, "portal_access.invited", a.ID); n != 2 {
		t.Errorf("%d portal_access.invited events, want 2", n)
	}
}

// The body's e-mail overrides the contact's (lower-cased); without any usable address the
// invitation is 422; an address another contact signs in with is 409; an active access is 409.
func TestPortalAccess_InviteErrors(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co, other := broker(t, w), broker(t, w)
	noMail := contact(t, w, co, "Ohne", "")
	business := apitest.Create[struct {
		ID string `json:"id"`
	}](t, w.Env, co.Secret, "/contacts", map[string]any{"type": "business", "business": map[string]any{"companyName": "Bau GmbH"}}).ID
	cu := activeCustomer(t, w, co, "Berta")
	theirs := contact(t, w, other, "Fremd", signingtest.Address("fremd"))
	noPortal := w.Env.NewCompany(t, "emails") // licenses no portal
	noPortalContact := contact(t, w, noPortal, "X", signingtest.Address("x"))
	noMailbox := w.Env.NewCompany(t, "customer_portal", "emails")
	mailless := contact(t, w, noMailbox, "Y", signingtest.Address("y"))
	override := "Neue.Adresse-" + strings.ToUpper(signingtest.Address("o"))

	path := func(id string) string { return "/contacts/" + id + "/portal-access" }
	w.Env.Run(t, []apitest.Case{
		{Name: "contact without e-mail is 422", Key: co.Secret, Method: "POST", Path: path(noMail), Status: 422,
			Check: apitest.FieldErrors("email:email_required")},
		{Name: "business contact without e-mail is 422", Key: co.Secret, Method: "POST", Path: path(business), Status: 422,
			Check: apitest.FieldErrors("email:email_required")},
		{Name: "invalid body e-mail is 422", Key: co.Secret, Method: "POST", Path: path(noMail),
			Body: map[string]any{"email": "kein-at"}, Status: 422},
		{Name: "unknown body member is 422", Key: co.Secret, Method: "POST", Path: path(noMail),
			Body: map[string]any{"mail": "a@b.de"}, Status: 422},
		{Name: "malformed body is 400", Key: co.Secret, Method: "POST", Path: path(noMail), Body: "{", Status: 400},
		{Name: "body e-mail overrides, lower-cased", Key: co.Secret, Method: "POST", Path: path(noMail),
			Body: map[string]any{"email": override}, Status: 201, Check: func(t *testing.T, r *apitest.Response) {
				var a accessView
				r.Decode(t, &a)
				if a.Email != strings.ToLower(override) {
					t.Errorf("email %q, want %q", a.Email, strings.ToLower(override))
				}
			}},
		{Name: "same address for another contact is 409", Key: co.Secret, Method: "POST", Path: path(business),
			Body: map[string]any{"email": strings.ToLower(override)}, Status: 409, Problem: "email_in_use"},
		{Name: "active access is 409", Key: co.Secret, Method: "POST", Path: path(cu.contact), Status: 409, Problem: "access_active"},
		{Name: "another company's contact is 404", Key: co.Secret, Method: "POST", Path: path(theirs), Status: 404},
		{Name: "unknown contact is 404", Key: co.Secret, Method: "POST", Path: path("0193f3b4-6c1e-7d2a-9f1b-3c5d7e9f1a2b"), Status: 404},
		{Name: "malformed id is 400", Key: co.Secret, Method: "POST", Path: path("nope"), Status: 400},
		{Name: "without portal:write is 403", Key: co.KeyWithScopes(t, "contacts:read", "contacts:write"), Method: "POST",
			Path: path(noMail), Status: 403, Problem: "insufficient_scope"},
		{Name: "no credential is 401", Method: "POST", Path: path(noMail), Status: 401},
		{Name: "unlicensed company is 403", Key: noPortal.Secret, Method: "POST", Path: path(noPortalContact), Status: 403,
			Problem: "feature_not_licensed"},
		{Name: "unlicensed company's read is 403", Key: noPortal.Secret, Path: path(noPortalContact), Status: 403,
			Problem: "feature_not_licensed"},
		{Name: "no mailbox to send from is 409", Key: noMailbox.Secret, Method: "POST", Path: path(mailless), Status: 409,
			Problem: "mailbox_required"},
		{Name: "contact never invited reads 404", Key: co.Secret, Path: path(business), Status: 404},
		{Name: "another company's access reads 404", Key: other.Secret, Path: path(cu.contact), Status: 404},
	})
	// Nothing of a refused invitation stays.
	w.Env.InCompany(t, noMailbox.ID, func(ctx context.Context, db *ent.Client) error {
		if n, err := db.PortalAccess.Query().Count(ctx); err != nil || n != 0 {
			t.Errorf("%d accesses after 409 mailbox_required (%v)", n, err)
		}
		return nil
	})
}

// A replayed POST (same Idempotency-Key) answers the first invitation again and mails nothing.
func TestPortalAccess_InviteIdempotent(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co := broker(t, w)
	email := signingtest.Address("idem")
	id := contact(t, w, co, "Idem", email)
	req := apitest.Request{Method: "POST", Path: "/contacts/" + id + "/portal-access", Key: co.Secret,
		Header: map[string]string{"Idempotency-Key": "invite-" + id}}
	r1, r2 := w.Env.Do(t, req), w.Env.Do(t, req)
	if r1.Status != 201 || r2.Status != 201 || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("first %d, replay %d (replayed %q)", r1.Status, r2.Status, r2.Header.Get("Idempotent-Replayed"))
	}
	if a := apitest.Get[accessView](t, w.Env, co.Secret, "/contacts/"+id+"/portal-access"); a.InvitationsSent != 1 {
		t.Errorf("invitationsSent %d after a replay, want 1", a.InvitationsSent)
	}
	w.WaitMails(t, email, invitationSubject, 1)
	time.Sleep(500 * time.Millisecond)
	if n := len(w.Mails(email, invitationSubject)); n != 1 {
		t.Errorf("%d invitation mails, want 1", n)
	}
}

// DELETE revokes: the signed-in customer's next page is 401, the access reads revoked, a second
// DELETE is 404; inviting again starts over (pending, a new link that opens).
func TestPortalAccess_Revoke(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co, other := broker(t, w), broker(t, w)
	cu := activeCustomer(t, w, co, "Carla")
	if p := cu.b.Get(t, cu.base+"/"); p.Status != 200 {
		t.Fatalf("signed-in overview: %d", p.Status)
	}
	path := "/contacts/" + cu.contact + "/portal-access"
	w.Env.Run(t, []apitest.Case{
		{Name: "another company's credential is 404", Key: other.Secret, Method: "DELETE", Path: path, Status: 404},
		{Name: "without portal:write is 403", Key: co.KeyWithScopes(t, "contacts:write"), Method: "DELETE", Path: path,
			Status: 403},
		{Name: "revokes", Key: co.Secret, Method: "DELETE", Path: path, Status: 204},
		{Name: "a revoked access is 404", Key: co.Secret, Method: "DELETE", Path: path, Status: 404},
		{Name: "never invited is 404", Key: co.Secret, Method: "DELETE",
			Path: "/contacts/" + contact(t, w, co, "Nie", "") + "/portal-access", Status: 404},
	})
	if p := cu.b.Get(t, cu.base+"/"); p.Status != 401 {
		t.Errorf("the revoked customer's next page: %d, want 401", p.Status)
	}
	a := apitest.Get[accessView](t, w.Env, co.Secret, path)
	if a.Status != "revoked" || a.RevokedAt == nil || a.InvitationExpiresAt != nil {
		t.Errorf("after DELETE: %+v", a)
	}
	if n := apitest.EventsAbout(t, w.Env, co.Secret, "portal_access.revoked", a.ID); n != 1 {
		t.Errorf("%d portal_access.revoked events, want 1", n)
	}

	again := invite(t, w, co.Secret, cu.contact)
	if again.Status != "pending" || again.RevokedAt != nil || again.ActivatedAt != nil || again.ID != a.ID {
		t.Fatalf("invited again: %+v", again)
	}
	if p := portaltest.NewBrowser(t, w.Base, nil).Get(t, linkPath(t, w, cu.email, 2)); p.Status != 200 {
		t.Errorf("the new invitation's link: %d", p.Status)
	}
}

// Deleting the contact deletes its access (and its tokens and sessions) by the foreign key's
// cascade, although the app role may not delete accesses itself.
func TestPortalAccess_GoesWithContact(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co := broker(t, w)
	cu := activeCustomer(t, w, co, "Dora")
	etag := w.Env.Do(t, apitest.Request{Path: "/contacts/" + cu.contact, Key: co.Secret}).Header.Get("ETag")
	if r := w.Env.Do(t, apitest.Request{Method: "DELETE", Path: "/contacts/" + cu.contact, Key: co.Secret,
		Header: map[string]string{"If-Match": etag}}); r.Status != 204 {
		t.Fatalf("delete contact: %d %s", r.Status, r.Body)
	}
	w.Env.InCompany(t, co.ID, func(ctx context.Context, db *ent.Client) error {
		n, err := db.PortalAccess.Query().Where(portalaccess.Email(strings.ToLower(cu.email))).Count(ctx)
		if err != nil || n != 0 {
			t.Errorf("%d accesses of the deleted contact (%v)", n, err)
		}
		return nil
	})
	if p := cu.b.Get(t, cu.base+"/"); p.Status != 401 {
		t.Errorf("the deleted contact's session: %d, want 401", p.Status)
	}
}
