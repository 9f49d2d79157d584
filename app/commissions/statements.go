package commissions

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/commissionstatement"
	"github.com/brokerdesk/brokerdesk/ent/insurer"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// blobPrefix is where statement files are stored: <prefix>/<company>/….
const blobPrefix = "commissions"

// listStatements handles GET /commission-statements: Paged, oldest first; query insurerId,
// periodFrom, periodTo, status.
func (h *Handler) listStatements(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "commission-statements", parseStatementFilter, h.svc.ListStatements,
		statementsOldestFirst, NewStatementView)
}

// parseStatementFilter reads the query of GET /commission-statements.
func parseStatementFilter(c *fiber.Ctx, v *errs.Invalid) (f StatementFilter, _ error) {
	f.InsurerID = httpx.QueryUUID(c, v, "insurerId")
	f.PeriodFrom, f.PeriodTo = httpx.QueryDate(c, v, "periodFrom"), httpx.QueryDate(c, v, "periodTo")
	if f.PeriodFrom != nil && f.PeriodTo != nil && f.PeriodTo.Before(*f.PeriodFrom) {
		v.Add("periodTo", "invalid_range", "must not be before periodFrom")
	}
	f.Status = httpx.QueryEnum(c, v, "status", schema.CommissionStatementStatuses)
	return f, nil
}

// getStatement handles GET /commission-statements/{statementId}.
func (h *Handler) getStatement(c *fiber.Ctx) error {
	return httpx.Read[uuid.UUID, *ent.CommissionStatement]{Key: httpx.PathID("statementId"), Get: h.svc.GetStatement,
		Version: statementVersion, View: httpx.View(NewStatementView)}.Handle(c)
}

// patchStatement handles PATCH /commission-statements/{statementId}: a merge patch of
// {status, note}; If-Match optional.
func (h *Handler) patchStatement(c *fiber.Ctx) error {
	return httpx.Patch[uuid.UUID, *ent.CommissionStatement, StatementPatch]{Key: httpx.PathID("statementId"),
		Lock: h.svc.LockStatement, Version: statementVersion, Input: statementPatchOf,
		Update: h.svc.UpdateStatement, View: httpx.View(NewStatementView)}.Handle(c)
}

func statementVersion(s *ent.CommissionStatement) int64 { return s.Version }

func statementPatchOf(s *ent.CommissionStatement) StatementPatch {
	st := string(s.Status)
	return StatementPatch{Status: &st, Note: s.Note}
}

// createStatement handles POST /commission-statements (multipart/form-data): 202 with the
// queued statement. The body is streamed (httpx.BodyReader), never held whole: the file goes
// to blob storage as it arrives, the fields are checked once the body is read, and a refused
// request deletes the stored file (portfolio transfers' upload).
func (h *Handler) createStatement(c *fiber.Ctx) error {
	limit, ctx := h.svc.m.d.MaxUpload, c.UserContext()
	up, err := httpx.ReadUpload(c, limit, func() error { return tooLarge(limit) },
		func(r io.Reader) (blobstore.Stored, error) { return h.svc.storeFile(ctx, r) },
		func(f blobstore.Stored) { h.svc.deleteFile(ctx, f) })
	if err != nil {
		return err
	}
	in, err := parseStatement(up.Values, up.Files)
	if err != nil {
		h.svc.deleteFile(ctx, up.Stored)
		return err
	}
	in.Filename = up.Filename
	s, err := h.svc.CreateStatement(ctx, in, up.Stored)
	if err != nil {
		h.svc.deleteFile(ctx, up.Stored)
		return err
	}
	c.Set(fiber.HeaderLocation, httpx.URL("commission-statements", s.ID.String()))
	c.Set(fiber.HeaderETag, httpx.ETag(s.Version))
	return c.Status(fiber.StatusAccepted).JSON(NewStatementView(s))
}

func tooLarge(limit int64) error {
	return errs.TooLarge("payload_too_large", "the request is larger than the limit of %d MiB for statement files", limit>>20)
}

// storeFile streams r into a new blob of the company (blobstore.Store under commissions/).
func (s *Service) storeFile(ctx context.Context, r io.Reader) (blobstore.Stored, error) {
	return blobstore.StorePinned(ctx, s.m.d.Bucket, blobPrefix, "commission statement", r)
}

// deleteFile removes a stored file that did not become a statement.
func (s *Service) deleteFile(ctx context.Context, f blobstore.Stored) {
	blobstore.Discard(ctx, s.m.d.Bucket, f)
}

