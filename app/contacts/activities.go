package contacts

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/contactactivity"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Activity kinds, and the values of the activities filter that select them.
const (
	ActivityNote   = "note"
	ActivityEmail  = "email"
	ActivitySystem = "system"
)

// ActivityFilters maps the values of GET /contacts/{contactId}/activities?filter= to kinds.
var ActivityFilters = map[string]string{"notes": ActivityNote, "emails": ActivityEmail, "system": ActivitySystem}

// MaxNote is the longest note content (characters).
const MaxNote = 50000

// Activity is the Activity resource: one entry of a contact's timeline. Event names what a
// system entry records ("relationship.created"); Content is the note's text as entered (line
// breaks kept, markdown not rendered) or a system entry's one-line summary.
type Activity struct {
	ID                 uuid.UUID                `json:"id"`
	ContactID          uuid.UUID                `json:"contactId"`
	Type               string                   `json:"type"`
	Event              *string                  `json:"event"`
	Content            string                   `json:"content"`
	OccurredAt         time.Time                `json:"occurredAt"`
	AuthorID           *uuid.UUID               `json:"authorId"`
	ExternalReferences []schematype.ExternalRef `json:"externalReferences"`
	CreatedAt          time.Time                `json:"createdAt"`
	UpdatedAt          time.Time                `json:"updatedAt"`
	version            int64
	owner              *uuid.UUID
}

// EventAbout makes note events user-scoped by the contact and its owner at the time: the feed
// of an agent carries them while it may see the contact (or, after the contact was deleted,
// while it may see that owner's contacts).
func (a Activity) EventAbout() events.About {
	id := a.ContactID
	return events.About{ContactID: &id, OwnerID: a.owner, UserScoped: true}
}

// NewActivity is the Activity resource of a.
func NewActivity(a *ent.ContactActivity) Activity {
	v := Activity{ID: a.ID, ContactID: a.ContactID, Type: string(a.Kind), Content: a.Content,
		OccurredAt: a.OccurredAt, AuthorID: a.AuthorID, ExternalReferences: a.ExternalReferences,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt, version: a.Version}
	if a.Event != "" {
		e := a.Event
		v.Event = &e
	}
	if v.ExternalReferences == nil {
		v.ExternalReferences = []schematype.ExternalRef{}
	}
	return v
}

// Version is the note's version, for its ETag.
func (a Activity) Version() int64 { return a.version }

// NoteBody is the body of POST /contacts/{contactId}/notes and PATCH .../notes/{noteId}
// (there only content).
type NoteBody struct {
	Content            *string                  `json:"content"`
	OccurredAt         *string                  `json:"occurredAt"`
	ExternalReferences []schematype.ExternalRef `json:"externalReferences"`
	occurredAt         *time.Time
	patch              bool
}

// Validate checks the body: content is required, not blank and at most MaxNote characters;
// occurredAt is RFC 3339 (without offset: Europe/Berlin).
func (in *NoteBody) Validate() error {
	var v errs.Invalid
	v.Require("content", in.Content != nil)
	if in.Content != nil {
		v.Check("content", strings.TrimSpace(*in.Content) != "", "required", "must not be blank")
		check.Len(&v, "content", in.Content, MaxNote)
	}
	if in.patch {
		v.Check("occurredAt", in.OccurredAt == nil, "read_only_field", "only content can be changed")
		v.Check("externalReferences", in.ExternalReferences == nil, "read_only_field", "only content can be changed")
	}
	if in.OccurredAt != nil {
		t, ok := httpx.ParseTime(*in.OccurredAt)
		v.Check("occurredAt", ok, "invalid_datetime", "must be an RFC 3339 timestamp (without offset: Europe/Berlin)")
		if ok {
			in.occurredAt = &t
		}
	}
	for i, r := range in.ExternalReferences {
		name := fmt.Sprintf("externalReferences.%d.", i)
		v.Check(name+"source", strings.TrimSpace(r.Source) != "", "required", "is required")
		v.Check(name+"externalId", strings.TrimSpace(r.ExternalID) != "", "required", "is required")
		check.Len(&v, name+"source", &r.Source, 100)
		check.Len(&v, name+"externalId", &r.ExternalID, 255)
		for _, o := range in.ExternalReferences[:i] {
			v.Check(name+"externalId", o.Source != r.Source || o.ExternalID != r.ExternalID, "duplicate", "is listed twice")
		}
	}
	return v.Err()
}

