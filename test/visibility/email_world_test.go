package visibility

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-message"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/ent/mailbox"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

// mailWorld is the world's mail (issue 21): a loopback mail server of its own (SMTP and IMAP,
// app/platform/mailserver), points to send with, a shared mailbox and the personal mailboxes
// of agents A and B on that server.
type mailWorld struct {
	srv                          *mailserver.Server
	shared, personalA, personalB operator.Mailbox
}

const mailPassword = "postfach-geheim-1"

var mailSeq atomic.Int64

// mailboxes gives the world its mail on first use. The mail server lives as long as t: call
// it from the test, not from a subtest that ends before the mail is sent.
func (w *world) mailboxes(t *testing.T) *mailWorld {
	t.Helper()
	if w.mail != nil {
		return w.mail
	}
	ctx := context.Background()
	m := &mailWorld{srv: testsvc.MailServer(t, mailserver.Options{})}
	n := mailSeq.Add(1)
	box := func(local, label string, owner *uuid.UUID) operator.Mailbox {
		addr := fmt.Sprintf("%s-%d@makler.test", local, n)
		if err := m.srv.AddUser(addr, mailPassword); err != nil {
			t.Fatalf("mail account %s: %v", addr, err)
		}
		mb, err := w.env.Ops.CreateMailbox(ctx, w.env.Config.DataKeys, operator.NewMailbox{CompanyID: w.co.ID, Email: addr,
			Label: label, IMAPURL: m.srv.IMAPURL(), SMTPURL: m.srv.SMTPURL(), Username: addr, Password: mailPassword,
			OwnerID: owner, Shared: owner == nil})
		if err != nil {
			t.Fatalf("create mailbox %s: %v", addr, err)
		}
		return mb
	}
	m.shared = box("team", "Team", nil)
	m.personalA = box("anna", "Anna Agentin", &w.agentA.ID)
	m.personalB = box("bernd", "Bernd Agent", &w.agentB.ID)
	if _, err := w.env.Ops.GrantPoints(ctx, w.co.ID, 1000, "visibility tests"); err != nil {
		t.Fatalf("grant points: %v", err)
	}
	w.mail = m
	return m
}

// sendMail POSTs an EmailSend as key from mailbox to one address (extra fields added) and
// returns the new e-mail's id and Message-ID.
func (w *world) sendMail(t *testing.T, key string, from operator.Mailbox, to, subject string, extra map[string]any) (id, messageID string) {
	t.Helper()
	body := map[string]any{"mailboxId": from.ID, "to": []map[string]any{{"email": to}}, "subject": subject,
		"text": "Guten Tag,\nanbei die Unterlagen.\n"}
	for k, v := range extra {
		body[k] = v
	}
	var e struct{ ID, MessageID string }
	w.do(t, key, "POST", "/emails", body, 201).Decode(t, &e)
	return e.ID, e.MessageID
}

// waitEmail waits until the world company's e-mail id satisfies ok (read below the API,
// company-wide) and returns it.
func (w *world) waitEmail(t *testing.T, id, what string, ok func(*ent.Email) bool) *ent.Email {
	t.Helper()
	var e *ent.Email
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		w.env.InCompany(t, w.co.ID, func(ctx context.Context, db *ent.Client) error {
			var err error
			e, err = db.Email.Get(ctx, uuid.MustParse(id))
			return err
		})
		if ok(e) {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("e-mail %s is not %s: status %s, error %q", id, what, e.Status, e.Error)
		}
	}
}

// waitStatus waits until the e-mail id has status.
func (w *world) waitStatus(t *testing.T, id string, status email.Status) {
	t.Helper()
	w.waitEmail(t, id, string(status), func(e *ent.Email) bool { return e.Status == status })
}

