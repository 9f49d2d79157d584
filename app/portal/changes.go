package portal

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portalchangerequest"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Kinds of change request (ent/schema PortalChangeKinds) and their fields: the keys of changes,
// named as the API's Contact names them.
const (
	KindAddress = "address"
	KindName    = "name"
	KindEmail   = "email"
	KindPhone   = "phone"
	KindBank    = "bank"
)

// kindFields are the fields of each kind, required ones first (changeRequired).
var kindFields = map[string][]string{
	KindAddress: {"street", "houseNumber", "zipCode", "city", "country"},
	KindName:    {"salutation", "firstName", "lastName"},
	KindEmail:   {"email"},
	KindPhone:   {"number", "type"},
	KindBank:    {"iban", "bic", "accountHolder"},
}

// changeRequired are the fields a request of the kind must give; the others may be empty
// (cleared on approval).
var changeRequired = map[string][]string{
	KindAddress: {"street", "zipCode", "city"},
	KindName:    {"firstName", "lastName"},
	KindEmail:   {"email"},
	KindPhone:   {"number"},
	KindBank:    {"iban", "accountHolder"},
}

// KindFields returns the fields of kind in display order (nil for an unknown kind): the portal's
// forms ask for these.
func KindFields(kind string) []string { return slices.Clone(kindFields[kind]) }

// CreateChange records what the signed-in customer s asks to change of its data (kind, changes
// by field of KindFields(kind)) as a pending change request, with the contact's values of
// those fields today as its baseline (approval compares them), and records
// portal_change_request.created. ctx is the portal's pinned transaction (inSession).
//
// 422 (errs.Invalid, fields named as the keys of changes, "kind" for an unknown kind) for
// unknown or invalid values, a missing required one, or a change that changes nothing
// ("changes", unchanged); 409 change_pending while a request of the same kind is pending (the
// customer withdraws it first). Values are trimmed; an IBAN or BIC is stored compact and upper
// case. A bank request is kept sealed with the company's data key; its columns hold the IBAN
// masked.
func (m *Module) CreateChange(ctx context.Context, s *Session, kind string, changes map[string]string) (*ent.PortalChangeRequest, error) {
	fields, ok := kindFields[kind]
	if !ok {
		return nil, errs.InvalidField("kind", "invalid_enum", "must be one of address, name, email, phone, bank")
	}
	c, err := m.d.Contacts.Find(ctx, s.ContactID)
	if err != nil {
		return nil, err
	}
	clean, err := m.checkChange(kind, string(c.Type), changes)
	if err != nil {
		return nil, err
	}
	base, err := m.baselineOf(c, kind)
	if err != nil {
		return nil, err
	}
	if sameValues(fields, clean, base) {
		return nil, errs.InvalidField("changes", "unchanged", "the values are the ones stored today")
	}
	db := tenancy.Client(ctx)
	busy, err := db.PortalChangeRequest.Query().Where(portalchangerequest.ContactID(s.ContactID),
		portalchangerequest.KindEQ(portalchangerequest.Kind(kind)),
		portalchangerequest.StatusEQ(portalchangerequest.StatusPending)).Exist(ctx)
	if err != nil {
		return nil, fmt.Errorf("read pending change requests: %w", err)
	}
	if busy {
		return nil, errs.Conflict("change_pending", "a change request of kind %s is pending; withdraw it first", kind)
	}
	id := uuid.Must(uuid.NewV7())
	q := db.PortalChangeRequest.Create().SetID(id).SetContactID(s.ContactID).SetAccessID(s.Access.ID).
		SetKind(portalchangerequest.Kind(kind))
	if kind == KindBank {
		sealed, err := m.sealChange(s.CompanyID, id, clean, base)
		if err != nil {
			return nil, err
		}
		q.SetChanges(maskBank(clean)).SetBaseline(maskBank(base)).SetSealed(sealed)
	} else {
		q.SetChanges(clean).SetBaseline(base)
	}
	var r *ent.PortalChangeRequest
	// In a savepoint: the page answers 409 and its transaction goes on (and commits).
	err = tenancy.Savepoint(ctx, func() (err error) { r, err = q.Save(ctx); return err })
	if ent.IsConstraintError(err) { // tenant_portal_change_requests_pending: one raced us
		return nil, errs.Conflict("change_pending", "a change request of kind %s is pending; withdraw it first", kind)
	}
	if err != nil {
		return nil, fmt.Errorf("create change request: %w", err)
	}
	if err := m.recordChange(ctx, "portal_change_request.created", r); err != nil {
		return nil, err
	}
	return r, nil
}

