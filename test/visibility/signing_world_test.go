package visibility

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

var (
	signLinkRE = regexp.MustCompile(`/sign/[A-Za-z0-9_-]+`)
	signCodeRE = regexp.MustCompile(`Bestätigungscode: (\d{6})`)
	cookieRE   = regexp.MustCompile(`^([^=;]+=[^;]*)`)
)

// signingSteps are the signing area's scenarios of TestVisibility_EventsFollowResources (issue
// 22, docs/decisions/signatures.md): signature requests and advice records are as visible as
// their contact. Agent B's customer gets an advice record (created, updated, its protocol
// rendered), the protocol goes out for signature from the shared mailbox and is signed on the
// signing page as the customer would (signed, completed, the sealed PDF's document.created,
// advice_record.locked); a second request is cancelled, a third expires. B reads every event,
// A none; the delegate of A none either.
func (w *world) signingSteps(t *testing.T, l *eventLedger) []differ {
	t.Helper()
	m := w.mailboxes(t)
	co, b := w.co.Secret, w.agentB.ID.String()
	addr := fmt.Sprintf("sina-%d@kunde.test", mailSeq.Add(1))
	var cS, rec, protocol string
	l.step(t, nil, func() { // advice_record.created, .updated; the protocol's document.created
		cS = idOf(t, w.do(t, co, "POST", "/contacts", map[string]any{"type": "private", "firstName": "Sina", "lastName": "Kunde",
			"email": addr, "ownerId": b}, 201))
		rec = idOf(t, w.do(t, co, "POST", "/advice-records", map[string]any{"contactId": cS, "consultedAt": "2026-05-04T10:00:00+02:00",
			"subject": "Berufsunfähigkeit"}, 201))
		w.do(t, co, "PATCH", "/advice-records/"+rec, map[string]any{"notes": "Angebot folgt"}, 200)
		protocol = idOf(t, w.do(t, co, "POST", "/advice-records/"+rec+"/document", nil, 201))
	})
	// Three requests to one customer: the title tells their mails apart.
	send := func(title string, doc map[string]any) string {
		return idOf(t, w.do(t, co, "POST", "/signature-requests", map[string]any{"contactId": cS, "title": title,
			"documents": []map[string]any{doc}, "mailboxId": m.shared.ID}, 201))
	}
	var signed, cancelled, expired string
	l.step(t, nil, func() { // signature_request.created, .cancelled, .expired
		signed = send("Beratungsprotokoll", map[string]any{"documentId": protocol})
		var std struct{ Data []struct{ ID string } }
		w.do(t, co, "GET", "/standard-documents", nil, 200).Decode(t, &std)
		cancelled = send("Zurückgezogen", map[string]any{"standardDocumentId": std.Data[0].ID})
		expired = send("Abgelaufen", map[string]any{"standardDocumentId": std.Data[0].ID})
		w.do(t, co, "POST", "/signature-requests/"+cancelled+"/cancel", nil, 200)
		w.env.InCompany(t, w.co.ID, func(ctx context.Context, db *ent.Client) error {
			return db.SignatureRequest.UpdateOneID(uuid.MustParse(expired)).SetExpiresAt(time.Now().Add(-time.Minute)).Exec(ctx)
		})
		w.do(t, co, "GET", "/signature-requests/"+expired, nil, 200) // a due request expires when read
	})
	l.step(t, nil, func() { // signature_request.signed, .completed; the sealed PDF; advice_record.locked
		w.signAsCustomer(t, m, addr, signingtest.InvitationSubject+": Beratungsprotokoll")
		var r struct{ Status string }
		w.do(t, co, "GET", "/signature-requests/"+signed, nil, 200).Decode(t, &r)
		if r.Status != "completed" {
			t.Fatalf("the signed request is %s", r.Status)
		}
	})
	return []differ{
		{"advice_record.created", rec, "agent B key", true}, {"advice_record.created", rec, "agent A key", false},
		{"advice_record.locked", rec, "agent B token", true}, {"advice_record.locked", rec, "agent B with delegation", false},
		{"signature_request.created", signed, "agent B key", true}, {"signature_request.created", signed, "agent A key", false},
		{"signature_request.completed", signed, "agent B key", true}, {"signature_request.completed", signed, "agent A token", false},
		{"signature_request.signed", signed, "manager key", true}, {"signature_request.cancelled", cancelled, "agent A key", false},
		{"signature_request.expired", expired, "agent B key", true},
	}
}

// signAsCustomer signs the request whose invitation to addr has subject on the signing page,
// as the customer's browser would: the link from the invitation, a code requested and read
// from the mail, a typed signature.
func (w *world) signAsCustomer(t *testing.T, m *mailWorld, addr, subject string) {
	t.Helper()
	invitation := waitMail(t, m, addr, subject)
	link := signLinkRE.FindString(invitation.Text)
	if link == "" {
		t.Fatalf("no signing link in %q", invitation.Text)
	}
	var cookie string
	page := func(method, path string, form url.Values, want int) string {
		t.Helper()
		h := map[string]string{}
		var body any
		if form != nil {
			h["Content-Type"] = "application/x-www-form-urlencoded"
			body = form.Encode()
		}
		if cookie != "" {
			h["Cookie"] = cookie
		}
		r := w.env.Do(t, apitest.Request{Method: method, Path: "/" + path, Body: body, Header: h})
		if r.Status != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, r.Status, want, r.Body)
		}
		for _, c := range r.Header.Values("Set-Cookie") {
			if s := cookieRE.FindStringSubmatch(c); s != nil {
				cookie = s[1]
			}
		}
		return string(r.Body)
	}
	csrf := signingtest.CSRF(page("GET", link, nil, 200))[link+"/code"]
	page("POST", link+"/code", url.Values{"csrf": {csrf}}, 303)
	code := signCodeRE.FindStringSubmatch(waitMail(t, m, addr, signingtest.CodeSubject).Text)
	if code == nil {
		t.Fatal("no code in the code mail")
	}
	csrf = signingtest.CSRF(page("GET", link+"?step=sign", nil, 200))[link]
	page("POST", link, url.Values{"csrf": {csrf}, "code": {code[1]}, "typedName": {"Sina Kunde"}, "consent": {"yes"}}, 303)
}

// waitMail waits for the first mail to addr whose subject starts with subject.
func waitMail(t *testing.T, m *mailWorld, addr, subject string) *mail.Parsed {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, e := range m.srv.Received() {
			if slices.Contains(e.To, addr) {
				if p := mail.Parse(e.Data); strings.HasPrefix(p.Subject, subject) {
					return p
				}
			}
		}
	}
	t.Fatalf("no mail %q to %s", subject, addr)
	return nil
}