// waitSynced waits until the sync stored the message with Message-ID messageID in mb and
// returns its id.
func (w *world) waitSynced(t *testing.T, mb operator.Mailbox, messageID string) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var id uuid.UUID
		w.env.InCompany(t, w.co.ID, func(ctx context.Context, db *ent.Client) error {
			ids, err := db.Email.Query().Where(email.MailboxID(mb.ID), email.MessageID(messageID)).IDs(ctx)
			if len(ids) == 1 {
				id = ids[0]
			}
			return err
		})
		if id != uuid.Nil {
			return id.String()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sync did not store %s in %s", messageID, mb.Email)
		}
	}
}

// waitPaused waits until mb's sync is paused.
func (w *world) waitPaused(t *testing.T, mb operator.Mailbox) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var state mailbox.SyncState
		w.env.InCompany(t, w.co.ID, func(ctx context.Context, db *ent.Client) error {
			m, err := db.Mailbox.Get(ctx, mb.ID)
			if err == nil {
				state = m.SyncState
			}
			return err
		})
		if state == mailbox.SyncStatePaused {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailbox %s: sync state %s, want paused", mb.Email, state)
		}
	}
}

// rawMail is a plain message in RFC 5322 form (CRLF), with more header lines and a body.
func rawMail(from, to, subject, messageID string, headers []string, body string) []byte {
	var b strings.Builder
	for _, h := range append([]string{"From: " + from, "To: " + to, "Subject: " + subject, "Message-ID: <" + messageID + ">",
		"Date: " + time.Now().Format(time.RFC1123Z), "MIME-Version: 1.0"}, headers...) {
		b.WriteString(h + "\r\n")
	}
	if len(headers) == 0 {
		b.WriteString("Content-Type: text/plain; charset=utf-8\r\n")
	}
	b.WriteString("\r\n" + strings.ReplaceAll(body, "\n", "\r\n"))
	return []byte(b.String())
}

// deliveryReport is a delivery status notification (RFC 3464) to mailbox to saying the
// message with Message-ID about was delivered.
func deliveryReport(to, about string) []byte {
	body := "--r1\nContent-Type: text/plain\n\nIhre Nachricht wurde zugestellt.\n" +
		"--r1\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; mx.kunde.test\n\n" +
		"Final-Recipient: rfc822; mia@kunde.test\nAction: delivered\nStatus: 2.0.0\n\n" +
		"--r1\nContent-Type: text/rfc822-headers\n\nMessage-ID: <" + about + ">\nSubject: Ihr Angebot\n\n--r1--\n"
	return rawMail("MAILER-DAEMON@mx.kunde.test", to, "Delivery Status Notification", "dsn-"+uuid.NewString()+"@mx.kunde.test",
		[]string{`Content-Type: multipart/report; report-type=delivery-status; boundary="r1"`}, body)
}

