// Package advice serves /advice-records: IDD consultation documentation (§ 61, § 62 VVG) of a
// contact, its protocol PDF rendered from the company's advice_protocol template, locked once
// a signature request holding that protocol completed.
package advice

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/doctemplates"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/linked"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/advicerecord"
	"github.com/brokerdesk/brokerdesk/ent/contract"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Service runs the advice record use cases for the company pinned in ctx, in the request's
// transaction (LockSigned in the transaction that completes a signature request).
type Service struct {
	events    *events.Service
	templates *doctemplates.Service
	now       func() time.Time
}

// NewService returns the service; the protocol is rendered through tpl. now is the clock
// (time.Now outside tests).
func NewService(ev *events.Service, tpl *doctemplates.Service, now func() time.Time) *Service {
	return &Service{events: ev, templates: tpl, now: now}
}

// codeLocked is the 409 of every change to a locked record.
const codeLocked = "advice_record_locked"

func lockedErr(a *ent.AdviceRecord) error {
	return errs.Conflict(codeLocked, "advice record %s is locked: its protocol was signed on %s", a.ID,
		a.LockedAt.UTC().Format(time.RFC3339))
}

// Get reads one record. A record of another company, or of a contact the caller may not see,
// is not found.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (*ent.AdviceRecord, error) {
	a, err := tenancy.Client(ctx).AdviceRecord.Get(ctx, id)
	return a, errs.FromEnt(err, "advice record %s", id)
}

// Lock reads one record and locks its row to the end of the transaction.
func (s *Service) Lock(ctx context.Context, id uuid.UUID) (*ent.AdviceRecord, error) {
	a, err := tenancy.Client(ctx).AdviceRecord.Query().Where(advicerecord.ID(id)).ForUpdate().Only(ctx)
	return a, errs.FromEnt(err, "advice record %s", id)
}

// checkRecord answers 422 naming each of contactId, contractId and advisorId that names no
// record the caller sees (a contract must be one of the contact's), and consultedAt when it
// lies more than FutureSkew ahead: a protocol documents a consultation that took place. A PATCH
// passes the stored record as prev: what the patch leaves as it was is not checked again (the
// contact was read with the record, a contract moved to another contact since or an advisor's
// consultation time checked against an earlier clock do not block an edit of the notes).
func (s *Service) checkRecord(ctx context.Context, r record, prev *record) error {
	var v errs.Invalid
	contact, advisor, contractChanged, timeChanged := &r.contactID, r.advisorID, true, true
	if prev != nil {
		contact = nil
		if equalID(prev.advisorID, r.advisorID) {
			advisor = nil
		}
		contractChanged = !equalID(prev.contractID, r.contractID)
		timeChanged = !prev.consultedAt.Equal(r.consultedAt)
	}
	if err := linked.Check(ctx, &v, linked.Contact("contactId", contact), linked.User("advisorId", advisor)); err != nil {
		return err
	}
	if r.contractID != nil && contractChanged {
		ok, err := tenancy.Client(ctx).Contract.Query().
			Where(contract.ID(*r.contractID), contract.ContactID(r.contactID)).Exist(ctx)
		if err != nil {
			return fmt.Errorf("check contract %s: %w", *r.contractID, err)
		}
		v.Check("contractId", ok, "unknown_contract", "is not a contract of contact "+r.contactID.String())
	}
	if timeChanged {
		v.Check("consultedAt", !r.consultedAt.After(s.now().Add(FutureSkew)), "in_future",
			"must not lie in the future: the record documents a consultation that took place")
	}
	return v.Err()
}

func equalID(a, b *uuid.UUID) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// apply writes the fields of r but the contact (immutable) to m.
func apply(m *ent.AdviceRecordMutation, r record) {
	if r.contractID != nil {
		m.SetContractID(*r.contractID)
	} else {
		m.ClearContractID()
	}
	if r.advisorID != nil {
		m.SetAdvisorID(*r.advisorID)
	} else {
		m.ClearAdvisorID()
	}
	m.SetConsultedAt(r.consultedAt)
	m.SetChannel(advicerecord.Channel(r.channel))
	m.SetSubject(r.subject)
	m.SetCustomerWishes(r.wishes)
	m.SetCustomerNeeds(r.needs)
	m.SetAdvice(r.advice)
	m.SetReasons(r.reasons)
	m.SetProducts(r.products)
	m.SetAdviceWaived(r.waived)
	m.SetNotes(r.notes)
}

// Create stores a draft record and records advice_record.created. The creator is the
// credential's user, who is also the advisor unless advisorId names another.
func (s *Service) Create(ctx context.Context, in Input) (*ent.AdviceRecord, error) {
	r := recordOf(in)
	if r.advisorID == nil {
		r.advisorID = tenancy.ActingUser(ctx)
	}
	if err := s.checkRecord(ctx, r, nil); err != nil {
		return nil, err
	}
	q := tenancy.Client(ctx).AdviceRecord.Create().SetContactID(r.contactID).SetNillableCreatorID(tenancy.ActingUser(ctx))
	apply(q.Mutation(), r)
	a, err := q.Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("create advice record: %w", err)
	}
	if err := s.events.Record(ctx, "advice_record.created", NewView(a)); err != nil {
		return nil, err
	}
	return a, nil
}

