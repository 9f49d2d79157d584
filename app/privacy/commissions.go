package privacy

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// retainCommissions keeps the commission entries booked on the person's contracts as vouchers
// and blanks what names the person in the live rows (docs/decisions/privacy.md "Commission
// entries"). An entry is a Buchungsbeleg the books must keep (ruleVoucher, 8 years), but the
// insurer's booking text ("Provision Müller, Hans"), the broker's note and the policy number
// name or identify the person, and GET /commission-entries shows an unmatched entry to every
// commissions reader of the company. So the whole row goes blocked into retained_records, and
// the live row keeps what the books need without the person: amount, booking date, type, code,
// insurer, statement and line (the reference to the statement file, the voucher kept whole).
//
// It runs in the erasure's transaction before the contact's deletion, whose contract deletes
// unmatch the entries: after that nothing tells which entries were the person's. The person's
// contracts are locked first (FOR UPDATE conflicts with the foreign key check of a match or of
// a PATCH linking an entry): no entry is matched to them between this read and their deletion,
// unseen and unblanked. The entries' ids go to plan.blanked: remove replaces the feed's events
// about them (commission_entry.updated carries the booking text, and no contact while the entry
// was unmatched) and clears the webhook log's answers to them, as for the deleted resources. The
// blanking is SQL: ent marks description and policy_number immutable for the API, not for the
// erasure.
func (m *Module) retainCommissions(ctx context.Context, company uuid.UUID, req *ent.PrivacyRequest, plan *erasurePlan,
	summary map[string]int) error {
	db := tenancy.Client(ctx)
	if _, err := db.ExecContext(ctx, `SELECT id FROM contracts WHERE contact_id = $1 FOR UPDATE`, req.ContactID); err != nil {
		return fmt.Errorf("lock the contracts: %w", err)
	}
	entries := &erasurePlan{} // the records to retain, written as the plan's are
	// contact_id is the contract's (the composite foreign key keeps it so), and indexed.
	err := query(ctx, `SELECT e.id, row_to_json(e)::text FROM commission_entries e
		WHERE e.contact_id = $1 ORDER BY e.booked_on, e.id FOR UPDATE`, []any{req.ContactID}, func(rows *sql.Rows) error {
		r := retained{typ: "commission_entry", rule: ruleVoucher}
		var raw []byte
		if err := rows.Scan(&r.id, &raw); err != nil {
			return err
		}
		return entries.add(r, raw)
	})
	if err != nil {
		return fmt.Errorf("read the commission entries: %w", err)
	}
	if len(entries.keep) == 0 {
		return nil
	}
	if err := m.writeRetained(ctx, company, req, entries, summary); err != nil {
		return err
	}
	ids := make([]string, len(entries.keep))
	for i, r := range entries.keep {
		ids[i] = r.id.String()
	}
	if _, err := db.ExecContext(ctx, `UPDATE commission_entries SET description = '', note = NULL, policy_number = '',
			policy_key = '', version = version + 1, updated_at = $2
		WHERE id = ANY($1::uuid[])`, ids, m.now()); err != nil {
		return fmt.Errorf("blank the commission entries: %w", err)
	}
	summary["blanked.commissionEntries"] = len(ids)
	plan.blanked = append(plan.blanked, ids...)
	return nil
}

// statementsUnderWay is true while a commission statement of the company is queued or being
// parsed; awaitImports waits for it as for a contact import. The statement's entries may name
// the person and be matched to the person's contracts: a parse that ended after the erasure
// would find the contracts gone and leave its entries unmatched with the booking text, where
// no erasure looks again. A parse always ends (processed, or failed on its last attempt or its
// timeout). Company-wide, as for imports: which statement holds the person is known only after
// its parse.
const statementsUnderWay = `EXISTS (SELECT 1 FROM commission_statements WHERE import_status IN ('queued', 'processing'))`
