package leads

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/extref"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/app/platform/linked"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/lead"
	"github.com/brokerdesk/brokerdesk/ent/leadattachment"
	"github.com/brokerdesk/brokerdesk/ent/leadstage"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Stage keys every company has (operator.DefaultStages).
const (
	StageNew       = "new"
	StageConverted = "converted"
)

// refResource is the resource name of leads in the external_refs lookup table.
const refResource = "lead"

// Service runs the lead use cases for the company pinned in ctx, each in the request's
// transaction (tenancy.Client).
type Service struct {
	events   *events.Service
	contacts *contacts.Service
	now      func() time.Time
}

// NewService returns the service. now is the clock (time.Now outside tests).
func NewService(ev *events.Service, ct *contacts.Service, now func() time.Time) *Service {
	return &Service{events: ev, contacts: ct, now: now}
}

// Lead is a stored lead with its attachments (content not loaded).
type Lead struct {
	*ent.Lead
	Attachments []*ent.LeadAttachment
}

// View is the Lead resource of l.
func (l Lead) View() View { return NewView(l.Lead, l.Attachments) }

// withoutContent loads a lead's attachments through the edge without their content, oldest
// first: what the Lead resource lists.
func withoutContent(q *ent.LeadAttachmentQuery) {
	q.Select(leadattachment.FieldID, leadattachment.FieldLeadID, leadattachment.FieldContactID,
		leadattachment.FieldFilename, leadattachment.FieldContentType, leadattachment.FieldSize,
		leadattachment.FieldCreatedAt).
		Order(ent.Asc(leadattachment.FieldCreatedAt), ent.Asc(leadattachment.FieldID))
}

// withAttachments is l with its attachments (content not loaded).
func withAttachments(ctx context.Context, l *ent.Lead) (Lead, error) {
	q := l.QueryAttachments()
	withoutContent(q)
	atts, err := q.All(ctx)
	if err != nil {
		return Lead{}, fmt.Errorf("load attachments of lead %s: %w", l.ID, err)
	}
	return Lead{Lead: l, Attachments: atts}, nil
}

// Get reads one lead with its attachments. Another company's lead is not found.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (Lead, error) {
	l, err := tenancy.Client(ctx).Lead.Query().Where(lead.ID(id)).WithAttachments(withoutContent).Only(ctx)
	if err != nil {
		return Lead{}, errs.FromEnt(err, "lead %s", id)
	}
	return Lead{Lead: l, Attachments: l.Edges.Attachments}, nil
}

// Lock reads one lead and locks its row to the end of the transaction, so that a check of its
// version (If-Match) or state holds until the change commits.
func (s *Service) Lock(ctx context.Context, id uuid.UUID) (*ent.Lead, error) {
	l, err := tenancy.Client(ctx).Lead.Query().Where(lead.ID(id)).ForUpdate().Only(ctx)
	return l, errs.FromEnt(err, "lead %s", id)
}

// Create stores a lead (in the stage new unless in names one) and records lead.created.
// Server-side creation never merges into a duplicate: that is the intake's job.
func (s *Service) Create(ctx context.Context, in Input) (Lead, error) {
	return s.create(ctx, in, lead.OriginAPI)
}

// create stores a lead that came to be through origin (api or external). Without an ownerId
// a user-bound credential's lead is its user's, as a contact is (issue 20 B: an agent's lead
// with no owner was visible to "all" only, so the agent lost it at once); a company-level
// credential's lead stays unassigned, on the board of the office.
func (s *Service) create(ctx context.Context, in Input, origin lead.Origin) (Lead, error) {
	stage, owner, err := s.resolve(ctx, in, nil)
	if err != nil {
		return Lead{}, err
	}
	if p, ok := tenancy.PrincipalFrom(ctx); ok && owner == nil && p.HasUser() {
		id := p.UserID
		owner = &id
	}
	if err := refsFree(ctx, in.ExternalReferences, uuid.Nil); err != nil {
		return Lead{}, err
	}
	q := tenancy.Client(ctx).Lead.Create().SetStageID(stage.ID).SetNillableOwnerID(owner).SetOrigin(origin)
	applyData(q.Mutation(), in)
	if len(in.ExternalReferences) > 0 {
		q.SetExternalReferences(in.ExternalReferences)
	}
	var l *ent.Lead
	// A lead created for another owner need not be visible to its creator (an agent's key).
	err = tenancy.HandOver(ctx, func() (err error) { l, err = q.Save(ctx); return err })
	if err != nil {
		return Lead{}, fmt.Errorf("create lead: %w", err)
	}
	out := Lead{Lead: l}
	if err := s.events.Record(ctx, "lead.created", out.View()); err != nil {
		return Lead{}, err
	}
	return out, nil
}