// Update replaces the fields of a (locked by Lock) with in, the merged AdviceRecordInput of a
// PATCH, and records advice_record.updated. A locked record is 409. A patch that changes
// nothing records nothing. A change clears documentId: the protocol rendered before no longer
// describes the record, so signing it must not lock the record (render it again).
func (s *Service) Update(ctx context.Context, a *ent.AdviceRecord, in Input) (*ent.AdviceRecord, error) {
	if a.Status == advicerecord.StatusLocked {
		return nil, lockedErr(a)
	}
	r, prev := recordOf(in), recordOf(inputOf(a))
	if same(prev, r) {
		return a, nil
	}
	if err := s.checkRecord(ctx, r, &prev); err != nil {
		return nil, err
	}
	q := tenancy.Client(ctx).AdviceRecord.UpdateOne(a).ClearDocumentID()
	apply(q.Mutation(), r)
	out, err := q.Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("update advice record %s: %w", a.ID, err)
	}
	if err := s.events.Record(ctx, "advice_record.updated", NewView(out)); err != nil {
		return nil, err
	}
	return out, nil
}

// same reports whether two records store the same: times to the microsecond PostgreSQL keeps,
// amounts by value, no products like an empty list.
func same(x, y record) bool {
	px, _ := json.Marshal(x.products)
	py, _ := json.Marshal(y.products)
	tx, ty := x.consultedAt.Truncate(time.Microsecond), y.consultedAt.Truncate(time.Microsecond)
	x.products, y.products, x.consultedAt, y.consultedAt = nil, nil, time.Time{}, time.Time{}
	return reflect.DeepEqual(x, y) && tx.Equal(ty) && bytes.Equal(px, py)
}

// RenderDocument renders the protocol of record id (locked by the row; a locked record is
// 409) from the company's advice_protocol template, files it with the contact as an
// advice_documentation document, makes it the record's documentId and records
// advice_record.updated.
func (s *Service) RenderDocument(ctx context.Context, id uuid.UUID) (*ent.Document, error) {
	a, err := s.Lock(ctx, id)
	if err != nil {
		return nil, err
	}
	if a.Status == advicerecord.StatusLocked {
		return nil, lockedErr(a)
	}
	advisor := ""
	if a.AdvisorID != nil {
		u, err := tenancy.Client(ctx).User.Get(ctx, *a.AdvisorID)
		if err != nil && !ent.IsNotFound(err) {
			return nil, fmt.Errorf("read advisor of advice record %s: %w", a.ID, err)
		}
		if u != nil {
			advisor = strings.TrimSpace(u.FirstName + " " + u.LastName)
		}
	}
	d, err := s.templates.GenerateFromCategory(ctx, ProtocolCategory, a.ContactID, a.ContractID,
		protocolValues(a, advisor), protocolFilename(a), ProtocolDocType)
	if err != nil {
		return nil, err
	}
	out, err := tenancy.Client(ctx).AdviceRecord.UpdateOne(a).SetDocumentID(d.ID).Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("set protocol of advice record %s: %w", a.ID, err)
	}
	if err := s.events.Record(ctx, "advice_record.updated", NewView(out)); err != nil {
		return nil, err
	}
	return d, nil
}

// LockSigned locks the advice records whose protocol is among the documents of the completed
// signature request r; it runs in the transaction that completes r (signatures.OnCompleted).
// Only drafts of r's contact whose current documentId was signed lock: a protocol rendered
// before the record last changed no longer names it. Records advice_record.locked per record.
func (s *Service) LockSigned(ctx context.Context, r *ent.SignatureRequest) error {
	var docs []uuid.UUID
	for _, d := range r.Documents {
		if d.DocumentID != nil {
			docs = append(docs, *d.DocumentID)
		}
	}
	if len(docs) == 0 {
		return nil
	}
	db := tenancy.Client(ctx)
	rows, err := db.AdviceRecord.Query().Where(advicerecord.ContactID(r.ContactID), advicerecord.StatusEQ(advicerecord.StatusDraft),
		advicerecord.DocumentIDIn(docs...)).ForUpdate().All(ctx)
	if err != nil {
		return fmt.Errorf("read advice records of signature request %s: %w", r.ID, err)
	}
	now := s.now()
	for _, a := range rows {
		out, err := db.AdviceRecord.UpdateOne(a).SetStatus(advicerecord.StatusLocked).SetLockedAt(now).Save(ctx)
		if err != nil {
			return fmt.Errorf("lock advice record %s: %w", a.ID, err)
		}
		if err := s.events.Record(ctx, "advice_record.locked", NewView(out)); err != nil {
			return err
		}
	}
	return nil
}
