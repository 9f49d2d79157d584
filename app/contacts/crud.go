package contacts

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/extref"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/contactactivity"
	"github.com/brokerdesk/brokerdesk/ent/contract"
	"github.com/brokerdesk/brokerdesk/ent/externalref"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// refResource is the resource name of contacts in the external_refs lookup table.
const refResource = "contact"

// NewDoc is a document of type typ with names (empty: absent), e-mail and owner.
func NewDoc(typ, first, last string, email *string, owner *uuid.UUID) Doc {
	d := Doc{Type: typ, Email: email}
	if first != "" {
		d.FirstName = &first
	}
	if last != "" {
		d.LastName = &last
	}
	if owner != nil {
		o := owner.String()
		d.OwnerID = &o
	}
	return d
}

// DocOf is the writable document of c: what a PATCH merges into, sensitive groups decrypted.
func (s *Service) DocOf(c *ent.Contact) (Doc, error) {
	d := NewDoc(string(c.Type), c.FirstName, c.LastName, c.Email, c.OwnerID)
	d.Tags, d.Labels, d.ExternalReferences = c.Tags, c.Labels, c.ExternalReferences
	if len(c.CustomFields) > 0 {
		d.CustomFields = maps.Clone(c.CustomFields)
	}
	gs := map[string]map[string]any{}
	cat := FieldCatalog()
	for _, g := range cat.GroupNames() {
		var vals map[string]any
		if cat.Sensitive(g) {
			var err error
			if vals, err = s.open(c, g); err != nil {
				return Doc{}, err
			}
		} else {
			vals = groupOf(c, g)
		}
		if g == "business" && c.CompanyName == "" {
			delete(vals, "companyName")
		}
		if len(vals) > 0 {
			gs[g] = vals
		}
	}
	d.SetGroups(gs)
	return d, nil
}

// row is every stored column a Doc decides.
type row struct {
	first, last, company string
	email                *string
	owner                *uuid.UUID
	tags, labels         []string
	custom               map[string]any
	groups               schematype.ContactGroups
	sensitive            map[string]schematype.Sealed
	refs                 []schematype.ExternalRef
}

// rowOf turns a checked document (groups cleaned by check) into columns.
func (s *Service) rowOf(id, company uuid.UUID, d Doc, groups map[string]map[string]any, owner *uuid.UUID) (row, error) {
	r := row{first: strings.TrimSpace(ptr.Deref(d.FirstName)), last: strings.TrimSpace(ptr.Deref(d.LastName)),
		owner: owner, tags: cleanTags(d.Tags), labels: d.Labels, custom: d.CustomFields, refs: d.ExternalReferences,
		groups: schematype.ContactGroups{}}
	if r.labels == nil {
		r.labels = []string{}
	}
	if r.custom == nil {
		r.custom = map[string]any{}
	}
	if d.Email != nil {
		e := strings.TrimSpace(*d.Email)
		r.email = &e
	}
	cat := FieldCatalog()
	for g, vals := range groups {
		if cat.Sensitive(g) {
			continue
		}
		vals = maps.Clone(vals)
		if g == "business" {
			r.company, _ = vals["companyName"].(string)
			delete(vals, "companyName")
		}
		if len(vals) > 0 {
			r.groups[g] = vals
		}
	}
	var err error
	r.sensitive, err = s.seal(id, company, groups)
	return r, err
}

// apply writes r to m. search_text, sort_name and email_key are not among them: the database
// derives them from the row on every write, whatever path it takes (trigger
// contacts_search_columns, migrations/20261127110000), so no writer can store a contact that q,
// sort=name or ?email= would miss. A query term is folded in Go (strings.ToLower) as that
// trigger folds the row.
func (r row) apply(m *ent.ContactMutation) {
	m.SetFirstName(r.first)
	m.SetLastName(r.last)
	m.SetCompanyName(strings.TrimSpace(r.company))
	if r.email != nil {
		m.SetEmail(*r.email)
	} else {
		m.ClearEmail()
	}
	if r.owner != nil {
		m.SetOwnerID(*r.owner)
	} else {
		m.ClearOwnerID()
	}
	m.SetTags(r.tags)
	m.SetLabels(r.labels)
	m.SetCustomFields(r.custom)
	m.SetGroups(r.groups)
	m.SetSensitive(r.sensitive)
}

// checkOwner returns the owner a contact gets: the given one (a user of the company, else 422
// unknown_user), or for a new contact without one the acting user, or for a company-level
// credential the company's first admin.
func (s *Service) checkOwner(ctx context.Context, given *uuid.UUID, create bool) (*uuid.UUID, error) {
	db := tenancy.Client(ctx)
	if given != nil {
		ok, err := db.User.Query().Where(user.ID(*given)).Exist(ctx)
		if err != nil {
			return nil, fmt.Errorf("read contact owner: %w", err)
		}
		if !ok {
			return nil, errs.InvalidField("ownerId", "unknown_user", "is not a user of this company")
		}
		return given, nil
	}
	if !create {
		return nil, nil
	}
	if p, ok := tenancy.PrincipalFrom(ctx); ok && p.HasUser() {
		id := p.UserID
		return &id, nil
	}
	admin, err := db.User.Query().Where(user.RoleEQ(user.RoleAdmin), user.StatusEQ(user.StatusActive)).
		Order(ent.Asc(user.FieldCreatedAt), ent.Asc(user.FieldID)).First(ctx)
	if ent.IsNotFound(err) { // a company without an active admin: the contact has no owner
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find company admin: %w", err)
	}
	return &admin.ID, nil
}

