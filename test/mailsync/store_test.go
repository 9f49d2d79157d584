package mailsync

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/ent/emailattachment"
	"github.com/brokerdesk/brokerdesk/ent/emaillink"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestSync_AttachmentTypeSniffed: an attachment's content type is what its bytes are, not what
// the sender declared: a PDF sent as "scan.png", image/png, is stored as application/pdf, its
// bytes in the blob store under the row's key. Catches the declared type trusted (a page
// served as an image, or worse, HTML served as what it claims).
func TestSync_AttachmentTypeSniffed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, mailserver.Options{})
	pdf := "%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
	m := msg{From: "kunde@privat.test", To: w.addr, Subject: "Scan", ID: "scan@privat.test",
		Headers: []string{`Content-Type: multipart/mixed; boundary="b1"`},
		Body: "--b1\nContent-Type: text/plain; charset=utf-8\n\nAnbei der Scan.\n" +
			"--b1\nContent-Type: image/png; name=\"scan.png\"\nContent-Disposition: attachment; filename=\"scan.png\"\n\n" +
			pdf + "--b1--\n"}
	w.deliver(t, m.raw())
	w.sync(t)
	e := w.bySubject(t, "Scan")
	var atts []*ent.EmailAttachment
	w.in(t, func(ctx context.Context, db *ent.Client) error {
		var err error
		atts, err = db.EmailAttachment.Query().Where(emailattachment.EmailID(e.ID)).All(ctx)
		return err
	})
	if len(atts) != 1 {
		t.Fatalf("%d attachments, want 1", len(atts))
	}
	a := atts[0]
	if !strings.HasPrefix(a.ContentType, "application/pdf") || a.Filename != "scan.png" || a.ThreadID != e.ThreadID {
		t.Errorf("attachment: type %q name %q thread %s", a.ContentType, a.Filename, a.ThreadID)
	}
	bucket, err := blobstore.Open(context.Background(), w.env.Config.BlobURL)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	got, err := bucket.ReadAll(context.Background(), a.BlobKey)
	if err != nil || strings.TrimRight(string(got), "\r\n") != strings.TrimRight(strings.ReplaceAll(pdf, "\n", "\r\n"), "\r\n") {
		t.Errorf("blob %s: %q, %v", a.BlobKey, got, err)
	}
	if a.SizeBytes != int64(len(got)) || !strings.HasPrefix(a.BlobKey, "email-attachments/"+w.co.ID.String()+"/") {
		t.Errorf("attachment size %d key %q", a.SizeBytes, a.BlobKey)
	}
	raw, err := bucket.ReadAll(context.Background(), e.RawKey)
	if err != nil || !strings.Contains(string(raw), "Message-ID: <scan@privat.test>") {
		t.Errorf("raw message %s: %v", e.RawKey, err)
	}
	r := w.env.Do(t, apitest.Request{Key: w.co.Secret, Path: "/emails/" + e.ID.String() + "/attachments/" + a.ID.String() + "/content"})
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/pdf") ||
		!strings.HasPrefix(string(r.Body), "%PDF-1.4") {
		t.Errorf("GET …/content: %d %q %.20q, want the PDF as application/pdf", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
}

// TestSync_HTMLSanitised: an HTML body is stored sanitised: no script, no event handler, no
// javascript: link, the text kept. Catches an HTML body stored (and so served) as the sender
// wrote it.
func TestSync_HTMLSanitised(t *testing.T) {
	t.Parallel()
	w := newWorld(t, mailserver.Options{})
	m := msg{From: "kunde@privat.test", To: w.addr, Subject: "Bunt", ID: "html@privat.test",
		Headers: []string{"Content-Type: text/html; charset=utf-8"},
		Body:    `<p onclick="steal()">Guten Tag</p><script>alert(document.cookie)</script><a href="javascript:alert(1)">hier</a>`}
	w.deliver(t, m.raw())
	w.sync(t)
	e := w.bySubject(t, "Bunt")
	if e.HTMLBody == nil {
		t.Fatal("no HTML body stored")
	}
	h := strings.ToLower(*e.HTMLBody)
	for _, bad := range []string{"<script", "onclick", "javascript:", "document.cookie"} {
		if strings.Contains(h, bad) {
			t.Errorf("stored HTML contains %q: %s", bad, *e.HTMLBody)
		}
	}
	if !strings.Contains(*e.HTMLBody, "Guten Tag") || !strings.Contains(e.TextBody, "Guten Tag") {
		t.Errorf("HTML %q, text %q: the content is gone", *e.HTMLBody, e.TextBody)
	}
	served := apitest.Get[struct {
		HTML *string `json:"html"`
	}](t, w.env, w.co.Secret, "/emails/"+e.ID.String()+"?body=html")
	if served.HTML == nil || strings.Contains(strings.ToLower(*served.HTML), "<script") || !strings.Contains(*served.HTML, "Guten Tag") {
		t.Errorf("GET /emails/{id}?body=html served %v", served.HTML)
	}
}

type activity struct {
	Type    string  `json:"type"`
	Event   *string `json:"event"`
	Content string  `json:"content"`
}

// TestSync_LinksContactAndLead: a message is linked to the contact whose address sent it and
// the lead whose address is in Cc (not to the mailbox's own address, which a contact also
// carries here), and is on the contact's timeline. Catches links missed for Cc, the mailbox's
// address linking every message, a timeline without the message.
func TestSync_LinksContactAndLead(t *testing.T) {
	t.Parallel()
	w := newWorld(t, mailserver.Options{})
	type ref struct {
		ID string `json:"id"`
	}
	kunde := apitest.Create[ref](t, w.env, w.co.Secret, "/contacts", map[string]any{"type": "private", "firstName": "Karla",
		"lastName": "Kunde", "email": "Karla.Kunde@privat.test"})
	self := apitest.Create[ref](t, w.env, w.co.Secret, "/contacts", map[string]any{"type": "private", "firstName": "Max",
		"lastName": "Makler", "email": w.addr})
	lead := apitest.Create[ref](t, w.env, w.co.Secret, "/leads", map[string]any{"firstName": "Lea", "lastName": "Interessentin",
		"email": "lea@interessent.test"})
	m := msg{From: "Karla Kunde <karla.kunde@privat.test>", To: w.addr, Cc: "lea@INTERESSENT.test, fremd@nirgends.test",
		Subject: "Frage zur Police", ID: "link@privat.test", Body: "Hallo"}
	w.deliver(t, m.raw())
	w.sync(t)
	e := w.bySubject(t, "Frage zur Police")
	var links []*ent.EmailLink
	w.in(t, func(ctx context.Context, db *ent.Client) error {
		var err error
		links, err = db.EmailLink.Query().Where(emaillink.EmailID(e.ID)).All(ctx)
		return err
	})
	var contacts, leads []string
	for _, l := range links {
		if l.ContactID != nil {
			contacts = append(contacts, l.ContactID.String())
		}
		if l.LeadID != nil {
			leads = append(leads, l.LeadID.String())
		}
		if l.ThreadID != e.ThreadID {
			t.Errorf("link in thread %s, message in %s", l.ThreadID, e.ThreadID)
		}
	}
	if len(contacts) != 1 || contacts[0] != kunde.ID || len(leads) != 1 || leads[0] != lead.ID {
		t.Fatalf("links: contacts %v leads %v, want [%s] and [%s] (not the mailbox's own contact %s)", contacts, leads, kunde.ID, lead.ID, self.ID)
	}

	page := apitest.Get[struct{ Data []activity }](t, w.env, w.co.Secret, "/contacts/"+kunde.ID+"/activities")
	found := false
	for _, a := range page.Data {
		found = found || (a.Type == "email" && a.Event != nil && *a.Event == "email.inbound" && a.Content == "Frage zur Police")
	}
	if !found {
		t.Errorf("timeline of the contact: %+v, want the e-mail", page.Data)
	}
	threads := apitest.Get[struct {
		Data []struct {
			ID           string   `json:"id"`
			MessageCount int      `json:"messageCount"`
			LeadIDs      []string `json:"leadIds"`
		} `json:"data"`
	}](t, w.env, w.co.Secret, "/email-threads?contactId="+kunde.ID)
	if len(threads.Data) != 1 || threads.Data[0].ID != e.ThreadID.String() || len(threads.Data[0].LeadIDs) != 1 {
		t.Errorf("GET /email-threads?contactId= %+v, want the message's thread with the lead", threads.Data)
	}
	var ev struct {
		ContactIDs []string `json:"contactIds"`
		LeadIDs    []string `json:"leadIds"`
		Subject    string   `json:"subject"`
		Text       *string  `json:"text"`
	}
	evs := w.events(t, "email.received")
	if len(evs) != 1 {
		t.Fatalf("%d email.received events, want 1", len(evs))
	}
	if err := json.Unmarshal(evs[0].Data, &ev); err != nil {
		t.Fatal(err)
	}
	if len(ev.ContactIDs) != 1 || len(ev.LeadIDs) != 1 || ev.Subject != "Frage zur Police" || ev.Text != nil {
		t.Errorf("email.received data: %+v (want the links and no body)", ev)
	}
}

// ourMail stores an outbound message of ours in the mailbox as the send path does (its row with
// our Message-ID, status sent, no folder yet) and returns it.
func (w *world) ourMail(t *testing.T, messageID, subject string) *ent.Email {
	t.Helper()
	var e *ent.Email
	w.in(t, func(ctx context.Context, db *ent.Client) error {
		th, err := db.EmailThread.Create().SetMailboxID(w.box.ID).SetSubject(subject).SetSubjectKey(strings.ToLower(subject)).
			SetLastMessageAt(time.Now()).SetMessageCount(1).Save(ctx)
		if err != nil {
			return err
		}
		e, err = db.Email.Create().SetID(uuid.Must(uuid.NewV7())).SetThreadID(th.ID).SetMailboxID(w.box.ID).
			SetDirection(email.DirectionOutbound).SetStatus(email.StatusSent).SetMessageID(messageID).
			SetFromAddress(w.addr).SetSubject(subject).SetSentAt(time.Now()).Save(ctx)
		return err
	})
	return e
}

// TestSync_OwnSentMailNotStoredAgain: our own sent mail found in the Sent folder is recognised
// by its Message-ID: not stored a second time, only its folder and UID recorded. Catches every
// API-sent message appearing twice in its thread after the next sync.
func TestSync_OwnSentMailNotStoredAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t, mailserver.Options{})
	ours := w.ourMail(t, "ours-1@firma.test", "Ihr Angebot")
	w.appendSent(t, msg{From: w.addr, To: "kunde@privat.test", Subject: "Ihr Angebot", ID: "ours-1@firma.test", Body: "x"}.raw())
	rep := w.sync(t)
	if rep.Duplicates != 1 || rep.Stored != 0 {
		t.Fatalf("sync = %+v, want our message recognised", rep)
	}
	es := w.emails(t)
	if len(es) != 1 || es[0].ID != ours.ID || es[0].Folder != "Sent" || es[0].ImapUID != 1 {
		t.Errorf("emails after sync: %d, first folder %q uid %d", len(es), es[0].Folder, es[0].ImapUID)
	}
	if got := w.thread(t, ours.ThreadID).MessageCount; got != 1 {
		t.Errorf("thread counts %d messages, want 1", got)
	}
}

