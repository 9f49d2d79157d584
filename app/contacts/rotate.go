package contacts

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// RotateData re-seals every sensitive group not sealed with the current data key (`brokerdesk
// keys rotate-data`), batch contacts per transaction, as the brokerdesk_operator role (every
// company). db connects as the owner. Re-sealing changes no data: version and updatedAt stay
// and no event is recorded. It returns how many contacts were re-sealed. Safe to repeat and to
// run beside the server: rows are locked (SKIP LOCKED) while re-sealed.
func RotateData(ctx context.Context, db *sql.DB, keys *datakeys.Keyring, batch int) (int, error) {
	total := 0
	for {
		n, err := rotateBatch(ctx, db, keys, batch)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

func rotateBatch(ctx context.Context, db *sql.DB, keys *datakeys.Keyring, batch int) (int, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, sqlOperatorRole); err != nil {
		return 0, fmt.Errorf("rotate data keys: %w", err)
	}
	rows, err := tx.QueryContext(ctx, sqlStaleSealed, keys.Current(), batch)
	if err != nil {
		return 0, fmt.Errorf("rotate data keys: %w", err)
	}
	type item struct {
		id, company uuid.UUID
		sealed      map[string]schematype.Sealed
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
			return 0, fmt.Errorf("contact %s: %w", it.id, err)
		}
		items = append(items, it)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, it := range items {
		for g, s := range it.sealed {
			if s.KeyID == keys.Current() {
				continue
			}
			plain, err := keys.Open(s, aad(it.id, it.company, g))
			if err != nil {
				return 0, fmt.Errorf("contact %s group %s: %w", it.id, g, err)
			}
			it.sealed[g] = keys.Seal(plain, aad(it.id, it.company, g))
		}
		b, _ := json.Marshal(it.sealed)
		if _, err := tx.ExecContext(ctx, sqlReseal, b, it.id); err != nil {
			return 0, fmt.Errorf("contact %s: %w", it.id, err)
		}
	}
	return len(items), tx.Commit()
}