// visibleContact reads the contact id through both visibility layers: another company's
// contact, and one the credential may not see, is not found.
func visibleContact(ctx context.Context, id uuid.UUID) (*ent.Contact, error) {
	c, err := tenancy.Client(ctx).Contact.Query().Where(contact.ID(id)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errs.NotFound("contact %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read contact %s: %w", id, err)
	}
	return c, nil
}

func author(ctx context.Context) *uuid.UUID {
	if p, ok := tenancy.PrincipalFrom(ctx); ok && p.HasUser() {
		id := p.UserID
		return &id
	}
	return nil
}

// RecordActivity writes a system entry into the timeline of contact id, in the transaction of
// ctx: event names what happened ("relationship.created"), summary says it in one line. It
// holds no sensitive data (no amounts, no identity, health, bank or income values). The caller
// has read the contact through the visibility layer; a write that made the contact invisible
// (owner change) records it inside tenancy.HandOver.
func (s *Service) RecordActivity(ctx context.Context, contactID uuid.UUID, event, summary string) error {
	_, err := tenancy.Client(ctx).ContactActivity.Create().SetContactID(contactID).SetKind(contactactivity.KindSystem).
		SetEvent(event).SetContent(summary).SetNillableAuthorID(author(ctx)).Save(ctx)
	if err != nil {
		return fmt.Errorf("record activity %s of contact %s: %w", event, contactID, err)
	}
	return nil
}

// relatedName is where the name of a system entry's other contact (related_contact_id) goes in
// its stored content; renderRelated fills it in per reader.
const relatedName = "{contact}"

// recordAbout is RecordActivity for an entry about another contact (related): summary names it
// as relatedName.
func (s *Service) recordAbout(ctx context.Context, contactID, related uuid.UUID, event, summary string) error {
	_, err := tenancy.Client(ctx).ContactActivity.Create().SetContactID(contactID).SetKind(contactactivity.KindSystem).
		SetEvent(event).SetContent(summary).SetNillableAuthorID(author(ctx)).SetRelatedContactID(related).Save(ctx)
	if err != nil {
		return fmt.Errorf("record activity %s of contact %s: %w", event, contactID, err)
	}
	return nil
}