// CreateStatement records the statement of a file stored with storeFile and its parse job in
// one transaction, and commission_statement.created with them. It runs without a request
// transaction (the upload route holds none while the file streams in): the insurer check and
// the insert are short transactions of their own on the job pool.
func (s *Service) CreateStatement(ctx context.Context, in NewStatement, file blobstore.Stored) (*ent.CommissionStatement, error) {
	company, ok := tenancy.CompanyID(ctx)
	if !ok {
		return nil, tenancy.ErrNoCompany
	}
	if file.Size == 0 {
		return nil, errs.InvalidField("file", "empty", "the file is empty")
	}
	var st *ent.CommissionStatement
	now := s.m.d.Now().UTC().Truncate(time.Microsecond)
	err := s.m.rowTx.Run(context.WithoutCancel(ctx), func(ctx context.Context, db *ent.Client, insert func(river.JobArgs) error) error {
		if in.InsurerID != nil {
			// The catalog is global: the id must name one of its insurers (GET /insurers).
			ok, err := db.Insurer.Query().Where(insurer.ID(*in.InsurerID)).Exist(ctx)
			if err != nil {
				return fmt.Errorf("read statement insurer: %w", err)
			}
			if !ok {
				return errs.InvalidField("insurerId", "unknown_insurer", "is not an insurer of the catalog (see GET /insurers)")
			}
		}
		q := db.CommissionStatement.Create().SetCreatedAt(now).SetUpdatedAt(now).
			SetFormat(commissionstatement.Format(in.Format)).SetNillableInsurerID(in.InsurerID).
			SetFilename(nonEmpty(in.Filename, "statement")).SetSize(file.Size).SetSha256(file.SHA256).SetBlobKey(file.Key)
		if in.Mapping != nil {
			q.SetMapping(in.Mapping)
		}
		if p, ok := tenancy.PrincipalFrom(ctx); ok && p.HasUser() {
			q.SetCreatorID(p.UserID)
		}
		var err error
		if st, err = q.Save(ctx); err != nil {
			return fmt.Errorf("store commission statement: %w", err)
		}
		if err := insert(Args{CompanyID: company, StatementID: st.ID}); err != nil {
			return fmt.Errorf("queue commission statement: %w", err)
		}
		return s.m.d.Events.Record(ctx, "commission_statement.created", NewStatementView(st))
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

func nonEmpty(s, otherwise string) string {
	if strings.TrimSpace(s) == "" {
		return otherwise
	}
	return s
}

// StatementFilter narrows GET /commission-statements. Nil fields do not filter. The period
// bounds select statements whose period overlaps [PeriodFrom, PeriodTo].
type StatementFilter struct {
	InsurerID            *uuid.UUID
	PeriodFrom, PeriodTo *time.Time
	Status               *string
}

var statementsOldestFirst = paging.ByCreated(func(s *ent.CommissionStatement) (time.Time, uuid.UUID) { return s.CreatedAt, s.ID })

// ListStatements returns a page of the statements matching f, oldest first.
func (s *Service) ListStatements(ctx context.Context, f StatementFilter, page paging.Page) ([]*ent.CommissionStatement, error) {
	return statementsOldestFirst.Rows(page, "commission statements", func(k paging.Query) ([]*ent.CommissionStatement, error) {
		q := tenancy.Client(ctx).CommissionStatement.Query().
			Where(paging.Enum(f.Status, commissionstatement.StatusEQ)...).
			Where(paging.If(f.InsurerID, commissionstatement.InsurerID)...)
		// A statement overlaps the window when it ends on or after its start and starts on or
		// before its end; one without a period (not parsed yet, or empty) is left out.
		if f.PeriodFrom != nil {
			q.Where(commissionstatement.PeriodToGTE(*f.PeriodFrom))
		}
		if f.PeriodTo != nil {
			q.Where(commissionstatement.PeriodFromLTE(*f.PeriodTo))
		}
		return q.Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	})
}

// GetStatement reads one statement; another company's is not found.
func (s *Service) GetStatement(ctx context.Context, id uuid.UUID) (*ent.CommissionStatement, error) {
	st, err := tenancy.Client(ctx).CommissionStatement.Get(ctx, id)
	if err != nil {
		return nil, errs.FromEnt(err, "commission statement %s", id)
	}
	return st, nil
}

// LockStatement reads one statement FOR UPDATE in the request's transaction.
func (s *Service) LockStatement(ctx context.Context, id uuid.UUID) (*ent.CommissionStatement, error) {
	st, err := tenancy.Client(ctx).CommissionStatement.Query().Where(commissionstatement.ID(id)).ForUpdate().Only(ctx)
	if err != nil {
		return nil, errs.FromEnt(err, "commission statement %s", id)
	}
	return st, nil
}

// statusMoves are the status changes PATCH allows (docs/decisions/commissions.md "Statements
// and entries"): a received statement is reconciled or disputed; a dispute ends reconciled or
// back at received; a reconciled one may be disputed again (a claw-back found later), but not
// made received again, which would hide that it was checked.
var statusMoves = map[string][]string{
	"received":   {"reconciled", "disputed"},
	"disputed":   {"received", "reconciled"},
	"reconciled": {"disputed"},
}

// UpdateStatement applies a validated patch: the status (409 for a refused move, or while the
// file is not parsed: there is nothing to reconcile yet) and the note. A patch that changes
// nothing keeps the version and records nothing; otherwise commission_statement.updated.
func (s *Service) UpdateStatement(ctx context.Context, cur *ent.CommissionStatement, in StatementPatch) (*ent.CommissionStatement, error) {
	status := *in.Status
	moved := status != string(cur.Status)
	if moved {
		if cur.ImportStatus != commissionstatement.ImportStatusProcessed {
			return nil, errs.Conflict("statement_not_processed",
				"the statement's file is %s: its status changes once it is processed", cur.ImportStatus)
		}
		allowed := statusMoves[string(cur.Status)]
		ok := false
		for _, a := range allowed {
			ok = ok || a == status
		}
		if !ok {
			return nil, errs.Conflict("status_transition", "a %s statement cannot become %s (allowed: %s)",
				cur.Status, status, strings.Join(allowed, ", "))
		}
	}
	if !moved && equalPtr(in.Note, cur.Note) {
		return cur, nil
	}
	u := tenancy.Client(ctx).CommissionStatement.UpdateOne(cur).SetStatus(commissionstatement.Status(status))
	if in.Note != nil {
		u.SetNote(*in.Note)
	} else {
		u.ClearNote()
	}
	st, err := u.Save(ctx)
	if err != nil {
		return nil, errs.FromEnt(err, "commission statement %s", cur.ID)
	}
	if err := s.m.d.Events.Record(ctx, "commission_statement.updated", NewStatementView(st)); err != nil {
		return nil, err
	}
	return st, nil
}

func equalPtr(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
