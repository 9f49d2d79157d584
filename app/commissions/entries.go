package commissions

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/commissionentry"
	"github.com/brokerdesk/brokerdesk/ent/contract"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// listEntries handles GET /commission-entries: Paged, oldest first; query contactId,
// statementId, contractId, type, matched, bookedFrom, bookedTo. Row-level security shows a
// matched entry to who sees its contact and an unmatched one to every commissions reader.
func (h *Handler) listEntries(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "commission-entries", parseEntryFilter, h.svc.ListEntries,
		entriesOldestFirst, NewEntryView)
}

// parseEntryFilter reads the query of GET /commission-entries.
func parseEntryFilter(c *fiber.Ctx, v *errs.Invalid) (f EntryFilter, _ error) {
	f.ContactID = httpx.QueryUUID(c, v, "contactId")
	f.StatementID = httpx.QueryUUID(c, v, "statementId")
	f.ContractID = httpx.QueryUUID(c, v, "contractId")
	f.Type = httpx.QueryEnum(c, v, "type", schema.CommissionEntryTypes)
	f.Matched = httpx.QueryBool(c, v, "matched")
	f.BookedFrom, f.BookedTo = httpx.QueryDate(c, v, "bookedFrom"), httpx.QueryDate(c, v, "bookedTo")
	if f.BookedFrom != nil && f.BookedTo != nil && f.BookedTo.Before(*f.BookedFrom) {
		v.Add("bookedTo", "invalid_range", "must not be before bookedFrom")
	}
	return f, nil
}

// patchEntry handles PATCH /commission-entries/{entryId}: a merge patch of {contractId, note};
// If-Match optional.
func (h *Handler) patchEntry(c *fiber.Ctx) error {
	return httpx.Patch[uuid.UUID, *ent.CommissionEntry, EntryPatch]{Key: httpx.PathID("entryId"),
		Lock: h.svc.LockEntry, Version: func(e *ent.CommissionEntry) int64 { return e.Version },
		Input: entryPatchOf, Update: h.svc.UpdateEntry, View: httpx.View(NewEntryView)}.Handle(c)
}

func entryPatchOf(e *ent.CommissionEntry) EntryPatch {
	p := EntryPatch{Note: e.Note}
	if e.ContractID != nil {
		s := e.ContractID.String()
		p.ContractID = &s
	}
	return p
}

// EntryFilter narrows GET /commission-entries. Nil fields do not filter; the booking dates
// are inclusive.
type EntryFilter struct {
	ContactID, StatementID, ContractID *uuid.UUID
	Type                               *string
	Matched                            *bool
	BookedFrom, BookedTo               *time.Time
}

var entriesOldestFirst = paging.ByCreated(func(e *ent.CommissionEntry) (time.Time, uuid.UUID) { return e.CreatedAt, e.ID })

// ListEntries returns a page of the entries matching f that the request may see, oldest first.
func (s *Service) ListEntries(ctx context.Context, f EntryFilter, page paging.Page) ([]*ent.CommissionEntry, error) {
	return entriesOldestFirst.Rows(page, "commission entries", func(k paging.Query) ([]*ent.CommissionEntry, error) {
		q := tenancy.Client(ctx).CommissionEntry.Query().
			Where(paging.If(f.ContactID, commissionentry.ContactID)...).
			Where(paging.If(f.StatementID, commissionentry.StatementID)...).
			Where(paging.If(f.ContractID, commissionentry.ContractID)...).
			Where(paging.Enum(f.Type, commissionentry.TypeEQ)...).
			Where(paging.If(f.BookedFrom, commissionentry.BookedOnGTE)...).
			Where(paging.If(f.BookedTo, commissionentry.BookedOnLTE)...)
		if f.Matched != nil {
			if *f.Matched {
				q.Where(commissionentry.ContractIDNotNil())
			} else {
				q.Where(commissionentry.ContractIDIsNil())
			}
		}
		return q.Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	})
}

// LockEntry reads one entry the request may see FOR UPDATE; any other is not found.
func (s *Service) LockEntry(ctx context.Context, id uuid.UUID) (*ent.CommissionEntry, error) {
	e, err := tenancy.Client(ctx).CommissionEntry.Query().Where(commissionentry.ID(id)).ForUpdate().Only(ctx)
	if err != nil {
		return nil, errs.FromEnt(err, "commission entry %s", id)
	}
	return e, nil
}

// UpdateEntry links an entry to a contract by hand (matched_by manual), unlinks it (null) or
// sets its note. The contract must be one the request sees (else it could attach income to a
// contact it may not see, and learn that the id exists) and of the entry's insurer when the
// entry has one: 422 on contractId either way. An entry without insurer takes the contract's.
// The statement's matchedCount follows. A patch that changes nothing keeps the version and
// records nothing; otherwise commission_entry.updated, about the contact when linked.
func (s *Service) UpdateEntry(ctx context.Context, cur *ent.CommissionEntry, in EntryPatch) (*ent.CommissionEntry, error) {
	db := tenancy.Client(ctx)
	var want *uuid.UUID
	if in.ContractID != nil {
		id := uuid.MustParse(*in.ContractID) // Validate checked it
		want = &id
	}
	relinked := !equalUUID(want, cur.ContractID)
	if !relinked && equalPtr(in.Note, cur.Note) {
		return cur, nil
	}
	u := db.CommissionEntry.UpdateOne(cur)
	if in.Note != nil {
		u.SetNote(*in.Note)
	} else {
		u.ClearNote()
	}
	delta := 0
	if relinked {
		switch {
		case want == nil:
			u.ClearContractID().ClearContactID().ClearMatchedBy()
			delta = -1
		default:
			// FOR SHARE: the contract keeps its contact until the entry names both (the
			// composite key follows a later move by cascade).
			c, err := db.Contract.Query().Where(contract.ID(*want)).ForShare().Only(ctx)
			if ent.IsNotFound(err) {
				return nil, errs.InvalidField("contractId", "unknown_contract", "is not a contract you can see (see GET /contracts)")
			}
			if err != nil {
				return nil, errs.FromEnt(err, "contract %s", *want)
			}
			if cur.InsurerID != nil && *cur.InsurerID != c.InsurerID {
				return nil, errs.InvalidField("contractId", "insurer_mismatch",
					"is a contract of another insurer than the entry's statement")
			}
			u.SetContractID(c.ID).SetContactID(c.ContactID).SetMatchedBy(commissionentry.MatchedByManual)
			if cur.InsurerID == nil {
				u.SetInsurerID(c.InsurerID)
			}
			if cur.ContractID == nil {
				delta = 1
			}
		}
	}
	e, err := u.Save(ctx)
	if err != nil {
		return nil, errs.FromEnt(err, "commission entry %s", cur.ID)
	}
	if delta != 0 {
		if err := db.CommissionStatement.UpdateOneID(cur.StatementID).AddMatchedCount(delta).Exec(ctx); err != nil {
			return nil, errs.FromEnt(err, "commission statement %s", cur.StatementID)
		}
	}
	if err := s.m.d.Events.Record(ctx, "commission_entry.updated", NewEntryView(e)); err != nil {
		return nil, err
	}
	return e, nil
}

func equalUUID(a, b *uuid.UUID) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
