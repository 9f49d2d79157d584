package tenancy

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// The request transaction of the auth middleware begins with its credential lookup in the same
// round trip: BEGIN and the lookup (which pins the transaction with set_config(…, true)) go out
// as one pgx batch, one network write, answered by one read. Issued one after the other they
// cost a round trip more per request, which on a busy machine is mostly CPU (system calls and
// goroutine wake-ups on both ends) rather than waiting.

// authLookup is the statement that resolves a credential and pins the transaction; scan reads
// its rows (errNoCredential when there is none).
type authLookup struct {
	query string
	args  []any
	scan  func(pgx.Rows) error
}

// errNoCredential is what a lookup's scan returns when no credential matched: the transaction
// is rolled back and the caller answers 401.
var errNoCredential = errors.New("tenancy: no such credential")

// beginLookup takes a connection of the pool, sends BEGIN and l as one batch and returns the
// open transaction on that connection. On any failure the transaction is rolled back, or the
// connection discarded when its state is unknown (database/sql never sees it again).
func (d *Driver) beginLookup(ctx context.Context, l *authLookup) (dialect.Tx, error) {
	if d.Trace != nil {
		d.Trace(l.query, l.args)
	}
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin request transaction: %w", err)
	}
	var lookupErr error
	rawErr := conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			lookupErr = fmt.Errorf("tenancy: the pool's driver connection is %T, not pgx", dc)
			return driver.ErrBadConn
		}
		pc := sc.Conn()
		b := &pgx.Batch{}
		b.Queue("begin")
		b.Queue(l.query, l.args...).Query(l.scan)
		lookupErr = pc.SendBatch(ctx, b).Close()
		if lookupErr == nil {
			if pc.PgConn().TxStatus() != 'T' { // cannot happen: BEGIN ran and nothing failed
				lookupErr = errors.New("tenancy: the credential lookup left no open transaction")
				return driver.ErrBadConn
			}
			return nil
		}
		return rollbackConn(ctx, pc)
	})
	if lookupErr == nil && rawErr != nil {
		lookupErr = rawErr
	}
	if lookupErr != nil {
		_ = conn.Close()
		if errors.Is(lookupErr, errNoCredential) {
			return nil, errNoCredential
		}
		return nil, fmt.Errorf("resolve credential: %w", lookupErr)
	}
	tx := planTx{&connTx{Conn: entsql.Conn{ExecQuerier: conn}, conn: conn, ctx: ctx}}
	if d.Trace != nil {
		return tracedTx{Tx: tx, trace: d.Trace}, nil
	}
	return tx, nil
}

// rollbackConn ends pc's transaction after a failure; it returns driver.ErrBadConn (discard the
// connection) when that is not certain to have worked.
func rollbackConn(ctx context.Context, pc *pgx.Conn) error {
	if pc.IsClosed() || ctx.Err() != nil {
		return driver.ErrBadConn
	}
	if pc.PgConn().TxStatus() == 'I' {
		return nil
	}
	if _, err := pc.Exec(ctx, "rollback"); err != nil || pc.PgConn().TxStatus() != 'I' {
		return driver.ErrBadConn
	}
	return nil
}

// connTx is a transaction that beginLookup began by hand on a connection taken from the pool
// (database/sql cannot adopt a transaction it did not begin). Statements run on the connection;
// Commit and Rollback end the transaction and give the connection back.
type connTx struct {
	entsql.Conn // Exec, Query, ExecContext, QueryContext on conn
	conn        *sql.Conn
	ctx         context.Context // the request's, as database/sql's Tx commits with BeginTx's
	done        bool
}

// Commit commits. A COMMIT PostgreSQL answers with ROLLBACK (the transaction had failed) is an
// error, as pgx reports it; a connection whose state is unknown afterwards is discarded.
func (t *connTx) Commit() error {
	if t.done {
		return sql.ErrTxDone
	}
	t.done = true
	var err error
	rawErr := t.conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		tag, e := pc.Exec(t.ctx, "commit")
		switch {
		case e != nil:
			err = e
		case tag.String() == "ROLLBACK":
			err = pgx.ErrTxCommitRollback
		}
		if pc.IsClosed() || pc.PgConn().TxStatus() != 'I' {
			return driver.ErrBadConn
		}
		return nil
	})
	_ = t.conn.Close()
	if err == nil && rawErr != nil && !errors.Is(rawErr, driver.ErrBadConn) {
		err = rawErr
	}
	return err
}

// Rollback rolls back; after a canceled request or a failed ROLLBACK the connection is
// discarded instead (closing it ends the transaction on the server).
func (t *connTx) Rollback() error {
	if t.done {
		return sql.ErrTxDone
	}
	t.done = true
	err := t.conn.Raw(func(dc any) error { return rollbackConn(t.ctx, dc.(*stdlib.Conn).Conn()) })
	_ = t.conn.Close()
	if errors.Is(err, driver.ErrBadConn) {
		return nil // the connection is closed: the server rolled the transaction back
	}
	return err
}