// refsFree refuses external references another contact of the company carries (409).
func refsFree(ctx context.Context, refs []schematype.ExternalRef, self uuid.UUID) error {
	return extref.Free(ctx, refResource, refs, self)
}

// Check validates d as Create does before it reads the database: the one validation of POST
// /contacts, which imports run on every row of a file before anything is written. Custom
// fields, the owner and external references are checked when the contact is stored.
func (s *Service) Check(d Doc) error {
	var v errs.Invalid
	d.check(&v, true, s.now())
	if d.WriteMode != nil {
		v.Add("writeMode", "not_allowed", "applies to updates only")
	}
	return v.Err()
}

// Create validates and stores a new contact with its phones and records contact.created.
func (s *Service) Create(ctx context.Context, d Doc) (Contact, error) {
	var v errs.Invalid
	groups := d.check(&v, true, s.now())
	if d.WriteMode != nil {
		v.Add("writeMode", "not_allowed", "applies to updates only")
	}
	if err := v.Err(); err != nil {
		return Contact{}, err
	}
	if err := s.checkCustom(ctx, d.CustomFields); err != nil {
		return Contact{}, err
	}
	owner, err := s.checkOwner(ctx, d.ownerID(), true)
	if err != nil {
		return Contact{}, err
	}
	if err := refsFree(ctx, d.ExternalReferences, uuid.Nil); err != nil {
		return Contact{}, err
	}
	company, _ := tenancy.CompanyID(ctx)
	id := uuid.Must(uuid.NewV7())
	r, err := s.rowOf(id, company, d, groups, owner)
	if err != nil {
		return Contact{}, err
	}
	q := tenancy.Client(ctx).Contact.Create().SetID(id).SetType(contact.Type(d.Type))
	r.apply(q.Mutation())
	if len(r.refs) > 0 {
		q.SetExternalReferences(r.refs)
	}
	var out Contact
	// A contact created for another owner need not be visible to its creator (an agent's key).
	err = tenancy.HandOver(ctx, func() (err error) {
		if out.Contact, err = q.Save(ctx); err != nil {
			return fmt.Errorf("create contact: %w", err)
		}
		out.Phones, err = s.addPhones(ctx, id, nil, phonesOf(d.Phones))
		return err
	})
	if err != nil {
		return Contact{}, err
	}
	if err := s.events.Record(ctx, "contact.created", NewView(out)); err != nil {
		return Contact{}, err
	}
	return out, nil
}

// phonesOf turns the phones of a body into numbers to store.
func phonesOf(in []PhoneInput) []Phone {
	out := make([]Phone, len(in))
	for i, p := range in {
		out[i] = Phone{Number: p.Number, Type: ptr.Deref(p.Type), IsPrimary: p.IsPrimary}
	}
	return out
}

// Save writes d, the merged document of a PATCH (or an upsert), into c (locked by LockContact)
// and records contact.updated: the one call that updates a contact. A write that changes nothing
// changes neither version nor updatedAt and records nothing. A new owner may make the contact
// invisible to the caller: allowed, and the answer still shows it.
func (s *Service) Save(ctx context.Context, c Contact, d Doc) (Contact, error) {
	return s.SaveWith(ctx, c, d, nil, false)
}

// SaveWith is Save that also adds the numbers of add the contact does not have (by E.164
// key; a new number changes the contact) and, when touch, records contact.updated and moves
// version and updatedAt even when nothing changed: a lead converted into the contact changes
// it (its files move there).
func (s *Service) SaveWith(ctx context.Context, c Contact, d Doc, add []Phone, touch bool) (Contact, error) {
	if d.Type != string(c.Type) {
		return Contact{}, errs.InvalidField("type", "immutable", "the type of a contact cannot change")
	}
	var v errs.Invalid
	groups := d.check(&v, false, s.now())
	if err := v.Err(); err != nil {
		return Contact{}, err
	}
	if err := s.checkCustom(ctx, d.CustomFields); err != nil {
		return Contact{}, err
	}
	owner := d.ownerID()
	if owner != nil && (c.OwnerID == nil || *owner != *c.OwnerID) {
		if _, err := s.checkOwner(ctx, owner, false); err != nil {
			return Contact{}, err
		}
	}
	if err := refsFree(ctx, d.ExternalReferences, c.ID); err != nil {
		return Contact{}, err
	}
	r, err := s.rowOf(c.ID, c.CompanyID, d, groups, owner)
	if err != nil {
		return Contact{}, err
	}
	same := s.same(c.Contact, r)
	out := c
	if len(add) > 0 {
		err = tenancy.HandOver(ctx, func() (err error) { out.Phones, err = s.addPhones(ctx, c.ID, c.Phones, add); return err })
		if err != nil {
			return Contact{}, err
		}
	}
	if same && len(out.Phones) == len(c.Phones) && !touch {
		return c, nil
	}
	u := c.Update()
	if !same {
		r.apply(u.Mutation())
		if !reflect.DeepEqual(nonNil(r.refs), nonNil(c.ExternalReferences)) {
			if len(r.refs) > 0 {
				u.SetExternalReferences(r.refs)
			} else {
				u.ClearExternalReferences()
			}
		}
	}
	err = tenancy.HandOver(ctx, func() (err error) { out.Contact, err = u.Save(ctx); return err })
	if err != nil {
		return Contact{}, fmt.Errorf("update contact %s: %w", c.ID, err)
	}
	if err := s.events.Record(ctx, "contact.updated", NewView(out)); err != nil {
		return Contact{}, err
	}
	return out, nil
}

