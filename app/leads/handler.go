package leads

import (
	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Handler serves the lead endpoints.
type Handler struct {
	svc   *Service
	pager *httpx.Pager
	idem  fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware POST /leads uses.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	return &Handler{svc: svc, pager: pager, idem: idem}
}

// Mount registers the routes. r authenticates every route it registers. Every route needs the
// feature leads: the leads scopes carry it, POST /lead-stages (scope admin:write) checks it.
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/leads", policy.Require("leads:read"), h.list)
	r.Post("/leads", policy.Require("leads:write"), h.idem, h.create)
	r.Delete("/leads", policy.Require("leads:write"), h.deleteTest)
	r.Get("/leads/:leadId", policy.Require("leads:read"), h.get)
	r.Patch("/leads/:leadId", policy.Require("leads:write"), h.update)
	r.Delete("/leads/:leadId", policy.Require("leads:write"), h.delete)
	r.Post("/leads/:leadId/convert", policy.Require("leads:write"), policy.Require("contacts:write"), h.convert)
	r.Get("/leads/:leadId/attachments/:attachmentId/content", policy.Require("leads:read"), h.content)
	r.Get("/contacts/:contactId/attachments/:attachmentId/content", policy.Require("contacts:read"), h.contactContent)
	r.Put("/external/:source/leads/:externalId", policy.Require("leads:write"), h.upsert)
	r.Get("/lead-stages", policy.Require("leads:read"), h.listStages)
	r.Post("/lead-stages", requireFeature("leads"), policy.Require("admin:write"), h.createStage)
}

// requireFeature refuses a company whose license lacks feature, for routes whose scope
// belongs to no feature.
func requireFeature(feature string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, ok := tenancy.PrincipalFrom(c.UserContext())
		if !ok {
			return errs.Unauthenticated("missing_credential", "no credential")
		}
		if !p.HasFeature(feature) {
			return errs.Forbidden("feature_not_licensed", "the company's license does not include the feature %s", feature)
		}
		return c.Next()
	}
}

func location(l Lead) string { return "/api/public/v1/leads/" + l.ID.String() }

// list handles GET /leads: Paged, oldest first (createdAt, id); test leads only with
// includeTest=true.
func (h *Handler) list(c *fiber.Ctx) error {
	var v errs.Invalid
	f, binding := parseListFilter(c, &v)
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
	return httpx.WritePage(c, page, rows, func(l Lead) []string {
		return httpx.CreatedKey(l.CreatedAt, l.ID)
	}, httpx.Plain(Lead.View))
}

// create handles POST /leads.
func (h *Handler) create(c *fiber.Ctx) error {
	var in Input
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	l, err := h.svc.Create(c.UserContext(), in)
	if err != nil {
		return err
	}
	return httpx.Created(c, location(l), l.View(), l.Version)
}

// get handles GET /leads/{leadId}.
func (h *Handler) get(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "leadId")
	if err != nil {
		return err
	}
	l, err := h.svc.Get(c.UserContext(), id)
	if err != nil {
		return err
	}
	return httpx.OK(c, l.View(), l.Version)
}

// update handles PATCH /leads/{leadId}: a merge patch of LeadInput; If-Match optional.
func (h *Handler) update(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "leadId")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	cur, err := h.svc.Lock(ctx, id)
	if err != nil {
		return err
	}
	if err := httpx.IfMatch(c, cur.Version, false); err != nil {
		return err
	}
	in := patchInput{inputOf(cur)}
	if err := httpx.MergePatch(c, &in); err != nil {
		return err
	}
	l, err := h.svc.Update(ctx, cur, in.Input)
	if err != nil {
		return err
	}
	return httpx.OK(c, l.View(), l.Version)
}

// delete handles DELETE /leads/{leadId}; If-Match optional.
func (h *Handler) delete(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "leadId")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	l, err := h.svc.Lock(ctx, id)
	if err != nil {
		return err
	}
	if err := httpx.IfMatch(c, l.Version, false); err != nil {
		return err
	}
	if err := h.svc.Delete(ctx, l); err != nil {
		return err
	}
	return httpx.NoContent(c)
}

// deleteTest handles DELETE /leads?test=true: removes the company's test leads, up to
// MaxTestDelete per call. The parameter is required so that no call deletes real leads.
func (h *Handler) deleteTest(c *fiber.Ctx) error {
	if c.Query("test") != "true" {
		return errs.InvalidField("test", "required", "only test leads can be deleted together: send test=true")
	}
	n, more, err := h.svc.DeleteTest(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"deleted": n, "hasMore": more})
}
