package commissions

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// TestLiabilitySeeded times the parts of the admin's liability report against a seeded
// database (test/benchreports, paused): the statement with the rows' transfer and scan, and the
// JSON encoding of the body. Runs only with LIABILITY_SEEDED_URL (a superuser URL of that
// database), LIABILITY_SEEDED_COMPANY and LIABILITY_SEEDED_USER (an admin of it); asOf
// 2026-12-31 as the bench asks.
func TestLiabilitySeeded(t *testing.T) {
	url, company, user := os.Getenv("LIABILITY_SEEDED_URL"), os.Getenv("LIABILITY_SEEDED_COMPANY"), os.Getenv("LIABILITY_SEEDED_USER")
	if url == "" {
		t.Skip("LIABILITY_SEEDED_URL not set")
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	asOf := time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)
	for range 3 {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`SET LOCAL role brokerdesk_app`, `SET LOCAL jit = off`, `SET LOCAL enable_nestloop = off`,
			fmt.Sprintf(`SELECT set_config('app.company_id', '%s', true), set_config('app.user_id', '%s', true), set_config('app.visibility', 'all', true)`, company, user)} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		var bound time.Time
		if err := tx.QueryRowContext(ctx, `SELECT ($1::date - make_interval(months => $2::int + 1))::date`, asOf.Format(time.DateOnly), MaxDefaultLiabilityMonths).Scan(&bound); err != nil {
			t.Fatal(err)
		}
		sums, positive, arms := liabilitySums([]int{12, 60})
		start := time.Now()
		rows, err := tx.QueryContext(ctx, fmt.Sprintf(liabilitySQL, liabilityEntriesSQL, sums, positive, arms), asOf.Format(time.DateOnly), bound.Format(time.DateOnly))
		if err != nil {
			t.Fatal(err)
		}
		first := time.Time{}
		if rows.Next() {
			first = time.Now()
		}
		_ = rows.Close()
		_ = tx.Rollback()
		// The statement once more, read to the end.
		tx, _ = db.BeginTx(ctx, nil)
		for _, q := range []string{`SET LOCAL role brokerdesk_app`, `SET LOCAL jit = off`, `SET LOCAL enable_nestloop = off`,
			fmt.Sprintf(`SELECT set_config('app.company_id', '%s', true), set_config('app.user_id', '%s', true), set_config('app.visibility', 'all', true)`, company, user)} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		start2 := time.Now()
		rows, err = tx.QueryContext(ctx, fmt.Sprintf(liabilitySQL, liabilityEntriesSQL, sums, positive, arms), asOf.Format(time.DateOnly), bound.Format(time.DateOnly))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := liabilityRows(rows)
		if err != nil {
			t.Fatal(err)
		}
		read := time.Since(start2)
		_ = tx.Rollback()
		start3 := time.Now()
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		marshal := time.Since(start3)
		start4 := time.Now()
		a := rep.AppendJSON(make([]byte, 0, 64+240*len(rep.Data)))
		t.Logf("rows %d: first row after %v, all rows read and scanned after %v (transfer and scan ~%v), JSON %d bytes: encoding/json %v, AppendJSON %v (equal %t)",
			len(rep.Data), first.Sub(start), read, read-first.Sub(start), len(b), marshal, time.Since(start4), string(a) == string(b))
	}
}