// receivedHTML waits until the mail server received the message with messageID and returns
// its decoded text/html part.
func receivedHTML(t *testing.T, srv *mailserver.Server, messageID string) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		for _, env := range srv.Received() {
			if mail.Parse(env.Data).MessageID != messageID {
				continue
			}
			m, err := message.Read(bytes.NewReader(env.Data))
			if err != nil {
				t.Fatal(err)
			}
			var out string
			err = m.Walk(func(_ []int, e *message.Entity, err error) error {
				if err != nil {
					return err
				}
				if mt, _, _ := e.Header.ContentType(); mt == "text/html" {
					b, err := io.ReadAll(e.Body)
					out = string(b)
					return err
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mail server never received %s", messageID)
		}
	}
}

// publicPath is the path of the first link in html whose path starts with prefix, as the
// test client asks for it at the server's root ("//" + path).
func publicPath(t *testing.T, html, prefix string) string {
	t.Helper()
	i := strings.Index(html, prefix)
	if i < 0 {
		t.Fatalf("no link %s… in %s", prefix, html)
	}
	end := strings.IndexAny(html[i:], "\"'> \r\n")
	if end < 0 {
		end = len(html) - i
	}
	return "/" + html[i:i+end]
}

// correspondenceCase creates, as key, a draft address change to insurer 5501 about a new
// contract of contact and returns its id.
func (w *world) correspondenceCase(t *testing.T, key, contact string) string {
	t.Helper()
	ct := w.createContract(t, key, contact, "K-"+uuid.NewString()[:8])
	var res struct{ Data []struct{ ID string } }
	w.do(t, key, "POST", "/correspondence-cases", map[string]any{"contactId": contact, "contractIds": []string{ct.ID},
		"transactionType": "address_change", "formData": map[string]any{"street": "Neue Straße 5", "zipCode": "20095",
			"city": "Hamburg", "validFrom": "2026-12-01"}}, 201).Decode(t, &res)
	if len(res.Data) != 1 {
		t.Fatalf("one contract of one insurer made %d cases", len(res.Data))
	}
	return res.Data[0].ID
}

// differ is a credential that must (or must not) read an event's resource: the scenarios put
// events where the rules differ, so the test cannot pass vacuously.
type differ = struct {
	typ, id, cred string
	sees          bool
}

// emailSteps are the e-mail area's scenarios of TestVisibility_EventsFollowResources (issue
// 21, docs/decisions/email.md "Visibility"): a shared mailbox is everyone's, a personal one
// its owner's and the owner's delegates'; a message is read through its mailbox or through a
// visible contact it is linked to; correspondence cases go with their contact; the opt-out
// list is the company's. Mia is agent B's customer with an address, so mail to and from her
// is linked to her. They return where the rules differ.
func (w *world) emailSteps(t *testing.T, l *eventLedger) []differ {
	t.Helper()
	m := w.mailboxes(t)
	co, keyA := w.co.Secret, w.keys["agent A key"]
	mia := fmt.Sprintf("mia-%d@kunde.test", mailSeq.Add(1))
	var cMia, toMia, toNobody, shared, failed, fromMia, fromNobody, tracked string
	l.step(t, nil, func() { // B's customer Mia, with an address the mail is linked by
		cMia = idOf(t, w.do(t, co, "POST", "/contacts", map[string]any{"type": "private", "firstName": "Mia", "lastName": "Kunde",
			"email": mia, "ownerId": w.agentB.ID}, 201))
	})
	var miaMessageID string
	l.step(t, nil, func() { // email.sent: from A's personal mailbox to Mia, about nobody; from the shared one
		toMia, miaMessageID = w.sendMail(t, co, m.personalA, mia, "Ihr Angebot", map[string]any{"contactId": cMia})
		toNobody, _ = w.sendMail(t, keyA, m.personalA, "bestellung@buero.test", "Bestellung Toner", nil)
		shared, _ = w.sendMail(t, co, m.shared, "info@partner.test", "Kooperation", nil)
		for _, id := range []string{toMia, toNobody, shared} {
			w.waitStatus(t, id, email.StatusSent)
		}
	})
	l.step(t, nil, func() { // email.failed: the server refuses the next message for good
		m.srv.FailNext(550, "5.1.1 mailbox unavailable")
		failed, _ = w.sendMail(t, keyA, m.personalA, "niemand@buero.test", "Rückfrage", nil)
		w.waitStatus(t, failed, email.StatusFailed)
	})
	l.step(t, nil, func() { // email.received (Mia's, and one about nobody, in A's mailbox; one in the shared one), email.delivered
		idMia, idNobody, idShared := "frage-"+uuid.NewString()+"@kunde.test", "werbung-"+uuid.NewString()+"@spam.test",
			"anfrage-"+uuid.NewString()+"@partner.test"
		for _, d := range []struct {
			box operator.Mailbox
			raw []byte
		}{
			{m.personalA, rawMail("Mia Kunde <"+mia+">", m.personalA.Email, "Frage zum Vertrag", idMia, nil, "Hallo,\nbitte um Rückruf.\n")},
			{m.personalA, rawMail("Werbung <news@spam.test>", m.personalA.Email, "Sonderangebot Toner", idNobody, nil, "Kaufen!\n")},
			{m.shared, rawMail("Partner <info@partner.test>", m.shared.Email, "Re: Kooperation", idShared, nil, "Gern.\n")},
			{m.personalA, deliveryReport(m.personalA.Email, miaMessageID)},
		} {
			if err := m.srv.Deliver(d.box.Email, d.raw); err != nil {
				t.Fatal(err)
			}
		}
		fromMia, fromNobody = w.waitSynced(t, m.personalA, idMia), w.waitSynced(t, m.personalA, idNobody)
		w.waitSynced(t, m.shared, idShared)
		w.waitEmail(t, toMia, "delivered", func(e *ent.Email) bool { return e.DeliveredAt != nil })
	})
	l.step(t, nil, func() { // a tracked marketing mail to Mia: email.sent, email.opened, email.clicked
		var messageID string
		tracked, messageID = w.sendMail(t, co, m.personalA, mia, "Unser Herbstangebot", map[string]any{"contactId": cMia,
			"marketing": true, "html": `<html><body><p>Hier Ihr <a href="https://beispiel.de/angebot">Angebot</a>.</p></body></html>`})
		w.waitStatus(t, tracked, email.StatusSent)
		html := receivedHTML(t, m.srv, messageID)
		if r := w.env.Do(t, apitest.Request{Path: publicPath(t, html, "/t/o/")}); r.Status != 200 {
			t.Fatalf("open pixel: %d %s", r.Status, r.Body)
		}
		if r := w.env.Do(t, apitest.Request{Path: publicPath(t, html, "/t/c/")}); r.Status != 302 {
			t.Fatalf("tracked link: %d %s", r.Status, r.Body)
		}
		w.waitEmail(t, tracked, "clicked", func(e *ent.Email) bool { return e.OpenedAt != nil && e.ClickedAt != nil })
	})
	l.step(t, nil, func() { // mailbox.sync_paused: B's password changed on the server
		if err := m.srv.SetPassword(m.personalB.Email, "neues-passwort"); err != nil {
			t.Fatal(err)
		}
		w.waitPaused(t, m.personalB)
	})
	optOut := fmt.Sprintf("abmeldung-%d@kunde.test", mailSeq.Add(1))
	var optOutID string
	l.step(t, nil, func() { // email_opt_out.created
		optOutID = idOf(t, w.do(t, co, "POST", "/email-opt-outs", map[string]any{"email": optOut, "reason": "per Telefon"}, 201))
	})
	l.step(t, []made{{path: "/email-opt-outs?email=" + url.QueryEscape(optOut), has: optOutID}}, func() { // email_opt_out.deleted
		w.do(t, co, "DELETE", "/email-opt-outs/"+url.PathEscape(optOut)+"?consentReference="+url.QueryEscape("Einwilligung 2026-05-04"), nil, 204)
	})
	var case1, case2 string
	l.step(t, nil, func() { // correspondence_case.created, .updated: about Mia's contracts
		case1, case2 = w.correspondenceCase(t, co, cMia), w.correspondenceCase(t, co, cMia)
		w.do(t, co, "PATCH", "/correspondence-cases/"+case1, map[string]any{"subject": "Adressänderung Mia Kunde"}, 200)
	})
	var letter string
	l.step(t, []made{{path: "/correspondence-cases/" + case2}}, func() { // .deleted; .sent from A's mailbox (email.sent)
		w.do(t, co, "DELETE", "/correspondence-cases/"+case2, nil, 204)
		var sent struct{ EmailID string }
		w.do(t, co, "POST", "/correspondence-cases/"+case1+"/send", map[string]any{"mailboxId": m.personalA.ID,
			"recipientEmail": "vertrag@versicherer.test"}, 200).Decode(t, &sent)
		letter = sent.EmailID
		w.waitStatus(t, letter, email.StatusSent)
	})
	// What an event about a message concerns comes from its whole thread (emails.eventView): a
	// reply from an unknown address reaches B through the thread's link to Mia; a message linked
	// only to A's lead reaches A; a message to two customers reaches both owners.
	var reply, leadMail, both string
	l.step(t, nil, func() {
		idReply := "re-" + uuid.NewString() + "@privat.test"
		if err := m.srv.Deliver(m.personalA.Email, rawMail("Max Kunde <max@privat.test>", m.personalA.Email, "Re: Ihr Angebot", idReply,
			[]string{"In-Reply-To: <" + miaMessageID + ">", "Content-Type: text/plain; charset=utf-8"}, "Antwort vom Ehemann.\n")); err != nil {
			t.Fatal(err)
		}
		reply = w.waitSynced(t, m.personalA, idReply)
		leadA := w.createLead(t, co, map[string]any{"lastName": "Leadkunde", "email": "leadkunde@example.com", "ownerId": w.agentA.ID}).ID
		// from B's mailbox, paused above: the send fails (email.failed)
		leadMail, _ = w.sendMail(t, co, m.personalB, "leadkunde@example.com", "Zum Lead B", map[string]any{"leadId": leadA})
		w.waitEmail(t, leadMail, "done", func(e *ent.Email) bool { return e.Status != email.StatusQueued })
		idOf(t, w.do(t, co, "POST", "/contacts", map[string]any{"type": "private", "firstName": "Emil", "lastName": "Kunde",
			"email": "emil@kunde.test", "ownerId": w.agentE.ID}, 201))
		var sent struct{ ID string }
		w.do(t, co, "POST", "/emails", map[string]any{"mailboxId": m.personalA.ID, "to": []map[string]any{{"email": mia}, {"email": "emil@kunde.test"}},
			"subject": "An beide", "text": "Hallo"}, 201).Decode(t, &sent)
		both = sent.ID
		w.waitStatus(t, both, email.StatusSent)
	})
	return []differ{
		{"email.received", reply, "agent B key", true}, {"email.received", reply, "agent A key", true},
		{"email.failed", leadMail, "agent A key", true}, {"email.failed", leadMail, "agent B with delegation", true},
		{"email.sent", both, "agent B key", true}, {"email.sent", both, "agent B after expiry", true},
		// Through A's mailbox (A and its delegate) and through the link to B's customer (B).
		{"email.sent", toMia, "agent A key", true}, {"email.sent", toMia, "agent B key", true},
		{"email.sent", toMia, "agent B with delegation", true}, {"email.sent", toMia, "agent B after expiry", false},
		{"email.received", fromMia, "agent B token", true}, {"email.delivered", toMia, "agent B key", true},
		{"email.opened", tracked, "agent B key", true}, {"email.clicked", tracked, "agent A token", true},
		{"email.sent", letter, "agent B key", true}, {"email.sent", letter, "agent A key", true},
		// A's mailbox, about nobody: its owner and the delegate, never B.
		{"email.sent", toNobody, "agent A key", true}, {"email.sent", toNobody, "agent B key", false},
		{"email.sent", toNobody, "agent B with delegation", true}, {"email.failed", failed, "agent B key", false},
		{"email.received", fromNobody, "agent A token", true}, {"email.received", fromNobody, "agent B key", false},
		// The shared mailbox is everyone's.
		{"email.sent", shared, "agent B after expiry", true},
		{"mailbox.sync_paused", m.personalB.ID.String(), "agent B key", true},
		{"mailbox.sync_paused", m.personalB.ID.String(), "agent A key", false},
		{"correspondence_case.created", case1, "agent A key", false}, {"correspondence_case.sent", case1, "agent B key", true},
		{"correspondence_case.deleted", case2, "agent A key", false}, {"correspondence_case.deleted", case2, "agent B key", true},
		{"email_opt_out.deleted", optOutID, "agent A key", true},
	}
}
