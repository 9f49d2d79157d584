package contacts

import (
	"encoding/json"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// SensitiveScope is the scope that reveals the sensitive groups.
const SensitiveScope = "contacts.sensitive:read"

// Handler serves the contact endpoints (the sub-resources live in their own files).
type Handler struct {
	svc   *Service
	pager *httpx.Pager
	idem  fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware of POST routes.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	return &Handler{svc: svc, pager: pager, idem: idem}
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

func location(id string) string { return "/api/public/v1/contacts/" + id }

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

// list handles GET /contacts.
func (h *Handler) list(c *fiber.Ctx) error {
	var v errs.Invalid
	f, binding := ParseListFilter(c, &v)
	sel, serr := selection(c)
	if perr, ok := serr.(*errs.Invalid); ok {
		v.Errors = append(v.Errors, perr.Errors...)
	}
	page, err := h.pager.Parse(c, binding)
	if perr, ok := err.(*errs.Invalid); ok {
		v.Errors = append(v.Errors, perr.Errors...)
	}
	if err := v.Err(); err != nil {
		return err
	}
	rows, err := h.svc.List(c.UserContext(), f, page.After, page.Limit)
	if err != nil {
		return err
	}
	return httpx.WritePage(c, page, rows, func(r Row) []string { return r.Key(f.Sort) },
		func(r Row) (View, error) { return h.svc.Render(r.Contact, r.Phones, sel) })
}

// create handles POST /contacts.
func (h *Handler) create(c *fiber.Ctx) error {
	sel, err := selection(c)
	if err != nil {
		return err
	}
	var d Doc
	if err := httpx.Decode(c, &d); err != nil {
		return err
	}
	ct, phones, err := h.svc.CreateDoc(c.UserContext(), d)
	if err != nil {
		return err
	}
	v, err := h.svc.Render(ct, phones, sel)
	if err != nil {
		return err
	}
	return httpx.Created(c, location(ct.ID.String()), v, ct.Version)
}

// get handles GET /contacts/{contactId}.
func (h *Handler) get(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	sel, err := selection(c)
	if err != nil {
		return err
	}
	ct, phones, err := h.svc.Get(c.UserContext(), id)
	if err != nil {
		return err
	}
	v, err := h.svc.Render(ct, phones, sel)
	if err != nil {
		return err
	}
	return httpx.OK(c, v, ct.Version)
}

// update handles PATCH /contacts/{contactId}: a merge patch of ContactPatch, If-Match
// required (428 without, 412 on a mismatch). Groups and customFields merge key by key, tags and
// labels replace, null clears; writeMode fill_empty_only keeps every value set today.
func (h *Handler) update(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	sel, err := selection(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	cur, phones, err := h.svc.Lock(ctx, id)
	if err != nil {
		return err
	}
	if err := httpx.IfMatch(c, cur.Version, true); err != nil {
		return err
	}
	patch, err := httpx.ReadMergePatch(c)
	if err != nil {
		return err
	}
	d, err := h.svc.DocOf(cur)
	if err != nil {
		return err
	}
	if patch, err = FillEmptyIfAsked(d, patch); err != nil {
		return err
	}
	if err := httpx.ApplyPatch(&d, patch); err != nil {
		return err
	}
	saved, err := h.svc.Update(ctx, cur, phones, d)
	if err != nil {
		return err
	}
	v, err := h.svc.Render(saved, phones, sel)
	if err != nil {
		return err
	}
	return httpx.OK(c, v, saved.Version)
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

// delete handles DELETE /contacts/{contactId}: If-Match required.
func (h *Handler) delete(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	cur, phones, err := h.svc.Lock(ctx, id)
	if err != nil {
		return err
	}
	if err := httpx.IfMatch(c, cur.Version, true); err != nil {
		return err
	}
	if err := h.svc.Delete(ctx, cur, phones); err != nil {
		return err
	}
	return httpx.NoContent(c)
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
	return c.JSON(fiber.Map{"data": defs})
}

// createCustom handles POST /custom-fields.
func (h *Handler) createCustom(c *fiber.Ctx) error {
	var in CustomFieldInput
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	d, err := h.svc.CreateCustomField(c.UserContext(), in)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderETag, httpx.ETag(immutableVersion))
	return c.Status(fiber.StatusCreated).JSON(d)
}
