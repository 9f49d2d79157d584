package contacts

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/app/platform/jsondoc"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// SensitiveScope is the scope that reveals the sensitive groups.
const SensitiveScope = "contacts.sensitive:read"

// Handler serves the contact endpoints (the sub-resources live in their own files).
type Handler struct {
	svc              *Service
	pager            *httpx.Pager
	idem             fiber.Handler
	get, getExternal fiber.Handler
	update, delete   fiber.Handler
	createCustom     fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware of POST routes.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	version := func(c Contact) int64 { return c.Version }
	h := &Handler{svc: svc, pager: pager, idem: idem}
	// GET /contacts/{contactId} and GET /external/{source}/contacts/{externalId}: the key
	// checks the selection before anything is read, the view applies it.
	h.get = httpx.Read[uuid.UUID, Contact]{Key: withoutFields(contactKey), Get: svc.Find, Version: version,
		View: h.view}.Handle
	h.getExternal = httpx.Read[schematype.ExternalRef, Contact]{Key: withoutFields(external), Get: svc.GetByRef,
		Version: version, View: h.view}.Handle
	// PATCH /contacts/{contactId}: a merge patch of ContactPatch, If-Match required (428
	// without, 412 on a mismatch). Groups and customFields merge key by key, tags and labels
	// replace, null clears; writeMode fill_empty_only keeps every value set today.
	h.update = httpx.Patch[uuid.UUID, Contact, Doc]{Key: withoutFields(contactKey), Lock: svc.LockContact,
		Version: version, IfMatchRequired: true, Read: h.readPatch, Update: svc.Save, View: h.view}.Handle
	// DELETE /contacts/{contactId}: If-Match required.
	h.delete = httpx.Delete[uuid.UUID, Contact]{Key: httpx.PathID("contactId"), Lock: svc.LockContact,
		Version: version, IfMatchRequired: true, Delete: svc.Delete}.Handle
	// POST /custom-fields: a definition never changes, so its ETag is immutableVersion; it has
	// no Location (there is no GET of one definition).
	h.createCustom = httpx.Create[CustomFieldInput, *ent.CustomFieldDefinition]{Create: svc.CreateCustomField,
		Version: func(*ent.CustomFieldDefinition) int64 { return immutableVersion },
		View:    httpx.View(NewCustomFieldView)}.Handle
	return h
}

// Mount registers the routes. r authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/contacts", policy.Require("contacts:read"), h.list)
	r.Post("/contacts", policy.Require("contacts:write"), h.idem, h.create)
	r.Post("/contacts/match", policy.Require("contacts:read"), h.match)
	r.Post("/contacts/bulk", policy.Require("contacts:write"), h.idem, h.bulk)
	r.Get("/contacts/:contactId", policy.Require("contacts:read"), h.get)
	r.Patch("/contacts/:contactId", policy.Require("contacts:write"), h.update)
	r.Delete("/contacts/:contactId", policy.Require("contacts:write"), h.delete)
	r.Get("/external/:source/contacts/:externalId", policy.Require("contacts:read"), h.getExternal)
	r.Put("/external/:source/contacts/:externalId", policy.Require("contacts:write"), h.putExternal)
	r.Get("/contact-fields", policy.Require("contacts:read"), h.fields)
	r.Get("/custom-fields", policy.Require("contacts:read"), h.listCustom)
	r.Post("/custom-fields", policy.Require("admin:write"), h.createCustom)
}

func location(id string) string { return httpx.URL("contacts", id) }

