package portal

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// The portal's sealed columns (`brokerdesk keys rotate-data` re-seals them with the contacts'
// groups): the TOTP secrets of accesses and the bank changes of change requests. Each is the
// JSON of one schematype.Sealed, bound to its row by its AAD.
var sealedColumns = []struct {
	table, column string
	aad           func(company, id uuid.UUID) []byte
}{
	{"portal_accesses", "totp_secret", totpAAD},
	{"portal_change_requests", "sealed", changeAAD},
}

// RotateData re-seals every sealed portal value not sealed with the current data key, batch
// rows per transaction, as the brokerdesk_operator role (every company). db connects as the
// owner. It changes no data (no version, no event) and returns how many rows were re-sealed.
// Safe to repeat and to run beside the server: rows are locked (SKIP LOCKED) while re-sealed.
func RotateData(ctx context.Context, db *sql.DB, keys *datakeys.Keyring, batch int) (int, error) {
	total := 0
	for _, col := range sealedColumns {
		for {
			n, err := rotateBatch(ctx, db, keys, batch, col.table, col.column, col.aad)
			total += n
			if err != nil {
				return total, err
			}
			if n == 0 {
				break
			}
		}
	}
	return total, nil
}

func rotateBatch(ctx context.Context, db *sql.DB, keys *datakeys.Keyring, batch int, table, column string,
	aad func(company, id uuid.UUID) []byte) (int, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SET LOCAL ROLE brokerdesk_operator`); err != nil {
		return 0, fmt.Errorf("rotate data keys: %w", err)
	}
	// table and column come from sealedColumns above, never from input.
	rows, err := tx.QueryContext(ctx, fmt.Sprintf(`SELECT id, company_id, %[2]s FROM %[1]s
		WHERE length(%[2]s) > 0 AND convert_from(%[2]s, 'UTF8')::jsonb->>'kid' IS DISTINCT FROM $1
		LIMIT $2 FOR UPDATE SKIP LOCKED`, table, column), keys.Current(), batch)
	if err != nil {
		return 0, fmt.Errorf("rotate data keys of %s: %w", table, err)
	}
	type item struct {
		id, company uuid.UUID
		sealed      schematype.Sealed
	}
	var items []item
	for rows.Next() {
		var it item
		var raw []byte
		if err := rows.Scan(&it.id, &it.company, &raw); err != nil {
			rows.Close()
			return 0, err
		}
		if err := json.Unmarshal(raw, &it.sealed); err != nil {
			rows.Close()
			return 0, fmt.Errorf("%s %s: %w", table, it.id, err)
		}
		items = append(items, it)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, it := range items {
		plain, err := keys.Open(it.sealed, aad(it.company, it.id))
		if err != nil {
			return 0, fmt.Errorf("%s %s: %w", table, it.id, err)
		}
		b, _ := json.Marshal(keys.Seal(plain, aad(it.company, it.id)))
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`UPDATE %s SET %s = $1 WHERE id = $2`, table, column), b, it.id); err != nil {
			return 0, fmt.Errorf("%s %s: %w", table, it.id, err)
		}
	}
	return len(items), tx.Commit()
}
