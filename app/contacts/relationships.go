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
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/contactrelationship"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Relationship roles: the role of the related contact seen from the contact. RelationshipRoles
// can be created; employee appears as the inverse of employer (an additive enum value).
const (
	RolePartner  = "partner"
	RoleParent   = "parent"
	RoleChild    = "child"
	RoleEmployer = "employer"
	RoleEmployee = "employee"
	MaxPosition  = 150
)

// RelationshipRoles are the roles POST accepts (the spec's enum).
var RelationshipRoles = []string{RolePartner, RoleChild, RoleParent, RoleEmployer}

// inverseRole is the role of the contact seen from the related one.
var inverseRole = map[string]string{RolePartner: RolePartner, RoleParent: RoleChild, RoleChild: RoleParent,
	RoleEmployer: RoleEmployee, RoleEmployee: RoleEmployer}

// Relationship is the ContactRelationship resource: the related contact and its role seen from
// the contact; Position is the employee's job for employer and employee.
type Relationship struct {
	ID               uuid.UUID       `json:"id"`
	ContactID        uuid.UUID       `json:"contactId"`
	RelatedContactID uuid.UUID       `json:"relatedContactId"`
	RelatedContact   *ContactSummary `json:"relatedContact"`
	Role             string          `json:"role"`
	Position         *string         `json:"position"`
	CreatedAt        time.Time       `json:"createdAt"`
	UpdatedAt        time.Time       `json:"updatedAt"`
	owner            *uuid.UUID
}

// ContactSummary names a related contact.
type ContactSummary struct {
	ID          uuid.UUID `json:"id"`
	Type        string    `json:"type"`
	FirstName   string    `json:"firstName"`
	LastName    string    `json:"lastName"`
	CompanyName *string   `json:"companyName"`
}

func newSummary(c *ent.Contact) *ContactSummary {
	s := &ContactSummary{ID: c.ID, Type: string(c.Type), FirstName: c.FirstName, LastName: c.LastName}
	if c.Type == TypeBusiness {
		n := c.CompanyName
		s.CompanyName = &n
	}
	return s
}

// EventAbout makes relationship events exactly as visible as the relationship: both contacts
// (the one they were written on, the related one), each or its owner at the time.
func (r Relationship) EventAbout() events.About {
	id, related := r.ContactID, r.RelatedContactID
	return events.About{ContactID: &id, OwnerID: r.owner, RelatedContactID: &related, UserScoped: true}
}