// applyData writes the data fields of in (names, e-mail, phone, source, notes, additional
// fields) to m; a nil field is cleared.
func applyData(m *ent.LeadMutation, in Input) {
	m.SetFirstName(trim(in.FirstName))
	m.SetLastName(trim(in.LastName))
	if in.Email != nil {
		m.SetEmail(strings.TrimSpace(*in.Email))
		m.SetEmailKey(identity.EmailKey(*in.Email))
	} else {
		m.ClearEmail()
		m.ClearEmailKey()
	}
	if in.Phone != nil {
		key, _ := identity.PhoneKey(*in.Phone)
		m.SetPhone(strings.TrimSpace(*in.Phone))
		m.SetPhoneKey(key)
	} else {
		m.ClearPhone()
		m.ClearPhoneKey()
	}
	if in.Source != nil {
		m.SetSource(lead.Source(*in.Source))
	} else {
		m.ClearSource()
	}
	m.SetNotes(ptr.Deref(in.Notes))
	af := in.AdditionalFields
	if af == nil {
		af = map[string]string{}
	}
	m.SetAdditionalFields(af)
}

func trim(s *string) string { return strings.TrimSpace(ptr.Deref(s)) }

// resolve checks the stage and owner in names and returns them: the stage in.StageID or, when
// it is nil, the lead's current stage (cur) or the stage new. Unknown ids are 422 naming the
// field; an unconverted lead reaches the stage converted only by converting (422
// conversion_required).
func (s *Service) resolve(ctx context.Context, in Input, cur *ent.Lead) (*ent.LeadStage, *uuid.UUID, error) {
	db := tenancy.Client(ctx)
	var v errs.Invalid
	var stage *ent.LeadStage
	var err error
	switch {
	case in.StageID != nil:
		stage, err = db.LeadStage.Query().Where(leadstage.ID(uuid.MustParse(*in.StageID))).Only(ctx)
		if ent.IsNotFound(err) {
			v.Add("stageId", "unknown_stage", "is not a lead stage of this company (see GET /lead-stages)")
		}
	case cur != nil:
		stage, err = db.LeadStage.Get(ctx, cur.StageID)
	default:
		stage, err = db.LeadStage.Query().Where(leadstage.Key(StageNew)).Only(ctx)
	}
	if err != nil && !ent.IsNotFound(err) {
		return nil, nil, fmt.Errorf("read lead stage: %w", err)
	}
	// The stage converted means a contact exists for the lead: only convert puts an unconverted
	// lead there (a converted lead may leave it and come back).
	movesToConverted := stage != nil && stage.Key == StageConverted && (cur == nil || !cur.Converted)
	v.Check("stageId", !movesToConverted, "conversion_required",
		"a lead reaches the stage converted only by POST /leads/{leadId}/convert")
	var owner *uuid.UUID
	if in.OwnerID != nil {
		id := uuid.MustParse(*in.OwnerID)
		if err := linked.Check(ctx, &v, linked.User("ownerId", &id)); err != nil {
			return nil, nil, err
		}
		owner = &id
	}
	if err := v.Err(); err != nil {
		return nil, nil, err
	}
	return stage, owner, nil
}

// refsFree returns 409 external_reference_taken when another lead than self carries one of
// refs (extref.Free).
func refsFree(ctx context.Context, refs []schematype.ExternalRef, self uuid.UUID) error {
	return extref.Free(ctx, refResource, refs, self)
}

// Update replaces the writable fields of l (locked by Lock) with in, the merged LeadInput of a
// PATCH, and records lead.updated. A patch that changes nothing changes neither version nor
// updatedAt and records no event. Any stage of the company may be given (the spec's "stage
// exists"), except converted for a lead no conversion made a contact of (422).
func (s *Service) Update(ctx context.Context, l *ent.Lead, in Input) (Lead, error) {
	if reflect.DeepEqual(normalized(inputOf(l)), normalized(in)) {
		return withAttachments(ctx, l)
	}
	stage, owner, err := s.resolve(ctx, in, l)
	if err != nil {
		return Lead{}, err
	}
	if err := refsFree(ctx, in.ExternalReferences, l.ID); err != nil {
		return Lead{}, err
	}
	u := l.Update().SetStageID(stage.ID)
	applyData(u.Mutation(), in)
	if owner != nil {
		u.SetOwnerID(*owner)
	} else {
		u.ClearOwnerID()
	}
	if !reflect.DeepEqual(normalizedRefs(in.ExternalReferences), normalizedRefs(l.ExternalReferences)) {
		if len(in.ExternalReferences) > 0 {
			u.SetExternalReferences(in.ExternalReferences)
		} else {
			u.ClearExternalReferences()
		}
	}
	// l was read through the visibility layer (Lock); giving it to another owner may make it
	// invisible to the caller, which is allowed, and the answer still shows it once.
	var saved *ent.Lead
	err = tenancy.HandOver(ctx, func() (err error) { saved, err = u.Save(ctx); return err })
	if err != nil {
		return Lead{}, fmt.Errorf("update lead %s: %w", l.ID, err)
	}
	return s.recorded(ctx, "lead.updated", saved)
}

