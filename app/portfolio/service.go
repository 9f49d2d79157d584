package portfolio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"

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
func (s *Service) Create(ctx context.Context, in NewTransfer, file blobstore.Stored) (*ent.PortfolioTransfer, error) {
	company, ok := tenancy.CompanyID(ctx)
	if !ok {
		return nil, tenancy.ErrNoCompany
	}
	if file.Size == 0 {
		return nil, errs.InvalidField("file", "empty", "the file is empty")
	}
	// A csv transfer keeps the mapping as it is now: validation and commit read the same one.
	var mapping map[string]any
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
			mapping = mappingSnapshot(m)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var t *ent.PortfolioTransfer
	now := s.m.d.Now().UTC().Truncate(time.Microsecond)
	err = s.m.rowTx.Run(tenancy.WithCompany(context.WithoutCancel(ctx), company), func(ctx context.Context, db *ent.Client, insert func(river.JobArgs) error) error {
		q := db.PortfolioTransfer.Create().SetCreatedAt(now).SetUpdatedAt(now).
			SetStatus(portfoliotransfer.StatusPending).SetFormat(portfoliotransfer.Format(in.Format)).SetSource(in.Source).
			SetNillableOwnerID(in.OwnerID).SetNillableMappingID(in.MappingID).SetAutoCommit(in.AutoCommit).
			SetWriteMode(portfoliotransfer.WriteMode(in.WriteMode)).SetEncoding(in.Encoding).SetFilename(in.Filename).
			SetSize(file.Size).SetSha256(file.SHA256).SetBlobKey(file.Key)
		if mapping != nil {
			q.SetMapping(mapping)
		}
		var err error
		if t, err = q.Save(ctx); err != nil {
			return insertError(err)
		}
		if err := insert(Args{CompanyID: company, TransferID: t.ID}); err != nil {
			return fmt.Errorf("queue portfolio transfer: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The row as inserted, not read back: from here on the transfer exists, and no error may
	// make the caller delete its file.
	return t, nil
}

// StoreFile streams r into a new blob of the company (blobstore.Store under portfolio/).
func (s *Service) StoreFile(ctx context.Context, r io.Reader) (blobstore.Stored, error) {
	return blobstore.StorePinned(ctx, s.m.d.Bucket, "portfolio", "portfolio file", r)
}

// DeleteFile removes a stored file that did not become a transfer.
func (s *Service) DeleteFile(ctx context.Context, f blobstore.Stored) {
	blobstore.Discard(ctx, s.m.d.Bucket, f)
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
	return transfersOldestFirst.Rows(page, "portfolio transfers", func(k paging.Query) ([]*ent.PortfolioTransfer, error) {
		return tenancy.Client(ctx).PortfolioTransfer.Query().Where(paging.Enum(f.Status, portfoliotransfer.StatusEQ)...).
			Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	})
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
	var moved bool
	err = s.m.rowTx.Run(tenancy.WithCompany(context.WithoutCancel(ctx), t.CompanyID), func(ctx context.Context, db *ent.Client, insert func(river.JobArgs) error) error {
		// Only a validated transfer moves: a concurrent commit request that won leaves none.
		n, err := db.PortfolioTransfer.Update().
			Where(portfoliotransfer.ID(id), portfoliotransfer.StatusEQ(portfoliotransfer.StatusValidated)).
			SetStatus(portfoliotransfer.StatusCommitting).Save(ctx)
		if err != nil {
			return fmt.Errorf("commit portfolio transfer %s: %w", id, err)
		}
		if moved = n == 1; !moved {
			return nil
		}
		if err := insert(Args{CompanyID: t.CompanyID, TransferID: id, Commit: true}); err != nil {
			return fmt.Errorf("queue portfolio commit: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if !moved {
		return t, false, nil
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
