package emails

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/documents"
	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestEmails_BlobSweep: the blob sweep (app/documents) looks after the e-mail area's blobs as
// well: a raw message or attachment that no row names (a sync batch or a send that wrote its
// blob and then rolled back, a mailbox deleted with its messages) is removed once older than
// documents.OrphanAge, and the blobs a message and an attachment hold are never removed.
// Catches e-mail blobs piling up for ever (neither prefix swept) and a sweep that reads the
// wrong column (it would remove held blobs). Not parallel: the sweep judges every blob of the
// bucket with a clock an hour ahead.
func TestEmails_BlobSweep(t *testing.T) {
	env := apitest.New(t)
	co := newCompany(t, env)
	mb := mailbox(t, env, co, nil)
	ctx := context.Background()
	bucket, err := blobstore.Open(ctx, env.Config.BlobURL)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	key := func(prefix string) string { return prefix + "/" + co.ID.String() + "/" + uuid.NewString() }
	heldRaw, heldFile := key(emails.RawPrefix)+".eml", key(emails.AttachmentPrefix)
	orphanRaw, orphanFile := key(emails.RawPrefix)+".eml", key(emails.AttachmentPrefix)
	for _, k := range []string{heldRaw, heldFile, orphanRaw, orphanFile} {
		if err := bucket.WriteAll(ctx, k, []byte("From: a@example.com\r\n\r\nx"), nil); err != nil {
			t.Fatal(err)
		}
	}
	env.InCompany(t, co.ID, func(ctx context.Context, db *ent.Client) error {
		th, err := db.EmailThread.Create().SetMailboxID(mb).SetSubject("Sweep").SetLastMessageAt(time.Now()).Save(ctx)
		if err != nil {
			return err
		}
		e, err := db.Email.Create().SetThreadID(th.ID).SetMailboxID(mb).SetDirection("inbound").SetStatus("received").
			SetMessageID(uuid.NewString() + "@example.com").SetTo([]schematype.MailAddress{{Email: "x@example.com"}}).
			SetRawKey(heldRaw).Save(ctx)
		if err != nil {
			return err
		}
		_, err = db.EmailAttachment.Create().SetEmailID(e.ID).SetThreadID(th.ID).SetBlobKey(heldFile).Save(ctx)
		return err
	})
	pool, err := pgxpool.New(ctx, env.AppURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	later := time.Now().Add(documents.OrphanAge + time.Minute)
	if _, err := documents.NewSweeper(pool, bucket, func() time.Time { return later }, zerolog.Nop()).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]bool{heldRaw: true, heldFile: true, orphanRaw: false, orphanFile: false} {
		ok, err := bucket.Exists(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if ok != want {
			t.Errorf("%s exists after the sweep: %v, want %v", k, ok, want)
		}
	}
}