// WithdrawChange withdraws the pending change request id of the signed-in customer s and records
// portal_change_request.withdrawn: 404 when it is not one of s's contact, 409
// change_request_decided when it is no longer pending.
func (m *Module) WithdrawChange(ctx context.Context, s *Session, id uuid.UUID) (*ent.PortalChangeRequest, error) {
	r, err := tenancy.Client(ctx).PortalChangeRequest.Query().Where(portalchangerequest.ID(id),
		portalchangerequest.ContactID(s.ContactID)).ForUpdate().Only(ctx)
	if err != nil {
		return nil, errs.FromEnt(err, "change request %s", id)
	}
	if r.Status != portalchangerequest.StatusPending {
		return nil, errs.Conflict("change_request_decided", "change request %s is %s, not pending", id, r.Status)
	}
	r, err = r.Update().SetStatus(portalchangerequest.StatusWithdrawn).SetWithdrawnAt(m.d.Now()).Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("withdraw change request %s: %w", id, err)
	}
	if err := m.recordChange(ctx, "portal_change_request.withdrawn", r); err != nil {
		return nil, err
	}
	return r, nil
}

// recordChange records an event of r; the data is its view with the IBAN masked (events reach
// every credential with contacts:read), about its contact.
func (m *Module) recordChange(ctx context.Context, typ string, r *ent.PortalChangeRequest) error {
	v, err := m.ChangeView(r, false)
	if err != nil {
		return err
	}
	return m.d.Events.RecordAbout(ctx, typ, v, events.About{ContactID: &r.ContactID, UserScoped: true})
}