// dsn is a delivery status notification about messageID with action.
func (w *world) dsn(id, messageID, action, status, diag string) []byte {
	body := "--r1\nContent-Type: text/plain\n\nBericht.\n" +
		"--r1\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; mx.privat.test\n\n" +
		"Final-Recipient: rfc822; kunde@privat.test\nAction: " + action + "\nStatus: " + status + "\n"
	if diag != "" {
		body += "Diagnostic-Code: smtp; " + diag + "\n"
	}
	body += "\n--r1\nContent-Type: text/rfc822-headers\n\nMessage-ID: <" + messageID + ">\nSubject: Ihr Angebot\n\n--r1--\n"
	return msg{From: "MAILER-DAEMON@mx.privat.test", To: w.addr, Subject: "Delivery Status Notification", ID: id,
		Headers: []string{`Content-Type: multipart/report; report-type=delivery-status; boundary="r1"`}, Body: body}.raw()
}

// TestSync_DeliveryReports: a DSN about one of our messages marks it delivered (delivered_at,
// one email.delivered) or failed (the diagnostic in error, one email.failed); the report is
// filed in that message's thread and records no email.received. A report about a message we
// did not send is ordinary mail. Catches reports ignored, a status moved back, events twice.
func TestSync_DeliveryReports(t *testing.T) {
	t.Parallel()
	w := newWorld(t, mailserver.Options{})
	ok := w.ourMail(t, "ok@firma.test", "Ihr Angebot")
	bad := w.ourMail(t, "bad@firma.test", "Kündigung")
	w.deliver(t, w.dsn("dsn1@mx.privat.test", "ok@firma.test", "delivered", "2.0.0", ""),
		w.dsn("dsn2@mx.privat.test", "bad@firma.test", "failed", "5.1.1", "550 5.1.1 user unknown"),
		w.dsn("dsn3@mx.privat.test", "ok@firma.test", "delivered", "2.0.0", ""), // a second report: no second event
		w.dsn("dsn4@mx.privat.test", "fremd@anderswo.test", "failed", "5.1.1", "550 nope"))
	rep := w.sync(t)
	if rep.Reports != 3 || rep.Stored != 1 {
		t.Fatalf("sync = %+v, want 3 reports about our mail and 1 other message", rep)
	}
	var gotOK, gotBad *ent.Email
	w.in(t, func(ctx context.Context, db *ent.Client) error {
		var err error
		if gotOK, err = db.Email.Get(ctx, ok.ID); err != nil {
			return err
		}
		gotBad, err = db.Email.Get(ctx, bad.ID)
		return err
	})
	if gotOK.Status != email.StatusDelivered || gotOK.DeliveredAt == nil {
		t.Errorf("delivered report: status %s delivered at %v", gotOK.Status, gotOK.DeliveredAt)
	}
	if gotBad.Status != email.StatusFailed || !strings.Contains(gotBad.Error, "user unknown") {
		t.Errorf("failed report: status %s error %q", gotBad.Status, gotBad.Error)
	}
	if n, m := len(w.events(t, "email.delivered")), len(w.events(t, "email.failed")); n != 1 || m != 1 {
		t.Errorf("%d email.delivered and %d email.failed events, want 1 each", n, m)
	}
	if got := len(w.events(t, "email.received")); got != 1 {
		t.Errorf("%d email.received events, want 1 (the report about a stranger's mail)", got)
	}
	for _, e := range w.emails(t) {
		if e.MessageID == "dsn2@mx.privat.test" && e.ThreadID != bad.ThreadID {
			t.Error("the report is not in its message's thread")
		}
	}
}
