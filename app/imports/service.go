package imports

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contactimport"
	"github.com/brokerdesk/brokerdesk/ent/contactimportrow"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// blobPrefix is where import files are stored: <prefix>/<company>/….
const blobPrefix = "imports"

// storeFile streams r into a new blob of the company.
func (s *Service) storeFile(ctx context.Context, r io.Reader) (blobstore.Stored, error) {
	return blobstore.StorePinned(ctx, s.m.d.Bucket, blobPrefix, "contact import", r)
}

// deleteFile removes a stored file that did not become an import.
func (s *Service) deleteFile(ctx context.Context, f blobstore.Stored) {
	blobstore.Discard(ctx, s.m.d.Bucket, f)
}

// Create records the import of a stored file and its analysis job in one transaction. Before,
// it reads the file's header (a file that is not what its first bytes said, a workbook without
// sheet, is 422 now, not a failed import later) and checks a given mapping against it: a
// column the header lacks or a field key no contact has is 422. It runs without a request
// transaction (the upload route holds none while the file streams in).
func (s *Service) Create(ctx context.Context, in NewImport, format string, file blobstore.Stored) (*ent.ContactImport, error) {
	company, ok := tenancy.CompanyID(ctx)
	if !ok {
		return nil, tenancy.ErrNoCompany
	}
	if format == FormatXLSX && file.Size > MaxXLSX {
		return nil, errs.InvalidField("file", "too_large", fmt.Sprintf("an Excel workbook may have at most %d MiB: save it as CSV (up to %d MiB)",
			MaxXLSX>>20, MaxUpload>>20))
	}
	header, err := s.header(ctx, format, file.Key)
	if err != nil {
		return nil, err
	}
	if in.Mapping != nil {
		var v errs.Invalid
		checkMapping(&v, in.Mapping, header, in.ContactType)
		if err := v.Err(); err != nil {
			return nil, err
		}
	}
	var im *ent.ContactImport
	now := s.m.d.Now().UTC().Truncate(time.Microsecond)
	err = s.m.rowTx.Run(context.WithoutCancel(ctx), func(ctx context.Context, db *ent.Client, insert func(river.JobArgs) error) error {
		if in.OwnerID != nil {
			ok, err := db.User.Query().Where(user.ID(*in.OwnerID)).Exist(ctx)
			if err != nil {
				return fmt.Errorf("read import owner: %w", err)
			}
			if !ok {
				return errs.InvalidField("ownerId", "unknown_user", "is not a user of this company (see GET /users)")
			}
		}
		q := db.ContactImport.Create().SetCreatedAt(now).SetUpdatedAt(now).
			SetFormat(contactimport.Format(format)).SetContactType(contactimport.ContactType(in.ContactType)).
			SetFilename(nonEmpty(in.Filename, "import")).SetSize(file.Size).SetSha256(file.SHA256).SetBlobKey(file.Key).
			SetHeaders(header).SetTags(in.Tags).SetNillableOwnerID(in.OwnerID).SetCounts(map[string]int{})
		if in.Mapping != nil {
			q.SetMapping(in.Mapping)
		}
		p, _ := tenancy.PrincipalFrom(ctx)
		if p != nil && p.HasUser() {
			q.SetCreatorID(p.UserID)
		}
		var err error
		if im, err = q.Save(ctx); err != nil {
			return fmt.Errorf("store contact import: %w", err)
		}
		if err := insert(argsOf(company, im.ID, false, p)); err != nil {
			return fmt.Errorf("queue contact import: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return im, nil
}

// header reads the header row of a stored file; a file that is not readable as its format is
// 422 naming why.
func (s *Service) header(ctx context.Context, format, key string) ([]string, error) {
	r, err := s.m.d.Bucket.NewReader(ctx, key, nil)
	if err != nil {
		return nil, fmt.Errorf("open import file: %w", err)
	}
	defer r.Close()
	t, err := openTable(format, r)
	if errors.Is(err, errUnreadable) {
		return nil, errs.InvalidField("file", "unreadable", detail(err))
	}
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return t.Header, nil
}

// detail is the message of an errUnreadable error without its prefix.
func detail(err error) string {
	msg := err.Error()
	if p := errUnreadable.Error() + ": "; len(msg) > len(p) && msg[:len(p)] == p {
		return msg[len(p):]
	}
	return msg
}

// ListFilter narrows GET /imports.
type ListFilter struct{ Status *string }

var importsOldestFirst = paging.ByCreated(func(im *ent.ContactImport) (time.Time, uuid.UUID) { return im.CreatedAt, im.ID })

// List returns a page of the imports the caller sees (its own, or all for a company key, an
// admin or a manager), oldest first.
func (s *Service) List(ctx context.Context, f ListFilter, page paging.Page) ([]*ent.ContactImport, error) {
	return importsOldestFirst.Rows(page, "contact imports", func(k paging.Query) ([]*ent.ContactImport, error) {
		return tenancy.Client(ctx).ContactImport.Query().Where(paging.Enum(f.Status, contactimport.StatusEQ)...).
			Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	})
}

// Get reads one import; another company's, or one the caller may not see, is not found.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (*ent.ContactImport, error) {
	im, err := tenancy.Client(ctx).ContactImport.Get(ctx, id)
	if err != nil {
		return nil, errs.FromEnt(err, "import %s", id)
	}
	return im, nil
}

// RowFilter narrows GET /imports/{importId}/rows.
type RowFilter struct {
	ImportID          uuid.UUID
	Outcome, Analysis *string
}

var rowsInFileOrder = paging.Keyset[*ent.ContactImportRow]{Column: contactimportrow.FieldRow, Kind: paging.Int,
	Value: func(r *ent.ContactImportRow) (any, uuid.UUID) { return int64(r.Row), r.ID }}

// Rows returns a page of an import's rows in file order (404 for an import the caller does
// not see).
func (s *Service) Rows(ctx context.Context, f RowFilter, page paging.Page) ([]*ent.ContactImportRow, error) {
	if _, err := s.Get(ctx, f.ImportID); err != nil {
		return nil, err
	}
	return rowsInFileOrder.Rows(page, "import rows", func(k paging.Query) ([]*ent.ContactImportRow, error) {
		return tenancy.Client(ctx).ContactImportRow.Query().Where(contactimportrow.ImportID(f.ImportID)).
			Where(paging.Enum(f.Outcome, contactimportrow.OutcomeEQ)...).
			Where(paging.Enum(f.Analysis, contactimportrow.AnalysisEQ)...).
			Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	})
}

// Commit starts the commit of an analyzed import: it becomes running with the duplicates
// policy (default skip) and its job is queued, in one transaction. Any other status is 409:
// not analyzed yet (queued, analyzing), failed, or committed already (running, completed); a
// second commit is refused rather than answered as the first, so a client never believes a
// different duplicates policy was applied (docs/decisions/imports.md).
func (s *Service) Commit(ctx context.Context, id uuid.UUID, in CommitInput) (*ent.ContactImport, error) {
	im, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := commitConflict(im.Status); err != nil {
		return nil, err
	}
	policy := contactimport.DuplicatesSkip
	if in.Duplicates != nil {
		policy = contactimport.Duplicates(*in.Duplicates)
	}
	moved := false
	p, _ := tenancy.PrincipalFrom(ctx)
	err = s.m.rowTx.Run(context.WithoutCancel(ctx), func(ctx context.Context, db *ent.Client, insert func(river.JobArgs) error) error {
		// Only an analyzed import moves: of two concurrent commits one wins, the other is 409.
		n, err := db.ContactImport.Update().Where(contactimport.ID(id), contactimport.StatusEQ(contactimport.StatusAnalyzed)).
			SetStatus(contactimport.StatusRunning).SetDuplicates(policy).SetCommittedAt(s.m.d.Now()).Save(ctx)
		if err != nil {
			return fmt.Errorf("commit contact import %s: %w", id, err)
		}
		if moved = n == 1; !moved {
			return nil
		}
		return insert(argsOf(im.CompanyID, id, true, p))
	})
	if err != nil {
		return nil, err
	}
	if im, err = s.Get(ctx, id); err != nil {
		return nil, err
	}
	if !moved {
		return nil, commitConflict(im.Status)
	}
	return im, nil
}

// commitConflict is the 409 of a commit of an import in status st, nil for analyzed.
func commitConflict(st contactimport.Status) error {
	switch st {
	case contactimport.StatusAnalyzed:
		return nil
	case contactimport.StatusRunning, contactimport.StatusCompleted:
		return errs.Conflict("import_committed", "the import is %s: it was committed already", st)
	}
	return errs.Conflict("import_not_analyzed", "the import is %s: only an analyzed import can be committed", st)
}