// selection reads `fields` (comma-separated groups; default all) and drops the sensitive
// groups unless the credential has contacts.sensitive:read: they are then absent, never an
// error. An unknown group is 422 unknown_group.
func selection(c *fiber.Ctx) (Selection, error) {
	cat := FieldCatalog()
	sel := Selection{}
	if s := c.Query("fields"); s != "" {
		var v errs.Invalid
		for _, g := range strings.Split(s, ",") {
			g = strings.TrimSpace(g)
			if !containsStr(cat.GroupNames(), g) {
				v.Add("fields", "unknown_group", "must list groups of "+strings.Join(cat.GroupNames(), ", "))
				continue
			}
			sel[g] = true
		}
		if err := v.Err(); err != nil {
			return nil, err
		}
	} else {
		for _, g := range cat.GroupNames() {
			sel[g] = true
		}
	}
	if !MaySeeSensitive(c) {
		for g := range sel {
			if cat.Sensitive(g) {
				delete(sel, g)
			}
		}
	}
	return sel, nil
}

// Readable is every group the request's credential may read: what an answer carries when the
// operation has no `fields` (lead conversion).
func Readable(c *fiber.Ctx) Selection {
	sel := Selection{}
	cat := FieldCatalog()
	for _, g := range cat.GroupNames() {
		sel[g] = !cat.Sensitive(g) || MaySeeSensitive(c)
	}
	return sel
}

// MaySeeSensitive reports whether the request's credential has contacts.sensitive:read.
func MaySeeSensitive(c *fiber.Ctx) bool {
	p, ok := tenancy.PrincipalFrom(c.UserContext())
	return ok && policy.Default().Check(p, SensitiveScope) == nil
}

// list handles GET /contacts: Paged, in the order of sort (default newest first). The keyset
// is the one sort names, and the view decrypts the groups fields selects, which may fail.
func (h *Handler) list(c *fiber.Ctx) error {
	return httpx.ServeListFor(c, h.pager, "contacts", parseListFilter, h.svc.List,
		func(f ListFilter) (paging.Keyset[Contact], func(Contact) (View, error)) {
			return sorts[f.Sort], func(r Contact) (View, error) { return h.svc.View(r, f.Fields) }
		})
}

// parseListFilter reads the query of GET /contacts; every bad parameter is listed.
func parseListFilter(c *fiber.Ctx, v *errs.Invalid) (f ListFilter, _ error) {
	f.UpdatedSince = httpx.QueryTime(c, v, "updatedSince")
	raw := c.Query("q")
	f.Search = strings.ToLower(strings.TrimSpace(raw))
	if raw != "" {
		n := utf8.RuneCountInString(f.Search)
		v.Check("q", n >= MinSearch, "too_short", fmt.Sprintf("needs at least %d characters", MinSearch))
		v.Check("q", n <= MaxSearch, "too_long", fmt.Sprintf("at most %d characters", MaxSearch))
		check.Text(v, "q", f.Search)
	}
	if s := c.Query("type"); s != "" {
		v.Check("type", s == TypePrivate || s == TypeBusiness, "invalid_enum", "must be private or business")
		f.Type = strings.Clone(s)
	}
	if s := c.Query("email"); s != "" {
		f.EmailKey = identity.EmailKey(s)
	}
	if s := c.Query("phone"); s != "" {
		key, ok := identity.PhoneKey(s)
		v.Check("phone", ok, "invalid_phone", "must be a phone number")
		f.PhoneKey = key
	}
	f.Tags = splitList(c.Query("tag"))
	f.Labels = splitList(c.Query("label"))
	colors := FieldCatalog().LabelColors
	for _, l := range f.Labels {
		v.Check("label", slices.Contains(colors, l), "invalid_enum", "must list colours of "+strings.Join(colors, ", "))
	}
	f.OwnerID = httpx.QueryUUID(c, v, "ownerId")
	f.Sort = c.Query("sort", "-createdAt")
	if _, ok := sorts[f.Sort]; !ok {
		v.Add("sort", "invalid_enum", "must be one of "+strings.Join(SortNames, ", "))
		f.Sort = "-createdAt"
	}
	f.Sort = strings.Clone(f.Sort)
	sel, err := selection(c)
	var inv *errs.Invalid
	if errors.As(err, &inv) {
		v.Errors = append(v.Errors, inv.Errors...)
	}
	f.Fields = sel
	return f, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(out, p) {
			out = append(out, strings.Clone(p))
		}
	}
	return out
}

