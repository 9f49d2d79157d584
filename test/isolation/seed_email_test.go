package isolation

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contract"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// seedEmailTables gives company c rows in every table of the e-mail area (issue 21):
// mailboxes through the operator (the app role may not create one), points through the
// operator's grant (company_points, point_entries), a template through the operator role, and
// the rest as the app role pinned to c (RLS applies as in a request): a folder's sync state,
// a thread with a message, its attachment and its link to contact, an opt-out and a
// correspondence case about the contract seedEveryTable created.
func seedEmailTables(t *testing.T, env *apitest.Env, c *apitest.Company, contactID string) {
	t.Helper()
	ctx := context.Background()
	mb, err := env.Ops.CreateMailbox(ctx, env.Config.DataKeys, operator.NewMailbox{CompanyID: c.ID,
		Email: "team-" + c.ID.String()[:8] + "@makler.test", IMAPURL: "imap://127.0.0.1:1143",
		SMTPURL: "smtp://127.0.0.1:1025", Username: "team", Password: "geheim", Shared: true})
	if err != nil {
		t.Fatalf("seed mailbox: %v", err)
	}
	if _, err := env.Ops.GrantPoints(ctx, c.ID, 10, "seed"); err != nil {
		t.Fatalf("seed points: %v", err)
	}
	err = env.Operator(ctx, c.ID, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO email_templates (id, company_id, created_at, updated_at, name, subject,
			body_text, placeholders) VALUES ($1, $2, now(), now(), 'Seed-Vorlage', 'Hallo', 'Hallo {{contact.firstName}}',
			'["contact.firstName"]')`, uuid.Must(uuid.NewV7()), c.ID)
		return err
	})
	if err != nil {
		t.Fatalf("seed template: %v", err)
	}
	contact := uuid.MustParse(contactID)
	env.InCompany(t, c.ID, func(ctx context.Context, db *ent.Client) error {
		if _, err := db.MailboxFolder.Create().SetMailboxID(mb.ID).SetName("INBOX").SetUIDValidity(1).SetLastUID(1).Save(ctx); err != nil {
			return err
		}
		now := time.Now()
		th, err := db.EmailThread.Create().SetMailboxID(mb.ID).SetSubject("Seed").SetLastMessageAt(now).SetMessageCount(1).Save(ctx)
		if err != nil {
			return err
		}
		e, err := db.Email.Create().SetThreadID(th.ID).SetMailboxID(mb.ID).SetDirection("inbound").SetStatus("received").
			SetMessageID(uuid.NewString() + "@example.com").SetFromAddress("kunde@example.com").
			SetTo([]schematype.MailAddress{{Email: mb.Email}}).SetSubject("Seed").SetSentAt(now).Save(ctx)
		if err != nil {
			return err
		}
		if _, err := db.EmailAttachment.Create().SetEmailID(e.ID).SetThreadID(th.ID).SetFilename("a.pdf").
			SetBlobKey("seed/" + e.ID.String()).Save(ctx); err != nil {
			return err
		}
		if _, err := db.EmailLink.Create().SetEmailID(e.ID).SetThreadID(th.ID).SetContactID(contact).Save(ctx); err != nil {
			return err
		}
		if _, err := db.EmailOptOut.Create().SetEmail("seed-" + c.ID.String()[:8] + "@example.com").Save(ctx); err != nil {
			return err
		}
		k, err := db.Contract.Query().Where(contract.ContactID(contact)).First(ctx)
		if err != nil {
			return err
		}
		_, err = db.CorrespondenceCase.Create().SetContactID(contact).SetInsurerID(k.InsurerID).
			SetContractIds([]uuid.UUID{k.ID}).SetTransactionType("address_change").SetSubject("Seed").Save(ctx)
		return err
	})
}