// recorded is l, just written, with its attachments, after recording event typ about it.
func (s *Service) recorded(ctx context.Context, typ string, l *ent.Lead) (Lead, error) {
	out, err := withAttachments(ctx, l)
	if err != nil {
		return Lead{}, err
	}
	if err := s.events.Record(ctx, typ, out.View()); err != nil {
		return Lead{}, err
	}
	return out, nil
}

// normalized is in as it would be stored, for telling whether a change changes anything.
func normalized(in Input) Input {
	t := func(s *string) *string {
		if s == nil {
			return nil
		}
		v := strings.TrimSpace(*s)
		return &v
	}
	out := Input{FirstName: t(in.FirstName), LastName: t(in.LastName), Email: t(in.Email), Phone: t(in.Phone),
		Source: in.Source, Notes: in.Notes, OwnerID: in.OwnerID, StageID: in.StageID,
		ExternalReferences: normalizedRefs(in.ExternalReferences)}
	if ptr.Deref(out.FirstName) == "" {
		out.FirstName = nil
	}
	if ptr.Deref(out.LastName) == "" {
		out.LastName = nil
	}
	if ptr.Deref(out.Notes) == "" {
		out.Notes = nil
	}
	if len(in.AdditionalFields) > 0 {
		out.AdditionalFields = in.AdditionalFields
	}
	if out.OwnerID != nil {
		id := uuid.MustParse(*out.OwnerID).String()
		out.OwnerID = &id
	}
	if out.StageID != nil {
		id := uuid.MustParse(*out.StageID).String()
		out.StageID = &id
	}
	return out
}

func normalizedRefs(refs []schematype.ExternalRef) []schematype.ExternalRef {
	if len(refs) == 0 {
		return nil
	}
	return refs
}

// Delete removes l (locked by Lock) and records lead.deleted with the lead as it was. Its
// attachments go with it, except those a conversion gave to a contact: they stay the
// contact's (the database clears their lead_id; migrations/…_lead_origin_attachments_keys.sql).
func (s *Service) Delete(ctx context.Context, l *ent.Lead) error {
	full, err := withAttachments(ctx, l)
	if err != nil {
		return err
	}
	if err := tenancy.Client(ctx).Lead.DeleteOne(l).Exec(ctx); err != nil {
		return fmt.Errorf("delete lead %s: %w", l.ID, err)
	}
	return s.events.Record(ctx, "lead.deleted", full.View())
}

// MaxTestDelete is how many test leads one DELETE /leads?test=true removes; hasMore says
// whether to call again.
const MaxTestDelete = 500

// TestDeletion is what one DeleteTest did: how many test leads it removed, and whether more
// remain.
type TestDeletion struct {
	Deleted int
	More    bool
}

// DeleteTest removes up to MaxTestDelete test leads, oldest first, each with its lead.deleted
// event, and reports how many and whether more remain. Attachments a contact holds stay, as with
// Delete.
func (s *Service) DeleteTest(ctx context.Context) (TestDeletion, error) {
	db := tenancy.Client(ctx)
	rows, err := db.Lead.Query().Where(lead.Test(true)).WithAttachments(withoutContent).
		Order(ent.Asc(lead.FieldCreatedAt), ent.Asc(lead.FieldID)).Limit(MaxTestDelete + 1).ForUpdate().All(ctx)
	if err != nil {
		return TestDeletion{}, fmt.Errorf("find test leads: %w", err)
	}
	more := len(rows) > MaxTestDelete
	if more {
		rows = rows[:MaxTestDelete]
	}
	for _, l := range rows {
		// One by one: DeleteOne runs the hook that frees the lead's external references.
		if err := db.Lead.DeleteOne(l).Exec(ctx); err != nil {
			return TestDeletion{}, fmt.Errorf("delete test lead %s: %w", l.ID, err)
		}
		if err := s.events.Record(ctx, "lead.deleted", NewView(l, l.Edges.Attachments)); err != nil {
			return TestDeletion{}, err
		}
	}
	return TestDeletion{Deleted: len(rows), More: more}, nil
}