// renderRelated fills the other contact of system entries into their content, as the reader
// of ctx may see it: its name when the contact is visible to it (read through both layers, so
// the current name), else "Kontakt <id>". A timeline's reader sees its contact, not
// necessarily the other one (a colleague's customer), and an entry stays after the other
// contact changes hands or is deleted.
func renderRelated(ctx context.Context, rows []*ent.ContactActivity, out []Activity) error {
	var ids []uuid.UUID
	for _, a := range rows {
		if a.RelatedContactID != nil && a.Kind == contactactivity.KindSystem {
			ids = append(ids, *a.RelatedContactID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	visible, err := tenancy.Client(ctx).Contact.Query().Where(contact.IDIn(ids...)).All(ctx)
	if err != nil {
		return fmt.Errorf("read related contacts: %w", err)
	}
	names := map[uuid.UUID]string{}
	for _, c := range visible {
		names[c.ID] = displayName(c)
	}
	for i, a := range rows {
		if a.RelatedContactID == nil || a.Kind != contactactivity.KindSystem {
			continue
		}
		name, ok := names[*a.RelatedContactID]
		if !ok {
			name = "Kontakt " + a.RelatedContactID.String()
		}
		out[i].Content = strings.ReplaceAll(out[i].Content, relatedName, name)
	}
	return nil
}

// Activities returns up to limit+1 entries of the contact's timeline of the kinds given (all
// when empty), newest first by (occurredAt, id), after the sort key after (an httpx.Keyset). 404 for a contact the
// credential cannot see.
func (s *Service) Activities(ctx context.Context, contactID uuid.UUID, kinds []string, after []string, limit int) ([]Activity, error) {
	if _, err := visibleContact(ctx, contactID); err != nil {
		return nil, err
	}
	q := tenancy.Client(ctx).ContactActivity.Query().Where(contactactivity.ContactID(contactID))
	if len(kinds) > 0 {
		ks := make([]contactactivity.Kind, len(kinds))
		for i, k := range kinds {
			ks[i] = contactactivity.Kind(k)
		}
		q.Where(contactactivity.KindIn(ks...))
	}
	keyset, err := httpx.Keyset{Column: contactactivity.FieldOccurredAt, Desc: true, Time: true}.After(after)
	if err != nil {
		return nil, err
	}
	if keyset != nil {
		q.Where(keyset)
	}
	rows, err := q.Order(ent.Desc(contactactivity.FieldOccurredAt), ent.Desc(contactactivity.FieldID)).
		Limit(limit + 1).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list activities of contact %s: %w", contactID, err)
	}
	out := make([]Activity, len(rows))
	for i, a := range rows {
		out[i] = NewActivity(a)
	}
	if err := renderRelated(ctx, rows, out); err != nil {
		return nil, err
	}
	return out, nil
}

// CreateNote adds a note to the contact's timeline and records note.created. 404 for a contact
// the credential cannot see; 409 when an external reference names another note already.
func (s *Service) CreateNote(ctx context.Context, contactID uuid.UUID, in NoteBody) (Activity, error) {
	c, err := visibleContact(ctx, contactID)
	if err != nil {
		return Activity{}, err
	}
	q := tenancy.Client(ctx).ContactActivity.Create().SetContactID(contactID).SetKind(contactactivity.KindNote).
		SetContent(*in.Content).SetNillableAuthorID(author(ctx))
	if in.occurredAt != nil {
		q.SetOccurredAt(*in.occurredAt)
	}
	if len(in.ExternalReferences) > 0 {
		q.SetExternalReferences(in.ExternalReferences)
	}
	a, err := q.Save(ctx)
	if ent.IsConstraintError(err) {
		return Activity{}, errs.Conflict("external_reference_taken", "an external reference of the note names another note already")
	}
	if err != nil {
		return Activity{}, fmt.Errorf("create note of contact %s: %w", contactID, err)
	}
	v := NewActivity(a)
	v.owner = c.OwnerID
	if err := s.events.Record(ctx, "note.created", v); err != nil {
		return Activity{}, err
	}
	return v, nil
}

// Note reads a note of the contact, locked to the end of the transaction when lock: 404 for a
// contact the credential cannot see, for an unknown id and for an entry that is no note (e-mails
// and system entries are not notes).
func (s *Service) Note(ctx context.Context, contactID, noteID uuid.UUID, lock bool) (*ent.Contact, *ent.ContactActivity, error) {
	c, err := visibleContact(ctx, contactID)
	if err != nil {
		return nil, nil, err
	}
	q := tenancy.Client(ctx).ContactActivity.Query().Where(contactactivity.ID(noteID),
		contactactivity.ContactID(contactID), contactactivity.KindEQ(contactactivity.KindNote))
	if lock {
		q.ForUpdate()
	}
	a, err := q.Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil, errs.NotFound("note %s not found", noteID)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read note %s: %w", noteID, err)
	}
	return c, a, nil
}

// UpdateNote replaces the content of note a (read by Note with lock) and records note.updated.
func (s *Service) UpdateNote(ctx context.Context, c *ent.Contact, a *ent.ContactActivity, in NoteBody) (Activity, error) {
	if *in.Content == a.Content {
		return NewActivity(a), nil
	}
	a, err := a.Update().SetContent(*in.Content).Save(ctx)
	if err != nil {
		return Activity{}, fmt.Errorf("update note: %w", err)
	}
	v := NewActivity(a)
	v.owner = c.OwnerID
	if err := s.events.Record(ctx, "note.updated", v); err != nil {
		return Activity{}, err
	}
	return v, nil
}

// DeleteNote removes note a (read by Note with lock) with its external references and records
// note.deleted with the note as it was.
func (s *Service) DeleteNote(ctx context.Context, c *ent.Contact, a *ent.ContactActivity) error {
	if err := tenancy.Client(ctx).ContactActivity.DeleteOneID(a.ID).Exec(ctx); err != nil {
		return fmt.Errorf("delete note %s: %w", a.ID, err)
	}
	v := NewActivity(a)
	v.owner = c.OwnerID
	return s.events.Record(ctx, "note.deleted", v)
}

// ParseActivityFilter reads the filter parameter (comma-separated notes, emails, system) into
// kinds, sorted, without duplicates.
func ParseActivityFilter(s string, v *errs.Invalid) []string {
	var kinds []string
	if strings.TrimSpace(s) == "" {
		return nil
	}
	for _, f := range strings.Split(s, ",") {
		k, ok := ActivityFilters[strings.TrimSpace(f)]
		v.Check("filter", ok, "invalid_enum", "must be a comma-separated list of notes, emails, system")
		if ok && !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	slices.Sort(kinds)
	return kinds
}