// view is the answer of a contact: the groups `fields` selects (checked by then).
func (h *Handler) view(c *fiber.Ctx, ct Contact) (any, error) {
	sel, err := selection(c)
	if err != nil {
		return nil, err
	}
	return h.svc.View(ct, sel)
}

// contactKey reads the path's contact and the field selection: a bad one of either is refused
// before anything is read.
func contactKey(c *fiber.Ctx) (uuid.UUID, Selection, error) {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return id, nil, err
	}
	sel, err := selection(c)
	return id, sel, err
}

// withoutFields makes a key that checks the selection a recipe's Key (its View reads it again).
func withoutFields[K any](key func(*fiber.Ctx) (K, Selection, error)) func(*fiber.Ctx) (K, error) {
	return func(c *fiber.Ctx) (K, error) {
		k, _, err := key(c)
		return k, err
	}
}

// create handles POST /contacts.
func (h *Handler) create(c *fiber.Ctx) error {
	sel, err := selection(c)
	if err != nil {
		return err
	}
	ct, err := httpx.Call(c, h.svc.Create)
	if err != nil {
		return err
	}
	return h.answer(c, sel, ct, true)
}

// readPatch is the merged document of a PATCH: the body merged into the contact's document
// (FillEmptyIfAsked first).
func (h *Handler) readPatch(c *fiber.Ctx, cur Contact) (Doc, error) {
	patch, err := httpx.ReadMergePatch(c)
	if err != nil {
		return Doc{}, err
	}
	d, err := h.svc.DocOf(cur.Contact)
	if err != nil {
		return Doc{}, err
	}
	if patch, err = FillEmptyIfAsked(d, patch); err != nil {
		return Doc{}, err
	}
	err = jsondoc.ApplyPatch(&d, patch)
	return d, err
}

// FillEmptyIfAsked narrows patch to the fields empty in d when it says writeMode
// fill_empty_only.
func FillEmptyIfAsked(d Doc, patch map[string]any) (map[string]any, error) {
	if patch["writeMode"] != WriteModeFillEmpty {
		return patch, nil
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	var cur map[string]any
	if err := json.Unmarshal(b, &cur); err != nil {
		return nil, err
	}
	return FillEmpty(cur, patch), nil
}

// fields handles GET /contact-fields: the catalog.
func (h *Handler) fields(c *fiber.Ctx) error {
	lang := httpx.Lang(c)
	cat := FieldCatalog()
	type entry struct {
		Key          string   `json:"key"`
		Group        string   `json:"group"`
		Label        string   `json:"label"`
		DataType     string   `json:"dataType"`
		Format       *string  `json:"format"`
		Options      []string `json:"options"`
		MaxLength    *int     `json:"maxLength"`
		Min          *int64   `json:"min"`
		Max          *int64   `json:"max"`
		Sensitive    bool     `json:"sensitive"`
		ContactTypes []string `json:"contactTypes"`
	}
	out := make([]entry, len(cat.Fields))
	for i, f := range cat.Fields {
		e := entry{Key: f.Key, Group: f.Group, Label: f.Label[lang], DataType: f.DataType, Options: f.Options,
			Min: f.Min, Max: f.Max, Sensitive: cat.Sensitive(f.Group), ContactTypes: f.ContactTypes}
		if f.Format != "" {
			e.Format = &f.Format
		}
		if f.MaxLength > 0 {
			e.MaxLength = &f.MaxLength
		}
		if e.Options == nil {
			e.Options = []string{}
		}
		out[i] = e
	}
	return c.JSON(fiber.Map{"data": out, "labelColors": cat.LabelColors})
}

// listCustom handles GET /custom-fields.
func (h *Handler) listCustom(c *fiber.Ctx) error {
	defs, err := h.svc.CustomFields(c.UserContext())
	if err != nil {
		return err
	}
	return httpx.Data(c, defs, NewCustomFieldView)
}
