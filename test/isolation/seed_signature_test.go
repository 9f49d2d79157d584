package isolation

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// seedSignatureTables gives company c rows in every table of the signing area (issue 22): a
// document template and a standard document through the operator role (the app role may only
// read them), and as the app role pinned to c a signature request with its signer and an
// advice record of contact.
func seedSignatureTables(t *testing.T, env *apitest.Env, c *apitest.Company, contactID string) {
	t.Helper()
	ctx := context.Background()
	err := env.Operator(ctx, c.ID, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO document_templates (id, company_id, created_at, updated_at, name,
			category, body, placeholders, signature_roles) VALUES ($1, $2, now(), now(), 'Seed-Vorlage', 'letter',
			'Hallo {{contact.firstName}}', '["contact.firstName"]', '[]')`, uuid.Must(uuid.NewV7()), c.ID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO standard_documents (id, company_id, created_at, updated_at, name,
			filename, content, size, sha256, signature_fields) VALUES ($1, $2, now(), now(), 'Seed-Dokument', 'seed.pdf',
			'%PDF-1.4', 8, $3, '[]')`, uuid.Must(uuid.NewV7()), c.ID, strings.Repeat("0", 64))
		return err
	})
	if err != nil {
		t.Fatalf("seed templates: %v", err)
	}
	contact := uuid.MustParse(contactID)
	env.InCompany(t, c.ID, func(ctx context.Context, db *ent.Client) error {
		r, err := db.SignatureRequest.Create().SetContactID(contact).SetTitle("Seed").
			SetDocuments([]schematype.SignatureSource{{Filename: "seed.pdf", Pages: 1}}).
			SetSourceBlobKey("signatures/seed/" + uuid.NewString()).SetSourceSha256(strings.Repeat("0", 64)).
			SetPageCount(1).SetExpiresAt(time.Now().Add(time.Hour)).Save(ctx)
		if err != nil {
			return err
		}
		if _, err := db.SignatureSigner.Create().SetRequestID(r.ID).SetContactID(contact).SetPosition(0).
			SetRole("contact").SetName("Seed").SetEmail("seed@example.com").SetTokenHash([]byte("seed")).Save(ctx); err != nil {
			return err
		}
		_, err = db.AdviceRecord.Create().SetContactID(contact).SetConsultedAt(time.Now()).SetSubject("Seed").Save(ctx)
		return err
	})
}
