package contacts

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/extref"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/jsondoc"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Bounds of tags, labels and custom field values.
const (
	MaxTags      = 50
	MaxTag       = 50
	MaxLabels    = 10
	MaxCustomStr = 1000
)

// Write modes of an update (spec: "fill_empty_only fills only fields empty today (other values
// exist for the parameter writeMode)"). WriteModeOverwrite is the default, named as portfolio
// transfers name it, so a client may state it.
const (
	WriteModeOverwrite = "overwrite"
	WriteModeFillEmpty = "fill_empty_only"
)

// WriteModes are the values writeMode accepts.
var WriteModes = []string{WriteModeOverwrite, WriteModeFillEmpty}

// Doc is the writable Contact: the body of POST /contacts (ContactCreate), of PUT
// /external/... and of a bulk item (ContactUpsert), and what PATCH merges its patch into
// (ContactPatch). A nil field is empty. Group keys are validated against the catalog
// (CheckGroups), custom field values against their definitions.
type Doc struct {
	Type               string                   `json:"type"`
	FirstName          *string                  `json:"firstName,omitempty"`
	LastName           *string                  `json:"lastName,omitempty"`
	Email              *string                  `json:"email,omitempty"`
	Phones             []PhoneInput             `json:"phones,omitempty"`
	OwnerID            *string                  `json:"ownerId,omitempty"`
	Tags               []string                 `json:"tags,omitempty"`
	Labels             []string                 `json:"labels,omitempty"`
	CustomFields       map[string]any           `json:"customFields,omitempty"`
	ExternalReferences []schematype.ExternalRef `json:"externalReferences,omitempty"`
	WriteMode          *string                  `json:"writeMode,omitempty"`
	Address            map[string]any           `json:"address,omitempty"`
	Personal           map[string]any           `json:"personal,omitempty"`
	Profession         map[string]any           `json:"profession,omitempty"`
	Health             map[string]any           `json:"health,omitempty"`
	Bank               map[string]any           `json:"bank,omitempty"`
	Income             map[string]any           `json:"income,omitempty"`
	Identity           map[string]any           `json:"identity,omitempty"`
	SocialInsuranceTax map[string]any           `json:"socialInsuranceTax,omitempty"`
	Pension            map[string]any           `json:"pension,omitempty"`
	Business           map[string]any           `json:"business,omitempty"`
}

// groups returns pointers to the group fields of d by group name.
func (d *Doc) groups() map[string]*map[string]any {
	return map[string]*map[string]any{"address": &d.Address, "personal": &d.Personal, "profession": &d.Profession,
		"health": &d.Health, "bank": &d.Bank, "income": &d.Income, "identity": &d.Identity,
		"socialInsuranceTax": &d.SocialInsuranceTax, "pension": &d.Pension, "business": &d.Business}
}

// Groups returns the groups of d that hold something.
func (d *Doc) Groups() map[string]map[string]any {
	out := map[string]map[string]any{}
	for g, p := range d.groups() {
		if len(*p) > 0 {
			out[g] = *p
		}
	}
	return out
}

// SetGroups replaces the groups of d.
func (d *Doc) SetGroups(gs map[string]map[string]any) {
	for g, p := range d.groups() {
		*p = gs[g]
	}
}

// CompanyName is business.companyName of d.
func (d *Doc) CompanyName() string {
	s, _ := d.Business["companyName"].(string)
	return strings.TrimSpace(s)
}

var reColor = regexp.MustCompile(`^[a-z]+$`)

// check validates d as a whole contact (after a PATCH merged into it as well). phones says
// whether the document may carry phones (not in PATCH). It returns the cleaned groups.
func (d *Doc) check(v *errs.Invalid, phones bool, now time.Time) map[string]map[string]any {
	switch d.Type {
	case TypePrivate:
		v.Check("firstName", strings.TrimSpace(ptr.Deref(d.FirstName)) != "", "required", "a private contact needs a first name")
		v.Check("lastName", strings.TrimSpace(ptr.Deref(d.LastName)) != "", "required", "a private contact needs a last name")
	case TypeBusiness:
		v.Check("business.companyName", d.CompanyName() != "", "required", "a business contact needs business.companyName")
	default:
		v.Add("type", "invalid_enum", "must be private or business")
	}
	return d.checkValues(v, phones, now)
}

