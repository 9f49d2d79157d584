package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/brokerdesk/brokerdesk/tenancy"
)

// authQuery is tenancy's credential lookup and pin, verbatim (tenancy/middleware.go).
const authQuery = `SELECT key_id, key_prefix, key_hash, kind, env, scopes, allowed_domains,
	company_id, live_company_id, sandbox, features, user_id, user_role,
	set_config('app.company_id', company_id::text, true)
FROM auth_credential($1)`

// companyQuery is what ent sends for tx.Company.Get(ctx, id) under the FilterOwnCompany privacy
// rule (captured with dialect.DebugWithContext): the id predicate twice, the filter's and Get's,
// and LIMIT 2 from Only.
const companyQuery = `SELECT "companies"."id", "companies"."created_at", "companies"."updated_at", "companies"."version", "companies"."name", "companies"."address", "companies"."links", "companies"."features", "companies"."status", "companies"."sandbox", "companies"."live_company_id" FROM "companies" WHERE "companies"."id" = $1 AND "companies"."id" = $2 LIMIT 2`

// bare is the bare pgx program: a pgxpool as the app role, as large as the server's, where one
// "request" is the server's SQL for GET /me with a company-level key, round trip for round trip:
// BEGIN; the credential lookup that pins the transaction; the company row; COMMIT. It scans the
// rows but does no JSON, no HTTP and no ent.
type bare struct {
	pool *pgxpool.Pool
	hash []byte // the first key's, for check
}

func newBare(ctx context.Context, fx fixture) (*bare, error) {
	pcfg, err := pgxpool.ParseConfig(fx.appURL)
	if err != nil {
		return nil, err
	}
	pcfg.MaxConns = int32(fx.cfg.DBMaxConns) // as app.NewServer sets it
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, err
	}
	return &bare{pool: pool, hash: tenancy.HashKey(fx.key)}, nil
}

func (b *bare) close() { b.pool.Close() }

func (b *bare) doer(l *lease) doer { return bareDoer{b, l} }

// check runs one request and checks that it found the seeded company.
func (b *bare) check(ctx context.Context, companyID string) error {
	co, err := b.request(ctx, b.hash)
	if err != nil {
		return fmt.Errorf("bare request: %w", err)
	}
	if co.id.String() != companyID {
		return fmt.Errorf("bare request found company %s, want %s", co.id, companyID)
	}
	return nil
}

type bareDoer struct {
	b     *bare
	lease *lease
}

func (d bareDoer) do(ctx context.Context) (bool, error) {
	k, _, err := d.lease.get(ctx)
	if err != nil {
		return false, err
	}
	_, err = d.b.request(ctx, k.hash)
	return err == nil, err
}

func (d bareDoer) close() { d.lease.close() }

// companyRow holds the columns ent selects.
type companyRow struct {
	id                   uuid.UUID
	createdAt, updatedAt time.Time
	version              int64
	name                 string
	address, links       []byte
	features             []byte
	status               string
	sandbox              bool
	liveCompanyID        uuid.NullUUID
}

func (b *bare) request(ctx context.Context, hash []byte) (co companyRow, err error) {
	tx, err := b.pool.Begin(ctx) // BEGIN
	if err != nil {
		return co, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(ctx)
		}
	}()
	rows, err := tx.Query(ctx, authQuery, hash)
	if err != nil {
		return co, err
	}
	var (
		keyID, companyID, liveCompanyID uuid.UUID
		userID                          uuid.NullUUID
		prefix, kind, env, pinned       string
		userRole                        *string
		stored, scopes, domains, feats  []byte
		sandbox                         bool
	)
	if !rows.Next() {
		rows.Close()
		if err := rows.Err(); err != nil {
			return co, err
		}
		return co, errors.New("credential not found")
	}
	if err := rows.Scan(&keyID, &prefix, &stored, &kind, &env, &scopes, &domains,
		&companyID, &liveCompanyID, &sandbox, &feats, &userID, &userRole, &pinned); err != nil {
		rows.Close()
		return co, err
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return co, err
	}
	if subtle.ConstantTimeCompare(stored, hash) != 1 {
		return co, errors.New("hash mismatch")
	}
	err = tx.QueryRow(ctx, companyQuery, companyID, companyID).Scan(&co.id, &co.createdAt, &co.updatedAt,
		&co.version, &co.name, &co.address, &co.links, &co.features, &co.status, &co.sandbox, &co.liveCompanyID)
	if err != nil {
		return co, err
	}
	return co, tx.Commit(ctx) // COMMIT
}
