package correspondence

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/emails"
	appevents "github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contactactivity"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

// syncModule is an e-mail module on the package database as the server builds it, whose
// SyncMailbox the test calls: one whole IMAP sync now instead of waiting for the period.
func syncModule(t *testing.T, env *apitest.Env) *emails.Module {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, env.Config.JobsDatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	bucket, err := blobstore.Open(ctx, env.Config.BlobURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bucket.Close(); pool.Close() })
	db := ent.NewClient(ent.Driver(tenancy.NewDriver(stdlib.OpenDBFromPool(pool))))
	return emails.New(emails.Deps{Pool: pool, DB: db, Bucket: bucket, Events: appevents.NewService(),
		Keys: env.Config.DataKeys, Mail: mail.Config{Timeout: 10 * time.Second}, Now: time.Now, Log: zerolog.Nop()})
}

// TestCorrespondence_Send: a draft goes out from a company mailbox to the insurer's routed
// address over a real SMTP server, the case records the e-mail and its thread, the contact's
// timeline shows it, and the insurer's reply, synced over IMAP, lands in the same thread. The
// company licenses no feature beyond leads: correspondence needs none, and sends cost no
// points. Catches a case marked sent without a message, a mail to the wrong address or
// without the letter, a message not linked to the contact, a reply that opens a new thread,
// and points taken for correspondence.
func TestCorrespondence_Send(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	if err := env.Server.StartJobs(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = env.Server.StopJobs(ctx)
	})
	srv := testsvc.MailServer(t, mailserver.Options{})
	f := newFixture(t, env)
	box := fmt.Sprintf("makler-%s@broker.test", f.alpha.VUNumber)
	if err := srv.AddUser(box, "postfach-1"); err != nil {
		t.Fatal(err)
	}
	mb, err := env.Ops.CreateMailbox(context.Background(), env.Config.DataKeys, operator.NewMailbox{CompanyID: f.co.ID,
		Email: box, Label: "Büro", IMAPURL: srv.IMAPURL(), SMTPURL: srv.SMTPURL(), Username: box, Password: "postfach-1", Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	doc := apitest.UploadPDF(t, env, f.co.Secret, f.contact, "vollmacht.pdf")
	c := createCases(t, env, f.co.Secret, f.addressChange(f.hr1))[0]

	r := env.Do(t, apitest.Request{Method: "POST", Path: "/correspondence-cases/" + c.ID + "/send", Key: f.co.Secret,
		Body: map[string]any{"mailboxId": mb.ID, "attachmentDocumentIds": []string{doc}}})
	if r.Status != 200 {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	var sent ccase
	r.Decode(t, &sent)
	if sent.Status != "sent" || sent.EmailID == nil || sent.ThreadID == nil || sent.MailboxID == nil || *sent.MailboxID != mb.ID.String() ||
		sent.SentAt == nil || len(sent.AttachmentDocumentIDs) != 1 || *sent.RecipientEmail != f.alphaMail || r.Header.Get("ETag") != `"2"` {
		t.Fatalf("sent case %+v (ETag %s)", sent, r.Header.Get("ETag"))
	}
	if n := eventsAbout(t, env, f.co.Secret, "correspondence_case.sent", c.ID); n != 1 {
		t.Errorf("%d correspondence_case.sent, want 1", n)
	}

	// The SMTP server receives the letter, addressed to the insurer, with the attachment.
	var msg *ent.Email
	deadline := time.Now().Add(30 * time.Second)
	for {
		env.InCompany(t, f.co.ID, func(ctx context.Context, db *ent.Client) error {
			msg, err = db.Email.Get(ctx, uuid.MustParse(*sent.EmailID))
			return err
		})
		if msg.Status == email.StatusSent || msg.Status == email.StatusFailed || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if msg.Status != email.StatusSent || msg.Points != 0 {
		t.Fatalf("e-mail status %s (error %q), points %d", msg.Status, msg.Error, msg.Points)
	}
	var got *mail.Parsed
	for _, e := range srv.Received() {
		if p := mail.Parse(e.Data); p.MessageID == msg.MessageID {
			got = p
			if len(e.To) != 1 || e.To[0] != f.alphaMail {
				t.Errorf("envelope to %v, want %s", e.To, f.alphaMail)
			}
		}
	}
	if got == nil {
		t.Fatalf("the SMTP server did not receive %s", msg.MessageID)
	}
	if got.Subject != c.Subject || !strings.Contains(got.Text, "HR-"+f.alpha.VUNumber+"-1") || !strings.Contains(got.Text, "Neue Straße 5") ||
		len(got.Attachments) != 1 {
		t.Errorf("received subject %q, %d attachments, text:\n%s", got.Subject, len(got.Attachments), got.Text)
	}
	// The contact's timeline shows the e-mail.
	env.InCompany(t, f.co.ID, func(ctx context.Context, db *ent.Client) error {
		n, err := db.ContactActivity.Query().Where(contactactivity.ContactID(uuid.MustParse(f.contact)),
			contactactivity.KindEQ(contactactivity.KindEmail)).Count(ctx)
		if err == nil && n != 1 {
			t.Errorf("%d e-mail activities on the contact's timeline, want 1", n)
		}
		return err
	})

	// The insurer answers the letter; the reply, synced over IMAP, lands in the case's thread.
	replyID := "antwort-" + uuid.NewString() + "@alpha.example"
	raw := "From: Alpha Vertragsservice <" + f.alphaMail + ">\r\nTo: " + box + "\r\nSubject: AW: " + c.Subject +
		"\r\nMessage-ID: <" + replyID + ">\r\nIn-Reply-To: <" + msg.MessageID + ">\r\nReferences: <" + msg.MessageID +
		">\r\nDate: " + time.Now().Format(time.RFC1123Z) + "\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" +
		"Sehr geehrte Damen und Herren,\r\n\r\ndie Anschrift ist geändert.\r\n"
	if err := srv.Deliver(box, []byte(raw)); err != nil {
		t.Fatal(err)
	}
	mod := syncModule(t, env)
	var reply *ent.Email
	for deadline := time.Now().Add(30 * time.Second); reply == nil; {
		if _, err := mod.SyncMailbox(context.Background(), f.co.ID, mb.ID, emails.SyncOptions{}); err != nil {
			t.Fatalf("sync: %v", err)
		}
		env.InCompany(t, f.co.ID, func(ctx context.Context, db *ent.Client) error {
			reply, err = db.Email.Query().Where(email.MessageID(replyID)).Only(ctx)
			if ent.IsNotFound(err) {
				return nil
			}
			return err
		})
		if reply == nil && time.Now().After(deadline) {
			t.Fatal("the reply was never synced")
		}
	}
	if reply.ThreadID.String() != *sent.ThreadID || reply.Direction != email.DirectionInbound {
		t.Errorf("reply in thread %s (%s), want the case's thread %s", reply.ThreadID, reply.Direction, *sent.ThreadID)
	}
	if got := get(t, env, f.co.Secret, c.ID); got.Status != "sent" || *got.ThreadID != *sent.ThreadID {
		t.Errorf("case after the reply %+v", got)
	}
}
