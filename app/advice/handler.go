package advice

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/documents"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/jsondoc"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the advice record endpoints.
type Handler struct {
	svc                 *Service
	pager               *httpx.Pager
	idem                fiber.Handler
	create, get, update fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware of the two POSTs.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	version := func(a *ent.AdviceRecord) int64 { return a.Version }
	return &Handler{svc: svc, pager: pager, idem: idem,
		// POST /advice-records.
		create: httpx.Create[Input, *ent.AdviceRecord]{Create: svc.Create, Location: location, Version: version,
			View: httpx.View(NewView)}.Handle,
		// GET /advice-records/{adviceRecordId}.
		get: httpx.Read[uuid.UUID, *ent.AdviceRecord]{Key: httpx.PathID("adviceRecordId"), Get: svc.Get, Version: version,
			View: httpx.View(NewView)}.Handle,
		// PATCH /advice-records/{adviceRecordId}: a merge patch of the record's input (not its
		// contact); If-Match optional; 409 once locked.
		update: httpx.Patch[uuid.UUID, *ent.AdviceRecord, Input]{Key: httpx.PathID("adviceRecordId"), Lock: svc.Lock,
			Version: version, Read: readPatch, Update: svc.Update, View: httpx.View(NewView)}.Handle,
	}
}

func location(a *ent.AdviceRecord) string { return httpx.URL("advice-records", a.ID.String()) }

// Mount registers the routes. r authenticates every route it registers. Advice records are
// IDD documentation: there is no DELETE (a record goes only with its contact). Rendering the
// protocol files a document, so it needs documents:write beside advice:write.
func (h *Handler) Mount(r fiber.Router) {
	read, write := policy.Require("advice:read"), policy.Require("advice:write")
	r.Get("/advice-records", read, h.list)
	r.Post("/advice-records", write, h.idem, h.create)
	r.Get("/advice-records/:adviceRecordId", read, h.get)
	r.Patch("/advice-records/:adviceRecordId", write, h.update)
	r.Post("/advice-records/:adviceRecordId/document", write, policy.Require("documents:write"), h.idem, h.renderDoc)
}

// list handles GET /advice-records: Paged, oldest first.
func (h *Handler) list(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "advice-records", parseListFilter, h.svc.List, oldestFirst, NewView)
}

// parseListFilter reads the query of GET /advice-records; every bad parameter is listed.
func parseListFilter(c *fiber.Ctx, v *errs.Invalid) (f ListFilter, _ error) {
	f.UpdatedSince = httpx.QueryTime(c, v, "updatedSince")
	f.ContactID = httpx.QueryUUID(c, v, "contactId")
	return f, nil
}

// renderDoc handles POST /advice-records/{adviceRecordId}/document: 201 with the Document and
// its Location, no ETag (a document has no versions). No body: what the protocol says is the
// record's.
func (h *Handler) renderDoc(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "adviceRecordId")
	if err != nil {
		return err
	}
	d, err := h.svc.RenderDocument(c.UserContext(), id)
	if err != nil {
		return err
	}
	return httpx.Created(c, httpx.URL("documents", d.ID.String()), documents.NewView(d), 0)
}

// readPatch reads the merge patch of PATCH /advice-records/{adviceRecordId} onto the stored
// record's input. The contact is the record's for good: naming it is 422 immutable.
func readPatch(c *fiber.Ctx, cur *ent.AdviceRecord) (Input, error) {
	patch, err := httpx.ReadMergePatch(c)
	if err != nil {
		return Input{}, err
	}
	if _, ok := patch["contactId"]; ok {
		return Input{}, errs.InvalidField("contactId", "immutable", "an advice record stays with its contact")
	}
	in := inputOf(cur)
	return in, jsondoc.ApplyPatch(&in, patch)
}