// checkChange validates changes for a request of kind on a contact of type typ, as the contact's
// own validation would (the catalog's formats), and returns them trimmed and normalised with
// every field of the kind present ("" when empty).
func (m *Module) checkChange(kind, typ string, changes map[string]string) (map[string]string, error) {
	var v errs.Invalid
	fields := kindFields[kind]
	for k := range changes {
		v.Check(k, slices.Contains(fields, k), "unknown_field", "is not a field of a "+kind+" change ("+
			strings.Join(fields, ", ")+")")
	}
	clean := map[string]string{}
	for _, k := range fields {
		clean[k] = strings.TrimSpace(changes[k])
		check.Text(&v, k, clean[k])
	}
	for _, k := range changeRequired[kind] {
		v.Require(k, clean[k] != "")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	switch kind {
	case KindAddress, KindBank:
		vals := map[string]any{}
		for k, s := range clean {
			if s != "" {
				vals[k] = s
			}
		}
		groups := contacts.CheckGroups(&v, typ, map[string]map[string]any{kind: vals}, m.d.Now())
		for k := range clean {
			if s, ok := groups[kind][k].(string); ok {
				clean[k] = s
			}
		}
	case KindName:
		first, last := clean["firstName"], clean["lastName"]
		(&contacts.Fields{FirstName: &first, LastName: &last}).Check(&v, "")
		if s := clean["salutation"]; s != "" {
			contacts.CheckGroups(&v, typ, map[string]map[string]any{"personal": {"salutation": s}}, m.d.Now())
		}
	case KindEmail:
		clean["email"] = strings.ToLower(clean["email"])
		e := clean["email"]
		(&contacts.Fields{Email: &e}).Check(&v, "")
	case KindPhone:
		_, ok := identity.PhoneKey(clean["number"])
		v.Check("number", ok, "invalid_phone", "must be a phone number (E.164, or German without a country code)")
		if clean["type"] == "" {
			clean["type"] = contacts.PhoneType(clean["number"])
		}
		v.Check("type", slices.Contains(contacts.PhoneTypes, clean["type"]), "invalid_enum",
			"must be one of "+strings.Join(contacts.PhoneTypes, ", "))
	}
	return clean, unprefix(v.Err(), kind)
}

// unprefix names the fields of a group's errors ("address.zipCode", "personal.salutation") as
// the keys of changes ("zipCode"), and a group-level error as "changes".
func unprefix(err error, kind string) error {
	v, ok := err.(*errs.Invalid)
	if !ok || v == nil {
		return err
	}
	for i, e := range v.Errors {
		if _, f, ok := strings.Cut(e.Field, "."); ok {
			v.Errors[i].Field = f
		} else if e.Field == kind || e.Field == "personal" {
			v.Errors[i].Field = "changes"
		}
	}
	return v
}

// baselineOf is what contact c holds today in the fields of kind ("" when empty): the baseline
// of a new request, and what approval compares it with. A phone's baseline is the primary
// number (and its type).
func (m *Module) baselineOf(c contacts.Contact, kind string) (map[string]string, error) {
	out := map[string]string{}
	str := func(v any) string { s, _ := v.(string); return s }
	switch kind {
	case KindAddress:
		for _, k := range kindFields[kind] {
			out[k] = str(c.Groups["address"][k])
		}
	case KindName:
		out["firstName"], out["lastName"] = c.FirstName, c.LastName
		out["salutation"] = str(c.Groups["personal"]["salutation"])
	case KindEmail:
		out["email"] = strings.ToLower(ptr.Deref(c.Email))
	case KindPhone:
		out["number"], out["type"] = "", ""
		if len(c.Phones) > 0 && c.Phones[0].IsPrimary {
			out["number"], out["type"] = c.Phones[0].Number, c.Phones[0].Type
		}
	case KindBank:
		d, err := m.d.Contacts.DocOf(c.Contact)
		if err != nil {
			return nil, err
		}
		for _, k := range kindFields[kind] {
			out[k] = str(d.Bank[k])
		}
	}
	return out, nil
}

// sameValues reports whether a and b agree in fields. Phones compare by their E.164 key.
func sameValues(fields []string, a, b map[string]string) bool {
	for _, k := range fields {
		x, y := a[k], b[k]
		if k == "number" {
			kx, _ := identity.PhoneKey(x)
			ky, _ := identity.PhoneKey(y)
			x, y = kx, ky
		}
		if x != y {
			return false
		}
	}
	return true
}

// changedFields are the fields of kind whose value differs between a and b, in kind order.
func changedFields(kind string, a, b map[string]string) []string {
	var out []string
	for _, k := range kindFields[kind] {
		if !sameValues([]string{k}, a, b) {
			out = append(out, k)
		}
	}
	return out
}

// sealedChange is the plain content of a bank request's sealed column.
type sealedChange struct {
	Changes  map[string]string `json:"changes"`
	Baseline map[string]string `json:"baseline"`
}

// changeAAD binds a sealed change to its request and company.
func changeAAD(company, id uuid.UUID) []byte {
	return []byte(company.String() + "/portal_change_request/" + id.String())
}

func (m *Module) sealChange(company, id uuid.UUID, changes, baseline map[string]string) ([]byte, error) {
	plain, err := json.Marshal(sealedChange{Changes: changes, Baseline: baseline})
	if err != nil {
		return nil, err
	}
	return json.Marshal(m.d.Keys.Seal(plain, changeAAD(company, id)))
}

// sealed reports whether r keeps its values sealed (a bank request). ent reads a NULL bytea
// back as an empty slice, so length counts, not nil.
func sealed(r *ent.PortalChangeRequest) bool { return r.Sealed != nil && len(*r.Sealed) > 0 }

// openChange returns the changes and baseline of r in plain: a bank request's from its sealed
// column, every other from its columns. ent reads a NULL bytes column as a pointer to an empty
// slice, never nil: empty means not sealed.
func (m *Module) openChange(r *ent.PortalChangeRequest) (changes, baseline map[string]string, err error) {
	if r.Sealed == nil || len(*r.Sealed) == 0 {
		return maps.Clone(r.Changes), maps.Clone(r.Baseline), nil
	}
	var s schematype.Sealed
	if err := json.Unmarshal(*r.Sealed, &s); err != nil {
		return nil, nil, fmt.Errorf("decode sealed change request %s: %w", r.ID, err)
	}
	plain, err := m.d.Keys.Open(s, changeAAD(r.CompanyID, r.ID))
	if err != nil {
		return nil, nil, fmt.Errorf("open change request %s: %w", r.ID, err)
	}
	var out sealedChange
	if err := json.Unmarshal(plain, &out); err != nil {
		return nil, nil, fmt.Errorf("decode change request %s: %w", r.ID, err)
	}
	return out.Changes, out.Baseline, nil
}

// maskBank is vals with the IBAN masked: its first four and last four characters in groups of
// four ("DE89 **** **** **** **30 00" for DE89370400440532013000), the rest stars. The account
// holder and BIC are shown: they identify no account on their own.
func maskBank(vals map[string]string) map[string]string {
	out := maps.Clone(vals)
	if iban := out["iban"]; iban != "" {
		out["iban"] = MaskIBAN(iban)
	}
	return out
}

// MaskIBAN masks an IBAN for display (the portal's pages as well): the country, check digits
// and the last four characters stay, grouped in fours as it is printed.
func MaskIBAN(iban string) string {
	s := check.Compact(iban)
	if len(s) <= 8 {
		return strings.Repeat("*", len(s))
	}
	b := []byte(s)
	for i := 4; i < len(b)-4; i++ {
		b[i] = '*'
	}
	var out strings.Builder
	for i, ch := range b {
		if i > 0 && i%4 == 0 {
			out.WriteByte(' ')
		}
		out.WriteByte(ch)
	}
	return out.String()
}
