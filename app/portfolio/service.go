package portfolio

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portfoliotransfer"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Service runs the transfer use cases of the API.
type Service struct{ m *Module }

// NewTransfer is a validated upload.
type NewTransfer struct {
	Format     string
	Source     string
	OwnerID    *uuid.UUID
	MappingID  *uuid.UUID
	AutoCommit bool
	WriteMode  string
	Encoding   string
	Filename   string
}

// Create records the transfer of a file stored with StoreFile: the row and its validation job in
// one transaction: a transfer never waits for a job that does not exist. It runs without a
// request transaction (the route is behind tenancy.SecretUnpinned: no connection is held while
// the file streams in); its reads and the insert are short transactions of their own on the
// module's pool. A crash between the blob and the row leaves a blob without row: the orphan
// sweep (documents.Sweeper, prefix "portfolio/") removes it after documents.OrphanAge.
//
// The caller has stored the file with StoreFile and deletes it when Create fails.
func (s *Service) Create(ctx context.Context, in NewTransfer, file StoredFile) (*ent.PortfolioTransfer, error) {
	company, ok := tenancy.CompanyID(ctx)
	if !ok {
		return nil, tenancy.ErrNoCompany
	}
	if file.Size == 0 {
		return nil, errs.InvalidField("file", "empty", "the file is empty")
	}
	// A csv transfer keeps the mapping as it is now: validation and commit read the same one.
	var mapping []byte
	err := withTx(ctx, s.m.d.DB, func(ctx context.Context, tx *ent.Tx) error {
		if in.OwnerID != nil {
			ok, err := tx.User.Query().Where(user.ID(*in.OwnerID)).Exist(ctx)
			if err != nil {
				return fmt.Errorf("read transfer owner: %w", err)
			}
			if !ok {
				return errs.InvalidField("ownerId", "unknown_user", "is not a user of this company (see GET /users)")
			}
		}
		if in.MappingID != nil {
			m, err := tx.PortfolioMapping.Get(ctx, *in.MappingID)
			if ent.IsNotFound(err) { // the caller's to fix, 422: not the resource of the path
				return errs.InvalidField("mappingId", "unknown_mapping", "is not a mapping of this company (see GET /portfolio-mappings)")
			}
			if err != nil {
				return fmt.Errorf("read portfolio mapping: %w", err)
			}
			if mapping, err = json.Marshal(mappingSnapshot(m)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	key, size, sum := file.Key, file.Size, file.SHA256
	id := uuid.Must(uuid.NewV7())
	now := s.m.d.Now().UTC().Truncate(time.Microsecond)
	tx, err := tenancy.BeginPgx(tenancy.WithCompany(context.WithoutCancel(ctx), company), s.m.d.Pool)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // no-op after commit
	_, err = tx.Exec(ctx, `INSERT INTO portfolio_transfers (id, company_id, created_at, updated_at, version, status, format,
			source, owner_id, mapping_id, auto_commit, write_mode, encoding, filename, size, sha256, blob_key, committed, error, mapping)
		VALUES ($1, $2, $3, $3, 1, 'pending', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 0, '', $15::jsonb)`,
		id, company, now, in.Format, in.Source, in.OwnerID, in.MappingID, in.AutoCommit, in.WriteMode, in.Encoding,
		in.Filename, size, sum, key, nullJSON(mapping))
	if err != nil {
		return nil, insertError(err)
	}
	if _, err := s.m.queue.InsertTx(ctx, tx, Args{CompanyID: company, TransferID: id}, nil); err != nil {
		return nil, fmt.Errorf("queue portfolio transfer: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	// The row as inserted, not read back: from here on the transfer exists, and no error may
	// make the caller delete its file.
	return &ent.PortfolioTransfer{ID: id, CompanyID: company, CreatedAt: now, UpdatedAt: now, Version: 1,
		Status: portfoliotransfer.StatusPending, Format: portfoliotransfer.Format(in.Format), Source: in.Source,
		OwnerID: in.OwnerID, MappingID: in.MappingID, AutoCommit: in.AutoCommit,
		WriteMode: portfoliotransfer.WriteMode(in.WriteMode), Encoding: in.Encoding, Filename: in.Filename,
		Size: size, Sha256: sum, BlobKey: key}, nil
}

// StoredFile is a portfolio file in blob storage, not yet a transfer's.
type StoredFile struct {
	Key    string
	Size   int64
	SHA256 string
}

// StoreFile streams r into a new blob of the company, hashing it on the way. When reading r
// fails (the body ends early, passes its limit), the write is aborted and nothing stays behind:
// gocloud.dev/blob discards a writer whose context is cancelled before Close.
func (s *Service) StoreFile(ctx context.Context, r io.Reader) (StoredFile, error) {
	company, ok := tenancy.CompanyID(ctx)
	if !ok {
		return StoredFile{}, tenancy.ErrNoCompany
	}
	key := blobstore.NewKey("portfolio", company)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.m.d.Bucket.NewWriter(wctx, key, nil)
	if err != nil {
		return StoredFile{}, blobstore.WriteFailed(ctx, "portfolio file", err)
	}
	h := sha256.New()
	bw := &blobWriter{w: w}
	size, err := io.Copy(io.MultiWriter(bw, h), r)
	if err != nil {
		cancel()
		_ = w.Close()
		if bw.err != nil { // the storage failed, not the client's body
			return StoredFile{}, blobstore.WriteFailed(ctx, "portfolio file", bw.err)
		}
		return StoredFile{}, err
	}
	if err := w.Close(); err != nil {
		return StoredFile{}, blobstore.WriteFailed(ctx, "portfolio file", err)
	}
	return StoredFile{Key: key, Size: size, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// DeleteFile removes a stored file that did not become a transfer.
func (s *Service) DeleteFile(ctx context.Context, f StoredFile) {
	if f.Key != "" {
		_ = s.m.d.Bucket.Delete(context.WithoutCancel(ctx), f.Key)
	}
}

// nullJSON is b as a jsonb parameter, NULL when empty.
func nullJSON(b []byte) *string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	return &s
}

// Get reads one transfer. Another company's transfer is not found.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (*ent.PortfolioTransfer, error) {
	t, err := tenancy.Client(ctx).PortfolioTransfer.Get(ctx, id)
	if err != nil {
		return nil, errs.FromEnt(err, "portfolio transfer %s", id)
	}
	return t, nil
}

// ListFilter narrows GET /portfolio-transfers. Nil fields do not filter.
type ListFilter struct{ Status *string }

// transfersOldestFirst orders GET /portfolio-transfers.
var transfersOldestFirst = paging.ByCreated(func(t *ent.PortfolioTransfer) (time.Time, uuid.UUID) { return t.CreatedAt, t.ID })

// List returns a page of the transfers matching f, oldest first.
func (s *Service) List(ctx context.Context, f ListFilter, page paging.Page) ([]*ent.PortfolioTransfer, error) {
	k, err := transfersOldestFirst.Apply(page)
	if err != nil {
		return nil, err
	}
	q := tenancy.Client(ctx).PortfolioTransfer.Query()
	if f.Status != nil {
		q.Where(portfoliotransfer.StatusEQ(portfoliotransfer.Status(*f.Status)))
	}
	rows, err := q.Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list portfolio transfers: %w", err)
	}
	return rows, nil
}

// Commit starts the commit of a validated transfer: it becomes committing and its job is
// queued, in one transaction. Idempotent: a transfer committing or committed already is
// returned as it is. A transfer not validated yet (pending, validating) or failed is 409.
func (s *Service) Commit(ctx context.Context, id uuid.UUID) (*ent.PortfolioTransfer, bool, error) {
	t, err := s.Get(ctx, id)
	if err != nil {
		return nil, false, err
	}
	switch t.Status {
	case portfoliotransfer.StatusCommitting, portfoliotransfer.StatusCommitted:
		return t, false, nil
	case portfoliotransfer.StatusValidated:
	default:
		return nil, false, errs.Conflict("transfer_not_validated",
			"the transfer is %s: only a validated transfer can be committed", t.Status)
	}
	tx, err := tenancy.BeginPgx(tenancy.WithCompany(context.WithoutCancel(ctx), t.CompanyID), s.m.d.Pool)
	if err != nil {
		return nil, false, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // no-op after commit
	var moved bool
	err = tx.QueryRow(ctx, `UPDATE portfolio_transfers SET status = 'committing', version = version + 1, updated_at = now()
		WHERE id = $1 AND status = 'validated' RETURNING true`, id).Scan(&moved)
	if errors.Is(err, pgx.ErrNoRows) { // a concurrent commit request won
		return t, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("commit portfolio transfer %s: %w", id, err)
	}
	if _, err := s.m.queue.InsertTx(ctx, tx, Args{CompanyID: t.CompanyID, TransferID: id, Commit: true}, nil); err != nil {
		return nil, false, fmt.Errorf("queue portfolio commit: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, false, err
	}
	t, err = s.Get(ctx, id)
	return t, true, err
}

// insertError names what a transfer's insert found gone: the owner or the mapping was read in
// the request's transaction, the insert runs in its own, so either may be deleted in between
// (a foreign key violation, the caller's to fix like an unknown id, not a 500).
func insertError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23503" {
		switch pe.ConstraintName {
		case "tenant_portfolio_transfers_mapping":
			return errs.InvalidField("mappingId", "unknown_mapping", "is not a mapping of this company (see GET /portfolio-mappings)")
		case "tenant_portfolio_transfers_owner":
			return errs.InvalidField("ownerId", "unknown_user", "is not a user of this company (see GET /users)")
		}
	}
	return fmt.Errorf("store portfolio transfer: %w", err)
}

// blobWriter keeps the error of the blob writer, so that StoreFile tells a storage failure
// (503) from a body that ended early or passed its limit (the reader's error).
type blobWriter struct {
	w   io.Writer
	err error
}

func (b *blobWriter) Write(p []byte) (int, error) {
	n, err := b.w.Write(p)
	if err != nil {
		b.err = err
	}
	return n, err
}
