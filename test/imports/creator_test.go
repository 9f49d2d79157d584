package imports

import (
	"context"
	"database/sql"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/imports"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestImports_DuplicatesAsTheCreatorSees: the analysis runs pinned as the import's creator, so
// a restricted creator (an agent; the role policy grants agents no imports:write today, so the
// creator is set below the API) finds duplicates only among the contacts it sees: its own
// customer's e-mail is a duplicate, another agent's customer's is not, and the row does not
// name that contact. The rows it writes are the creator's (visible by creator_id). Bug caught:
// an analysis run company-wide that reveals, through contactId, a contact the creator may not
// see.
func TestImports_DuplicatesAsTheCreatorSees(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	agentA, agentB := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	ofA := apitest.Create[contact](t, env, co.Secret, "/contacts", map[string]any{"type": "private", "firstName": "A",
		"lastName": "Kunde", "email": "a@creator.test", "ownerId": agentA.ID})
	ofB := apitest.Create[contact](t, env, co.Secret, "/contacts", map[string]any{"type": "private", "firstName": "B",
		"lastName": "Kunde", "email": "b@creator.test", "ownerId": agentB.ID})
	im := mustAnalyze(t, env, co.Secret, nil, []byte("Vorname;Nachname;E-Mail\nX;Y;a@creator.test\nZ;W;b@creator.test\n"))
	if im.RowCounts["duplicate"] != 2 {
		t.Fatalf("company-wide analysis: %v", im.RowCounts)
	}
	ctx := context.Background()
	id := uuid.MustParse(im.ID)
	// The same import as agent B's, queued again (no job: this test runs the analysis itself).
	if err := env.Operator(ctx, co.ID, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM contact_import_rows WHERE import_id = $1`, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE contact_imports SET creator_id = $2, status = 'queued', counts = '{}', row_count = 0
			WHERE id = $1`, id, agentB.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := module(t, env, 500, nil).Run(ctx, imports.Args{CompanyID: co.ID, ImportID: id}); err != nil {
		t.Fatalf("analysis as agent B: %v", err)
	}
	got := apitest.Get[importJob](t, env, co.Secret, "/imports/"+im.ID)
	rs := rows(t, env, co.Secret, im.ID, "")
	if got.Status != "analyzed" || got.RowCounts["valid"] != 1 || got.RowCounts["duplicate"] != 1 || len(rs) != 2 {
		t.Fatalf("%+v %+v", got, rs)
	}
	if rs[0].Analysis != "valid" || rs[0].ContactID != nil {
		t.Errorf("A's customer revealed to B's import: %+v (contact %s)", rs[0], ofA.ID)
	}
	if rs[1].Analysis != "duplicate" || rs[1].ContactID == nil || *rs[1].ContactID != ofB.ID {
		t.Errorf("B's own customer not found: %+v", rs[1])
	}
	var creators int
	if err := env.Operator(ctx, co.ID, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM contact_import_rows WHERE import_id = $1 AND creator_id = $2`,
			id, agentB.ID).Scan(&creators)
	}); err != nil || creators != 2 {
		t.Errorf("rows of agent B: %d, %v", creators, err)
	}
}

// TestImports_TooManyRows: a file with more data rows than the limit fails its analysis with a
// message saying to split it, and keeps no row (the server's limit is 100,000; this module's
// is 5, so the test reads 6 rows instead of a 1,048,576-row sheet). Bugs caught: a huge sheet
// read to its end (memory, time), a partial analysis left behind, an import left analyzing.
func TestImports_TooManyRows(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	csv := "Vorname;Nachname\nA;1\nA;2\nA;3\nA;4\nA;5\nA;6\n"
	im := mustAnalyze(t, env, co.Secret, nil, []byte(csv))
	ctx := context.Background()
	id := uuid.MustParse(im.ID)
	if err := env.Operator(ctx, co.ID, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM contact_import_rows WHERE import_id = $1`, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE contact_imports SET status = 'queued', counts = '{}', row_count = 0 WHERE id = $1`, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := module(t, env, 500, nil, 5).Run(ctx, imports.Args{CompanyID: co.ID, ImportID: id}); err != nil {
		t.Fatalf("run: %v", err)
	}
	got := apitest.Get[importJob](t, env, co.Secret, "/imports/"+im.ID)
	if got.Status != "failed" || got.Error == nil || *got.Error != "the file has more than 5 data rows: split it into files of at most 5 rows" {
		t.Fatalf("%+v", got)
	}
	if rs := rows(t, env, co.Secret, im.ID, ""); len(rs) != 0 {
		t.Errorf("%d rows kept", len(rs))
	}
}
