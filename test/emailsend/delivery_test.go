package emailsend

import (
	"bytes"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestDelivery_TemporaryFailure: a 451 is retried (with river's backoff) until the server takes
// the message. Catches a temporary refusal treated as final (the customer never gets the mail)
// and a retry that is never made.
func TestDelivery_TemporaryFailure(t *testing.T) {
	t.Parallel()
	env, _ := setup(t)
	srv := plainServer(t)
	s := newSender(t, env, srv, 5)
	srv.FailNext(451, "4.7.1 greylisted, try again later")
	e := s.send(t, env, s.body("kunde@kunde.test", nil))
	row := waitStatus(t, env, s.co.ID, e.ID, "sent")
	if row.Error != "" {
		t.Errorf("error %q on a sent e-mail", row.Error)
	}
	n := 0
	for _, r := range srv.Received() {
		if mail.Parse(r.Data).MessageID == e.MessageID {
			n++
		}
	}
	if n != 1 {
		t.Errorf("received %d times, want once", n)
	}
	if b := s.balance(t, env); b != 4 {
		t.Errorf("balance %d, want 4", b)
	}
}

// TestDelivery_PermanentFailure: a 550 fails the e-mail with the server's answer, refunds its
// points and records email.failed, without retrying. Catches a refused message left queued
// (or retried for hours), an error without the server's words, and points kept for a mail that
// never went out.
func TestDelivery_PermanentFailure(t *testing.T) {
	t.Parallel()
	env, _ := setup(t)
	srv := plainServer(t)
	s := newSender(t, env, srv, 5)
	srv.FailNext(550, "5.1.1 mailbox unavailable")
	e := s.send(t, env, s.body("niemand@kunde.test", map[string]any{"cc": []map[string]any{{"email": "auch@kunde.test"}}}))
	if b := s.balance(t, env); b != 3 {
		t.Errorf("balance %d after the send, want 3", b)
	}
	row := waitStatus(t, env, s.co.ID, e.ID, "failed")
	if !strings.Contains(row.Error, "550") || !strings.Contains(row.Error, "mailbox unavailable") {
		t.Errorf("error %q, want the server's answer", row.Error)
	}
	if b := s.balance(t, env); b != 5 {
		t.Errorf("balance %d after the failure, want 5 (refunded)", b)
	}
	failed := eventsAbout(t, env, s.co.Secret, "email.failed", e.ID)
	if len(failed) != 1 || failed[0].Status != "failed" || failed[0].Error == nil {
		t.Errorf("email.failed events %+v", failed)
	}
	if sent := eventsAbout(t, env, s.co.Secret, "email.sent", e.ID); len(sent) != 0 {
		t.Errorf("email.sent recorded for a failed send")
	}
}

// TestDelivery_WrongPassword: a mailbox whose password the server refuses fails the e-mail at
// once (no retry storm against the server). Catches a refused login retried ten times.
func TestDelivery_WrongPassword(t *testing.T) {
	t.Parallel()
	env, _ := setup(t)
	srv := plainServer(t)
	s := newSender(t, env, srv, 5)
	if err := srv.SetPassword(s.address, "changed"); err != nil {
		t.Fatal(err)
	}
	e := s.send(t, env, s.body("kunde@kunde.test", nil))
	row := waitStatus(t, env, s.co.ID, e.ID, "failed")
	if !strings.Contains(row.Error, "login") {
		t.Errorf("error %q, want the refused login", row.Error)
	}
	if b := s.balance(t, env); b != 5 {
		t.Errorf("balance %d, want 5 (refunded)", b)
	}
}

// TestDelivery_Attachments: documents arrive as MIME parts with their name and bytes, and the
// e-mail lists them. Catches attachments dropped, renamed or corrupted on the way.
func TestDelivery_Attachments(t *testing.T) {
	t.Parallel()
	env, srv := setup(t)
	s := newSender(t, env, nil, 5)
	contact := newContact(t, env, s.co.Secret, "kunde@kunde.test")
	doc := apitest.UploadPDF(t, env, s.co.Secret, contact, "Police Kfz.pdf")
	e := s.send(t, env, s.body("kunde@kunde.test", map[string]any{"attachmentDocumentIds": []string{doc}}))
	if len(e.Attachments) != 1 || e.Attachments[0].Filename != "Police Kfz.pdf" || e.Attachments[0].ContentType != "application/pdf" {
		t.Errorf("attachments %+v", e.Attachments)
	}
	p := mail.Parse(received(t, srv, e.MessageID).Data)
	if len(p.Attachments) != 1 || p.Attachments[0].Filename != "Police Kfz.pdf" || !bytes.Equal(p.Attachments[0].Data, apitest.PDF) {
		t.Fatalf("received attachments %+v", p.Attachments)
	}
	if !strings.Contains(p.Text, "anbei Ihr Angebot") {
		t.Errorf("text %q beside the attachment", p.Text)
	}
}

// TestDelivery_OptOutBeforeRetry: a marketing mail whose recipient opts out while its send is
// being retried is not sent (failed, refunded). Catches the opt-out list checked only when the
// mail was queued, hours before a retry delivers it.
func TestDelivery_OptOutBeforeRetry(t *testing.T) {
	t.Parallel()
	env, _ := setup(t)
	srv := plainServer(t)
	s := newSender(t, env, srv, 5)
	// Greylisted until the opt-out is stored: however slow the machine, no attempt before it
	// can deliver (a single FailNext raced the one-second retry on a loaded machine).
	srv.FailUntilHealed(451, "4.7.1 greylisted, try again later")
	e := s.send(t, env, s.body("leser@kunde.test", map[string]any{"marketing": true}))
	if r := env.Do(t, apitest.Request{Method: "POST", Path: "/email-opt-outs", Key: s.co.Secret,
		Body: map[string]any{"email": "leser@kunde.test"}}); r.Status != 201 {
		t.Fatalf("opt-out: %d %s", r.Status, r.Body)
	}
	srv.Heal()
	row := waitStatus(t, env, s.co.ID, e.ID, "failed")
	if !strings.Contains(row.Error, "opted out") {
		t.Errorf("error %q", row.Error)
	}
	for _, r := range srv.Received() {
		if mail.Parse(r.Data).MessageID == e.MessageID {
			t.Error("the mail was delivered after the opt-out")
		}
	}
	if b := s.balance(t, env); b != 5 {
		t.Errorf("balance %d, want 5 (refunded)", b)
	}
}