func newRelationship(r *ent.ContactRelationship, related *ent.Contact) Relationship {
	v := Relationship{ID: r.ID, ContactID: r.ContactID, RelatedContactID: r.RelatedContactID, Role: string(r.Role),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if related != nil {
		v.RelatedContact = newSummary(related)
	}
	if r.Role == RoleEmployer || r.Role == RoleEmployee {
		p := r.Position
		v.Position = &p
	}
	return v
}

// RelationshipBody is the body of POST /contacts/{contactId}/relationships.
type RelationshipBody struct {
	RelatedContactID *string `json:"relatedContactId"`
	Role             *string `json:"role"`
	Position         *string `json:"position"`
	related          uuid.UUID
}

// Validate checks the body: relatedContactId a UUID, role one of RelationshipRoles, position
// (at most 150 characters) only for employer.
func (in *RelationshipBody) Validate() error {
	var v errs.Invalid
	v.Require("relatedContactId", in.RelatedContactID != nil)
	if in.RelatedContactID != nil {
		id, err := uuid.Parse(*in.RelatedContactID)
		v.Check("relatedContactId", err == nil, "invalid_uuid", "must be a UUID")
		in.related = id
	}
	v.Require("role", in.Role != nil)
	if in.Role != nil {
		v.Check("role", slices.Contains(RelationshipRoles, *in.Role), "invalid_enum",
			"must be one of "+strings.Join(RelationshipRoles, ", "))
	}
	if in.Position != nil {
		v.Check("position", in.Role != nil && *in.Role == RoleEmployer, "not_applicable", "is only given for the role employer")
		check.Len(&v, "position", in.Position, MaxPosition)
	}
	return v.Err()
}

// Relationships lists the contact's relationships, oldest first, each with a summary of the
// related contact. Relationships to contacts the credential cannot see are left out (row-level
// security and the ent rules on related_contact_id). 404 for a contact it cannot see.
func (s *Service) Relationships(ctx context.Context, contactID uuid.UUID) ([]Relationship, error) {
	if _, err := visibleContact(ctx, contactID); err != nil {
		return nil, err
	}
	db := tenancy.Client(ctx)
	rows, err := db.ContactRelationship.Query().Where(contactrelationship.ContactID(contactID)).
		Order(ent.Asc(contactrelationship.FieldCreatedAt), ent.Asc(contactrelationship.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list relationships of contact %s: %w", contactID, err)
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.RelatedContactID
	}
	related, err := db.Contact.Query().Where(contact.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list relationships of contact %s: %w", contactID, err)
	}
	byID := map[uuid.UUID]*ent.Contact{}
	for _, c := range related {
		byID[c.ID] = c
	}
	out := make([]Relationship, 0, len(rows))
	for _, r := range rows {
		if c := byID[r.RelatedContactID]; c != nil { // both layers filter already; never name an invisible contact
			out = append(out, newRelationship(r, c))
		}
	}
	return out, nil
}

// CreateRelationship relates the contact to in's related contact, storing both directions, and
// records relationship.created and a system entry in both timelines. 404 for either contact the
// credential cannot see, 422 self_relationship, 409 relationship_exists when the contact has
// the related one in that role already.
func (s *Service) CreateRelationship(ctx context.Context, contactID uuid.UUID, in RelationshipBody) (Relationship, error) {
	c, err := visibleContact(ctx, contactID)
	if err != nil {
		return Relationship{}, err
	}
	if in.related == contactID {
		return Relationship{}, errs.InvalidField("relatedContactId", "self_relationship", "a contact cannot be related to itself")
	}
	related, err := visibleContact(ctx, in.related)
	if err != nil {
		return Relationship{}, errs.NotFound("related contact %s not found", in.related)
	}
	role := *in.Role
	db := tenancy.Client(ctx)
	taken, err := db.ContactRelationship.Query().Where(contactrelationship.ContactID(contactID),
		contactrelationship.RelatedContactID(in.related), contactrelationship.RoleEQ(contactrelationship.Role(role))).Exist(ctx)
	if err != nil {
		return Relationship{}, fmt.Errorf("create relationship: %w", err)
	}
	if taken {
		return Relationship{}, errs.Conflict("relationship_exists", "contact %s has %s as %s already", contactID, in.related, role)
	}
	position := ""
	if in.Position != nil {
		position = strings.TrimSpace(*in.Position)
	}
	pair := uuid.Must(uuid.NewV7())
	r, err := db.ContactRelationship.Create().SetContactID(contactID).SetRelatedContactID(in.related).
		SetRole(contactrelationship.Role(role)).SetPosition(position).SetPairID(pair).Save(ctx)
	if err == nil {
		_, err = db.ContactRelationship.Create().SetContactID(in.related).SetRelatedContactID(contactID).
			SetRole(contactrelationship.Role(inverseRole[role])).SetPosition(position).SetPairID(pair).Save(ctx)
	}
	if ent.IsConstraintError(err) { // a concurrent request related them first
		return Relationship{}, errs.Conflict("relationship_exists", "contact %s has %s as %s already", contactID, in.related, role)
	}
	if err != nil {
		return Relationship{}, fmt.Errorf("create relationship: %w", err)
	}
	v := newRelationship(r, related)
	v.owner = c.OwnerID
	if err := s.events.Record(ctx, "relationship.created", v); err != nil {
		return Relationship{}, err
	}
	if err := s.relationshipActivities(ctx, "relationship.created", c, related, role, "Beziehung angelegt"); err != nil {
		return Relationship{}, err
	}
	return v, nil
}

// DeleteRelationship removes a relationship of the contact in both directions and records
// relationship.deleted. 404 for an unknown id, a contact the credential cannot see, and a
// relationship to a contact it cannot see.
func (s *Service) DeleteRelationship(ctx context.Context, contactID, id uuid.UUID) error {
	c, err := visibleContact(ctx, contactID)
	if err != nil {
		return err
	}
	db := tenancy.Client(ctx)
	r, err := db.ContactRelationship.Query().Where(contactrelationship.ID(id), contactrelationship.ContactID(contactID)).Only(ctx)
	if ent.IsNotFound(err) {
		return errs.NotFound("relationship %s not found", id)
	}
	if err != nil {
		return fmt.Errorf("read relationship %s: %w", id, err)
	}
	related, err := visibleContact(ctx, r.RelatedContactID)
	if err != nil {
		return errs.NotFound("relationship %s not found", id)
	}
	if _, err := db.ContactRelationship.Delete().Where(contactrelationship.PairID(r.PairID)).Exec(ctx); err != nil {
		return fmt.Errorf("delete relationship %s: %w", id, err)
	}
	v := newRelationship(r, related)
	v.owner = c.OwnerID
	if err := s.events.Record(ctx, "relationship.deleted", v); err != nil {
		return err
	}
	return s.relationshipActivities(ctx, "relationship.deleted", c, related, string(r.Role), "Beziehung entfernt")
}

// relationshipActivities writes the system entry of a relationship change into both timelines,
// each about the other contact, whose name is rendered when the timeline is read (a reader of one
// contact need not see the other: issue 20 item 4).
func (s *Service) relationshipActivities(ctx context.Context, event string, c, related *ent.Contact, role, what string) error {
	if err := s.recordAbout(ctx, c.ID, related.ID, event, fmt.Sprintf("%s: %s (%s)", what, relatedName, role)); err != nil {
		return err
	}
	return s.recordAbout(ctx, related.ID, c.ID, event, fmt.Sprintf("%s: %s (%s)", what, relatedName, inverseRole[role]))
}

// displayName is "First Last" of a person, the company name of a business.
func displayName(c *ent.Contact) string {
	if c.Type == TypeBusiness && c.CompanyName != "" {
		return c.CompanyName
	}
	return strings.TrimSpace(c.FirstName + " " + c.LastName)
}
