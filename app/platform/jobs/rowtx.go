package jobs

import (
	"context"
	"database/sql"
	"fmt"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// RowTx writes a row and inserts its job in one transaction of the job pool, so a row never
// waits for a job that does not exist (a portfolio transfer's validation, a commission
// statement's parse). database/sql, not pgx: river's riverdatabasesql driver inserts into a
// *sql.Tx, which ent can run on; ent cannot run on a pgx.Tx. It only inserts: the pool's
// Client works the jobs.
type RowTx struct {
	db     *sql.DB
	insert *river.Client[*sql.Tx]
}

// NewRowTx builds it over pool (database/sql over the pool's connections, none of its own).
func NewRowTx(pool *pgxpool.Pool) (*RowTx, error) {
	db := stdlib.OpenDBFromPool(pool)
	c, err := river.NewClient(riverdatabasesql.New(db), &river.Config{Schema: migrations.RiverSchema})
	if err != nil {
		return nil, fmt.Errorf("job insert client: %w", err)
	}
	return &RowTx{db: db, insert: c}, nil
}

// MustRowTx is NewRowTx for a module's constructor: nil without a pool (a module built for a
// test of its pure parts), and a panic when river refuses its configuration, which only a
// programming error causes (area names the module in the message).
func MustRowTx(pool *pgxpool.Pool, area string) *RowTx {
	if pool == nil {
		return nil
	}
	r, err := NewRowTx(pool)
	if err != nil {
		panic(fmt.Sprintf("%s: %v", area, err))
	}
	return r
}

// Run runs f in one transaction pinned to the company (and acting user) of ctx as a request's
// is (tenancy.BeginSQL), and commits it when f succeeds. f writes through db, an ent client
// over that transaction (tenant, time and version hooks run as everywhere; ctx carries it for
// events), and inserts its jobs with insert: the row and its job commit together or not at all.
func (r *RowTx) Run(ctx context.Context, f func(ctx context.Context, db *ent.Client, insert func(river.JobArgs) error) error) error {
	tx, err := tenancy.BeginSQL(ctx, r.db)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after commit
	db := ent.NewClient(ent.Driver(entsql.NewDriver(dialect.Postgres, entsql.Conn{ExecQuerier: tx})))
	insert := func(args river.JobArgs) error {
		_, err := r.insert.InsertTx(ctx, tx, args, nil)
		return err
	}
	if err := f(tenancy.WithClient(ctx, db), db, insert); err != nil {
		return err
	}
	return tx.Commit()
}