// same reports whether r stores what c holds (sealed values compare by content).
func (s *Service) same(c *ent.Contact, r row) bool {
	if c.FirstName != r.first || c.LastName != r.last || c.CompanyName != strings.TrimSpace(r.company) ||
		ptr.Deref(c.Email) != ptr.Deref(r.email) || (c.Email == nil) != (r.email == nil) ||
		!reflect.DeepEqual(c.OwnerID, r.owner) || !reflect.DeepEqual(nonNil(c.Tags), nonNil(r.tags)) ||
		!reflect.DeepEqual(nonNil(c.Labels), nonNil(r.labels)) || !jsonEqual(c.CustomFields, r.custom) ||
		!jsonEqual(c.Groups, r.groups) || !reflect.DeepEqual(nonNil(c.ExternalReferences), nonNil(r.refs)) ||
		len(c.Sensitive) != len(r.sensitive) {
		return false
	}
	for g := range r.sensitive {
		old, err := s.open(c, g)
		if err != nil {
			return false
		}
		plain, _ := s.keys.Open(r.sensitive[g], aad(c.ID, c.CompanyID, g))
		var now map[string]any
		_ = json.Unmarshal(plain, &now)
		if !jsonEqual(old, now) {
			return false
		}
	}
	return true
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	var xa, ya any
	_ = json.Unmarshal(x, &xa)
	_ = json.Unmarshal(y, &ya)
	if m, ok := xa.(map[string]any); ok && len(m) == 0 {
		xa = nil
	}
	if m, ok := ya.(map[string]any); ok && len(m) == 0 {
		ya = nil
	}
	return reflect.DeepEqual(xa, ya)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Delete removes c (locked by LockContact) and everything of it and records contact.deleted with the
// contact as it was (without sensitive groups). The OnDelete hooks run first (contracts: each
// with its contract.deleted, recorded before the contact.deleted; documents: their blobs, removed
// after commit). The database's cascades remove the rest that belongs to the contact (phones,
// relationships both ways, finances, activities and notes, the files of converted leads); tasks,
// appointments and converted leads stay, without contactId (ON DELETE SET NULL): they are the
// brokerage's work, not the contact's data.
func (s *Service) Delete(ctx context.Context, c Contact) error {
	for _, h := range s.onDelete {
		if err := h(ctx, c.ID); err != nil {
			return err
		}
	}
	if err := deleteDependentRefs(ctx, c.ID); err != nil {
		return err
	}
	if err := tenancy.Client(ctx).Contact.DeleteOne(c.Contact).Exec(ctx); err != nil {
		return fmt.Errorf("delete contact %s: %w", c.ID, err)
	}
	return s.events.Record(ctx, "contact.deleted", NewView(c))
}

// deleteDependentRefs removes from the external_refs lookup table the references of the rows a
// contact's deletion cascades to that carry external references (notes, contracts). A cascade
// runs no ent hook: left there, a reference would point at nothing, and the external id could
// never be used again (PUT /external/{source}/contracts/{id} would answer 404 for ever). Every
// such row goes, whoever may see it, so visibility is lifted; the contact itself was read
// through it.
func deleteDependentRefs(ctx context.Context, contactID uuid.UUID) error {
	return tenancy.ReadCompanyWide(ctx, func() error {
		db := tenancy.Client(ctx)
		notes, err := db.ContactActivity.Query().Where(contactactivity.ContactID(contactID),
			contactactivity.KindEQ(contactactivity.KindNote)).IDs(ctx)
		if err != nil {
			return fmt.Errorf("read notes of contact %s: %w", contactID, err)
		}
		held, err := db.Contract.Query().Where(contract.ContactID(contactID)).IDs(ctx)
		if err != nil {
			return fmt.Errorf("read contracts of contact %s: %w", contactID, err)
		}
		for resource, ids := range map[string][]uuid.UUID{"note": notes, "contract": held} {
			if len(ids) == 0 {
				continue
			}
			if _, err := db.ExternalRef.Delete().Where(externalref.Resource(resource), externalref.ResourceIDIn(ids...)).
				Exec(ctx); err != nil {
				return fmt.Errorf("delete %s references of contact %s: %w", resource, contactID, err)
			}
		}
		return nil
	})
}
