package leads

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Handler serves the lead endpoints.
type Handler struct {
	svc            *Service
	pager          *httpx.Pager
	idem           fiber.Handler
	create, get    fiber.Handler
	update, delete fiber.Handler
	createStage    fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware POST /leads uses.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	// The recipes hold a Lead: the locked row (its attachments are loaded by Update and Delete).
	lock := func(ctx context.Context, id uuid.UUID) (Lead, error) {
		l, err := svc.Lock(ctx, id)
		return Lead{Lead: l}, err
	}
	version := func(l Lead) int64 { return l.Version }
	return &Handler{svc: svc, pager: pager, idem: idem,
		// POST /leads.
		create: httpx.Create[Input, Lead]{Create: svc.Create, Location: location, Version: version,
			View: httpx.View(Lead.View)}.Handle,
		// GET /leads/{leadId}.
		get: httpx.Read[uuid.UUID, Lead]{Key: httpx.PathID("leadId"), Get: svc.Get, Version: version,
			View: httpx.View(Lead.View)}.Handle,
		// PATCH /leads/{leadId}: a merge patch of LeadInput (stageId cannot be cleared); If-Match
		// optional.
		update: httpx.Patch[uuid.UUID, Lead, patchInput]{Key: httpx.PathID("leadId"), Lock: lock, Version: version,
			Input: func(l Lead) patchInput { return patchInput{inputOf(l.Lead)} },
			Update: func(ctx context.Context, l Lead, in patchInput) (Lead, error) {
				return svc.Update(ctx, l.Lead, in.Input)
			},
			View: httpx.View(Lead.View)}.Handle,
		// DELETE /leads/{leadId}; If-Match optional.
		delete: httpx.Delete[uuid.UUID, Lead]{Key: httpx.PathID("leadId"), Lock: lock, Version: version,
			Delete: func(ctx context.Context, l Lead) error { return svc.Delete(ctx, l.Lead) }}.Handle,
		// POST /lead-stages. No Location: stages have no URL of their own yet (GET /lead-stages
		// lists them). Nothing changes a stage after its creation, so its ETag names version 1.
		createStage: httpx.Create[StageInput, *ent.LeadStage]{Create: svc.CreateStage,
			Version: func(*ent.LeadStage) int64 { return 1 }, View: httpx.View(NewStageView)}.Handle,
	}
}

// Mount registers the routes. r authenticates every route it registers. Every route needs the
// feature leads: the leads scopes carry it, POST /lead-stages (scope admin:write) checks it.
func (h *Handler) Mount(r fiber.Router) {
	httpx.Collection{Path: "/leads", Param: "leadId", Scope: "leads", Idem: h.idem, List: h.list,
		Create: h.create, Get: h.get, Update: h.update, Delete: h.delete}.Mount(r)
	r.Delete("/leads", policy.Require("leads:write"), h.deleteTest)
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

func location(l Lead) string { return httpx.URL("leads", l.ID.String()) }

// list handles GET /leads: Paged, oldest first (createdAt, id); test leads only with
// includeTest=true.
func (h *Handler) list(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "leads", parseListFilter, h.svc.List, oldestFirst, Lead.View)
}

// Search bounds (characters).
const (
	MinSearch = 2
	MaxSearch = 100
)

// parseListFilter reads the query of GET /leads; every bad parameter is listed.
func parseListFilter(c *fiber.Ctx, v *errs.Invalid) (f ListFilter, _ error) {
	f.UpdatedSince = httpx.QueryTime(c, v, "updatedSince")
	f.Search = strings.Clone(strings.TrimSpace(c.Query("search")))
	if n := utf8.RuneCountInString(f.Search); c.Query("search") != "" {
		v.Check("search", n >= MinSearch, "too_short", fmt.Sprintf("needs at least %d characters", MinSearch))
		v.Check("search", n <= MaxSearch, "too_long", fmt.Sprintf("at most %d characters", MaxSearch))
		check.Text(v, "search", f.Search)
	}
	f.StageID = httpx.QueryUUID(c, v, "stageId")
	f.OwnerID = httpx.QueryUUID(c, v, "ownerId")
	f.Source = httpx.QueryEnum(c, v, "source", schema.LeadSources)
	f.Converted = httpx.QueryBool(c, v, "converted")
	if b := httpx.QueryBool(c, v, "includeTest"); b != nil {
		f.IncludeTest = *b
	}
	return f, nil
}

// deleteTest handles DELETE /leads?test=true: removes the company's test leads, up to
// MaxTestDelete per call. The parameter is required so that no call deletes real leads.
func (h *Handler) deleteTest(c *fiber.Ctx) error {
	if c.Query("test") != "true" {
		return errs.InvalidField("test", "required", "only test leads can be deleted together: send test=true")
	}
	d, err := h.svc.DeleteTest(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"deleted": d.Deleted, "hasMore": d.More})
}