// checkValues validates every value d holds, without asking for the fields a contact of its
// type needs (check does): what a ContactPatch can be checked for on its own (CheckPatch).
func (d *Doc) checkValues(v *errs.Invalid, phones bool, now time.Time) map[string]map[string]any {
	f := Fields{FirstName: d.FirstName, LastName: d.LastName, Email: d.Email, Phones: d.Phones, OwnerID: d.OwnerID}
	f.Check(v, "")
	if !phones && d.Phones != nil {
		v.Add("phones", "not_patchable", "phones change through /contacts/{contactId}/phones")
	}
	v.Check("tags", len(d.Tags) <= MaxTags, "too_many", fmt.Sprintf("at most %d tags", MaxTags))
	for i, t := range d.Tags {
		name := fmt.Sprintf("tags.%d", i)
		n := utf8.RuneCountInString(strings.TrimSpace(t))
		v.Check(name, n >= 1 && n <= MaxTag, "invalid_length", fmt.Sprintf("must have 1 to %d characters", MaxTag))
		check.Text(v, name, t)
	}
	colors := FieldCatalog().LabelColors
	v.Check("labels", len(d.Labels) <= MaxLabels, "too_many", fmt.Sprintf("at most %d labels", MaxLabels))
	for i, l := range d.Labels {
		v.Check(fmt.Sprintf("labels.%d", i), reColor.MatchString(l) && slices.Contains(colors, l), "invalid_enum",
			"must be one of "+strings.Join(colors, ", "))
	}
	if d.WriteMode != nil {
		v.Check("writeMode", slices.Contains(WriteModes, *d.WriteMode), "invalid_enum", "must be one of "+strings.Join(WriteModes, ", "))
	}
	extref.Check(v, d.ExternalReferences)
	if d.Type != TypePrivate && d.Type != TypeBusiness {
		return nil
	}
	return CheckGroups(v, d.Type, d.Groups(), now)
}

// CheckPatch validates patch, a ContactPatch (RFC 7396 merge patch) for a contact of type typ
// ("" when unknown: the groups are then not checked), on its own, by the rules of Doc.check:
// server-owned fields, the shape (unknown fields, JSON types) and every value it sets. What the
// merged contact must hold (a private contact's names) is checked when it is written. Lead
// conversion checks its overrides with it; errors are named prefix + the field's path.
func CheckPatch(v *errs.Invalid, prefix, typ string, patch map[string]any, now time.Time) {
	if patch == nil {
		return
	}
	var own errs.Invalid
	rest := maps.Clone(patch)
	for _, f := range httpx.ServerOwned {
		if _, ok := patch[f]; ok {
			own.Add(f, "read_only_field", "is set by the server and cannot be patched")
			delete(rest, f)
		}
	}
	if t, ok := patch["type"]; ok && (typ == "" || t != typ) {
		own.Add("type", "immutable", "the type of the contact is contactType")
	}
	d := Doc{Type: typ}
	err := jsondoc.ApplyPatch(&d, rest)
	if err != nil {
		var bad *errs.Invalid
		if !errors.As(err, &bad) {
			bad = &errs.Invalid{}
			bad.Add("", "invalid_type", err.Error())
		}
		own.Errors = append(own.Errors, bad.Errors...)
	} else {
		d.Type = typ
		d.checkValues(&own, false, now)
	}
	if pe, ok := errs.Prefixed(own.Err(), prefix).(*errs.Invalid); ok {
		v.Errors = append(v.Errors, pe.Errors...)
	}
}

// ownerID is d.OwnerID parsed (valid after check).
func (d *Doc) ownerID() *uuid.UUID {
	if d.OwnerID == nil {
		return nil
	}
	id, err := uuid.Parse(*d.OwnerID)
	if err != nil {
		return nil
	}
	return &id
}

// cleanTags trims tags and drops repeats (first wins), keeping their order.
func cleanTags(tags []string) []string {
	out := []string{}
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// FillEmpty drops from patch every key whose value in cur is not empty today (writeMode
// fill_empty_only), recursing into objects (the field groups, customFields). Arrays count as
// one value: tags are set only while the contact has none.
func FillEmpty(cur, patch map[string]any) map[string]any {
	out := map[string]any{}
	for k, pv := range patch {
		cv, has := cur[k]
		if sub, ok := pv.(map[string]any); ok {
			cm, _ := cv.(map[string]any)
			if f := FillEmpty(cm, sub); len(f) > 0 {
				out[k] = f
			}
			continue
		}
		if !has || isEmpty(cv) {
			out[k] = pv
		}
	}
	return out
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}
