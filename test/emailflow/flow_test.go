// Package emailflow is the acceptance test of issue 21's e-mail part, end to end over real
// protocols: the API sends (POST /emails) through the loopback mail server's SMTP, the customer
// reads the mail over IMAP in their own account and replies over SMTP, and the periodic IMAP
// sync files the reply in the same thread, linked to the contact and on its timeline.
package emailflow

import (
	"context"
	"crypto/tls"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

const (
	broker   = "makler@firma.test"
	customer = "karla.kunde@privat.test"
	password = "geheim-123"
)

type sent struct {
	ID        string `json:"id"`
	ThreadID  string `json:"threadId"`
	MessageID string `json:"messageId"`
	Status    string `json:"status"`
}

type thread struct {
	ID           string   `json:"id"`
	MessageCount int      `json:"messageCount"`
	ContactIDs   []string `json:"contactIds"`
	Messages     []struct {
		ID         string   `json:"id"`
		Direction  string   `json:"direction"`
		MessageID  string   `json:"messageId"`
		InReplyTo  *string  `json:"inReplyTo"`
		Subject    string   `json:"subject"`
		ContactIDs []string `json:"contactIds"`
	} `json:"messages"`
}

// TestEmailFlow_SendReadReplyThread: the acceptance. Catches, end to end: a send that
// does not reach the SMTP server or carries another Message-ID than the API reports; a reply
// that the periodic sync does not pick up by itself;
// a reply filed in a thread of its own (threading by In-Reply-To broken); our own message
// stored a second time when the sync finds it in Sent; the reply not linked to the contact or
// missing from its timeline.
func TestEmailFlow_SendReadReplyThread(t *testing.T) {
	srv := testsvc.MailServer(t, mailserver.Options{TLS: true})
	for _, u := range []string{broker, customer} {
		if err := srv.AddUser(u, password); err != nil {
			t.Fatal(err)
		}
	}
	cfg := mail.Config{TLS: &tls.Config{RootCAs: srv.RootCAs()}, Timeout: 10 * time.Second}
	env := apitest.New(t, app.WithMail(cfg), app.WithConfig(func(c *app.Config) { c.Mail.SyncEvery = time.Second }))
	if err := env.Server.StartJobs(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = env.Server.StopJobs(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	co := env.NewCompany(t, "emails")
	if _, err := env.Ops.GrantPoints(ctx, co.ID, 100, "acceptance test"); err != nil {
		t.Fatal(err)
	}
	box, err := env.Ops.CreateMailbox(ctx, env.Config.DataKeys, operator.NewMailbox{CompanyID: co.ID, Email: broker,
		Label: "Büro", IMAPURL: srv.IMAPURL(), SMTPURL: srv.SMTPURL(), Username: broker, Password: password, Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	contact := apitest.Create[struct {
		ID string `json:"id"`
	}](t, env, co.Secret, "/contacts", map[string]any{"type": "private", "firstName": "Karla", "lastName": "Kunde", "email": customer})

	// 1. The API sends.
	const subject = "Ihre Kfz-Versicherung: Angebot"
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/emails", Key: co.Secret,
		Header: map[string]string{"Idempotency-Key": "flow-1"},
		Body: map[string]any{"mailboxId": box.ID, "to": []map[string]any{{"email": customer, "name": "Karla Kunde"}},
			"subject": subject, "text": "Guten Tag Frau Kunde,\nanbei unser Angebot.\n", "contactId": contact.ID}})
	if r.Status != 201 {
		t.Fatalf("POST /emails: %d %s", r.Status, r.Body)
	}
	var out sent
	r.Decode(t, &out)
	if out.MessageID == "" || (out.Status != "sent" && out.Status != "queued") {
		t.Fatalf("POST /emails answered %+v", out)
	}

	// 2. The SMTP side receives it with our Message-ID.
	envs, err := srv.WaitReceived(ctx, 1)
	if err != nil {
		t.Fatalf("the SMTP server received nothing: %v", err)
	}
	if got := envs[0]; !slices.Contains(got.To, customer) || mail.Parse(got.Data).MessageID != out.MessageID {
		t.Fatalf("SMTP received to %v Message-ID %q, want %s and %q", got.To, mail.Parse(got.Data).MessageID, customer, out.MessageID)
	}

	// 3. The customer reads it over IMAP in their own account …
	c, err := mail.DialIMAP(ctx, cfg, mail.Server{URL: srv.IMAPURL(), Username: customer, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Select("INBOX"); err != nil {
		t.Fatal(err)
	}
	inbox, err := c.FetchAfter(0, 10)
	if err != nil || len(inbox) != 1 {
		t.Fatalf("customer's INBOX: %d messages, %v", len(inbox), err)
	}
	got := mail.Parse(inbox[0].Raw)
	if got.MessageID != out.MessageID || got.Subject != subject || got.From.Email != broker {
		t.Fatalf("customer reads Message-ID %q subject %q from %q", got.MessageID, got.Subject, got.From.Email)
	}

	// … and replies over SMTP.
	reply, err := mail.Compose(mail.Message{From: mail.Address{Email: customer, Name: "Karla Kunde"},
		To: []mail.Address{{Email: broker}}, Subject: "AW: " + subject, Text: "Danke, ich nehme es an.\n",
		InReplyTo: got.MessageID, References: append(got.References, got.MessageID)})
	if err != nil {
		t.Fatal(err)
	}
	err = mail.Send(ctx, cfg, mail.Server{URL: srv.SMTPURL(), Username: customer, Password: password}, customer, []string{broker}, reply)
	if err != nil {
		t.Fatal(err)
	}

	// 4. The periodic sync files the reply in the same thread, linked to the contact.
	var list struct {
		Data []thread `json:"data"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		list.Data = nil
		r := env.Do(t, apitest.Request{Key: co.Secret, Path: "/email-threads?contactId=" + contact.ID})
		if r.Status != 200 {
			t.Fatalf("GET /email-threads: %d %s", r.Status, r.Body)
		}
		r.Decode(t, &list)
		if len(list.Data) == 1 && list.Data[0].MessageCount >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reply did not arrive in the contact's thread: %+v", list.Data)
		}
		time.Sleep(200 * time.Millisecond)
	}
	th := apitest.Get[thread](t, env, co.Secret, "/email-threads/"+list.Data[0].ID)
	if th.ID != out.ThreadID || th.MessageCount != 2 || len(th.Messages) != 2 {
		t.Fatalf("thread %s: %d messages (%d listed), want our thread %s with 2", th.ID, th.MessageCount, len(th.Messages), out.ThreadID)
	}
	// By position: our message first, the reply after it, although the reply's Date header has
	// whole seconds and our sent_at does not (a reply within the same second sorted first
	// before messages were ordered by the second, then by when we stored them).
	first, second := th.Messages[0], th.Messages[1]
	if first.Direction != "outbound" || first.MessageID != out.MessageID {
		t.Errorf("first message: %s %q, want ours", first.Direction, first.MessageID)
	}
	if second.Direction != "inbound" || second.InReplyTo == nil || *second.InReplyTo != out.MessageID ||
		!slices.Contains(second.ContactIDs, contact.ID) {
		t.Errorf("second message: %s in reply to %v, contacts %v; want the customer's reply linked to %s",
			second.Direction, second.InReplyTo, second.ContactIDs, contact.ID)
	}

	// 5. The contact's timeline shows both.
	timeline := apitest.Get[struct {
		Data []struct {
			Type    string  `json:"type"`
			Event   *string `json:"event"`
			Content string  `json:"content"`
		} `json:"data"`
	}](t, env, co.Secret, "/contacts/"+contact.ID+"/activities")
	var seen []string
	for _, a := range timeline.Data {
		if a.Type == "email" && a.Event != nil {
			seen = append(seen, *a.Event+": "+a.Content)
		}
	}
	slices.Sort(seen)
	want := []string{"email.inbound: AW: " + subject, "email.outbound: " + subject}
	if !slices.Equal(seen, want) {
		t.Errorf("timeline e-mails %q, want %q", seen, want)
	}

	// Nothing stored twice once the sync has also read Sent (our message, appended there).
	time.Sleep(2 * time.Second)
	if th := apitest.Get[thread](t, env, co.Secret, "/email-threads/"+out.ThreadID); th.MessageCount != 2 || len(th.Messages) != 2 {
		t.Errorf("after more syncs the thread has %d messages, want 2", len(th.Messages))
	}
}
