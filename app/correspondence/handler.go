// Package correspondence serves insurer correspondence (issue 21): the catalog of transaction
// types and the correspondence cases, one per insurer, sent as e-mails through the e-mail
// area's Service.Send.
package correspondence

import (
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the correspondence endpoints.
type Handler struct {
	svc            *Service
	pager          *httpx.Pager
	idem           fiber.Handler
	get            fiber.Handler
	update, delete fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware of POST /correspondence-cases.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	version := func(c Case) int64 { return c.Version }
	return &Handler{svc: svc, pager: pager, idem: idem,
		// GET /correspondence-cases/{caseId}.
		get: httpx.Read[uuid.UUID, Case]{Key: httpx.PathID("caseId"), Get: svc.Get, Version: version,
			View: httpx.View(NewView)}.Handle,
		// PATCH /correspondence-cases/{caseId}: a merge patch read member by member (which
		// members it names decides 409 on a sent case); If-Match optional.
		update: httpx.Patch[uuid.UUID, Case, PatchInput]{Key: httpx.PathID("caseId"), Lock: svc.Lock,
			Version: version, Read: readPatch, Update: svc.Update, View: httpx.View(NewView)}.Handle,
		// DELETE /correspondence-cases/{caseId}: drafts only; If-Match optional.
		delete: httpx.Delete[uuid.UUID, Case]{Key: httpx.PathID("caseId"), Lock: svc.Lock,
			Version: version, Delete: svc.Delete}.Handle,
	}
}

// Mount registers the routes. r authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/correspondence/transaction-types", policy.Require("correspondence:read"), h.types)
	httpx.Collection{Path: "/correspondence-cases", Param: "caseId", Scope: "correspondence", Idem: h.idem,
		List: h.list, Create: h.create, Get: h.get, Update: h.update, Delete: h.delete}.Mount(r)
	r.Post("/correspondence-cases/:caseId/send", policy.Require("correspondence:write"), h.send)
}

// types handles GET /correspondence/transaction-types: the catalog, labels in the request's
// language.
func (h *Handler) types(c *fiber.Ctx) error {
	lang := httpx.Lang(c)
	return httpx.Data(c, catalog, func(t *Type) TypeView { return NewTypeView(t, lang) })
}

// list handles GET /correspondence-cases: Paged, oldest first.
func (h *Handler) list(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "correspondence-cases", parseListFilter, h.svc.List, oldestFirst, NewView)
}

// parseListFilter reads the query of GET /correspondence-cases; every bad parameter is listed.
func parseListFilter(c *fiber.Ctx, v *errs.Invalid) (f ListFilter, _ error) {
	f.UpdatedSince = httpx.QueryTime(c, v, "updatedSince")
	f.ContactID = httpx.QueryUUID(c, v, "contactId")
	f.ContractID = httpx.QueryUUID(c, v, "contractId")
	f.Statuses = httpx.QueryEnums(c, v, "status", schema.CorrespondenceStatuses)
	return f, nil
}

// create handles POST /correspondence-cases: 201 {data: [case, ...]}, one case per insurer.
// No Location or ETag: the answer is a list.
func (h *Handler) create(c *fiber.Ctx) error {
	cases, err := httpx.Call(c, h.svc.Create)
	if err != nil {
		return err
	}
	c.Status(fiber.StatusCreated)
	return httpx.Data(c, cases, NewView)
}

// readPatch reads the merge patch of PATCH /correspondence-cases/{caseId}.
func readPatch(c *fiber.Ctx, cur Case) (PatchInput, error) {
	patch, err := httpx.ReadMergePatch(c)
	if err != nil {
		return PatchInput{}, err
	}
	return patchOf(cur.CorrespondenceCase, patch)
}

// send handles POST /correspondence-cases/{caseId}/send: 200 with the sent case and its ETag.
func (h *Handler) send(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "caseId")
	if err != nil {
		return err
	}
	out, err := httpx.Call(c, func(ctx context.Context, in SendInput) (Case, error) { return h.svc.Send(ctx, id, in) })
	if err != nil {
		return err
	}
	return httpx.OK(c, NewView(out), out.Version)
}
