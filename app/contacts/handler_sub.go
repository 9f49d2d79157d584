package contacts

import (
	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/policy"
)

// SubHandler serves the sub-resources of a contact: phones, relationships, household finances,
// activities and notes. Every route answers 404 for a contact the credential cannot see
// (another company's, or outside the user's visibility).
type SubHandler struct {
	svc   *Service
	pager *httpx.Pager
}

// NewSubHandler builds the handler.
func NewSubHandler(svc *Service, pager *httpx.Pager) *SubHandler {
	return &SubHandler{svc: svc, pager: pager}
}

// Mount registers the routes. r authenticates every route it registers.
func (h *SubHandler) Mount(r fiber.Router) {
	r.Post("/contacts/:contactId/phones", policy.Require("contacts:write"), h.createPhone)
	r.Patch("/contacts/:contactId/phones/:phoneId", policy.Require("contacts:write"), h.updatePhone)
	r.Delete("/contacts/:contactId/phones/:phoneId", policy.Require("contacts:write"), h.deletePhone)
	r.Get("/contacts/:contactId/relationships", policy.Require("contacts:read"), h.listRelationships)
	r.Post("/contacts/:contactId/relationships", policy.Require("contacts:write"), h.createRelationship)
	r.Delete("/contacts/:contactId/relationships/:relationshipId", policy.Require("contacts:write"), h.deleteRelationship)
	r.Get("/contacts/:contactId/finance", policy.Require("contacts:read"), h.getFinance)
	r.Put("/contacts/:contactId/finance", policy.Require("contacts:write"), h.putFinance)
	r.Get("/contacts/:contactId/activities", policy.Require("activities:read"), h.listActivities)
	r.Post("/contacts/:contactId/notes", policy.Require("activities:write"), h.createNote)
	r.Get("/contacts/:contactId/notes/:noteId", policy.Require("activities:read"), h.getNote)
	r.Patch("/contacts/:contactId/notes/:noteId", policy.Require("activities:write"), h.updateNote)
	r.Delete("/contacts/:contactId/notes/:noteId", policy.Require("activities:write"), h.deleteNote)
}

// immutableVersion is the version in the ETag of a resource that never changes after creation
// (a relationship, a custom field definition): the spec gives every single-resource answer an
// ETag, and these have no version column (lead stages answer "1" alike).
const immutableVersion = 1

func contactPath(c *fiber.Ctx) string { return "/api/public/v1/contacts/" + c.Params("contactId") }

// createPhone handles POST /contacts/{contactId}/phones.
func (h *SubHandler) createPhone(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	in := PhoneBody{create: true}
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	p, version, err := h.svc.CreatePhone(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	return httpx.Created(c, contactPath(c), p, version)
}

// updatePhone handles PATCH /contacts/{contactId}/phones/{phoneId}.
func (h *SubHandler) updatePhone(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	pid, err := httpx.UUIDParam(c, "phoneId")
	if err != nil {
		return err
	}
	var in PhoneBody
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	p, version, err := h.svc.UpdatePhone(c.UserContext(), id, pid, in)
	if err != nil {
		return err
	}
	return httpx.OK(c, p, version)
}

// deletePhone handles DELETE /contacts/{contactId}/phones/{phoneId}.
func (h *SubHandler) deletePhone(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	pid, err := httpx.UUIDParam(c, "phoneId")
	if err != nil {
		return err
	}
	if err := h.svc.DeletePhone(c.UserContext(), id, pid); err != nil {
		return err
	}
	return httpx.NoContent(c)
}

// listRelationships handles GET /contacts/{contactId}/relationships: one page, oldest first.
func (h *SubHandler) listRelationships(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	rs, err := h.svc.Relationships(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": rs})
}

// createRelationship handles POST /contacts/{contactId}/relationships.
func (h *SubHandler) createRelationship(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	var in RelationshipBody
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	r, err := h.svc.CreateRelationship(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	return httpx.Created(c, contactPath(c)+"/relationships", r, immutableVersion)
}

// deleteRelationship handles DELETE /contacts/{contactId}/relationships/{relationshipId}.
func (h *SubHandler) deleteRelationship(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	rid, err := httpx.UUIDParam(c, "relationshipId")
	if err != nil {
		return err
	}
	if err := h.svc.DeleteRelationship(c.UserContext(), id, rid); err != nil {
		return err
	}
	return httpx.NoContent(c)
}

// getFinance handles GET /contacts/{contactId}/finance.
func (h *SubHandler) getFinance(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	f, err := h.svc.Finance(c.UserContext(), id)
	if err != nil {
		return err
	}
	// An ETag also before the first write ("0"): every single-resource answer carries one, and
	// If-Match: "0" on PUT then means "only if nobody has written them yet".
	c.Set(fiber.HeaderETag, httpx.ETag(f.Version()))
	return c.JSON(f)
}

// putFinance handles PUT /contacts/{contactId}/finance; If-Match optional.
func (h *SubHandler) putFinance(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	cur, err := h.svc.LockFinance(ctx, id)
	if err != nil {
		return err
	}
	var version int64
	if cur != nil {
		version = cur.Version
	}
	if err := httpx.IfMatch(c, version, false); err != nil {
		return err
	}
	var in FinanceBody
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	f, err := h.svc.PutFinance(ctx, id, cur, in)
	if err != nil {
		return err
	}
	return httpx.OK(c, f, f.Version())
}

// listActivities handles GET /contacts/{contactId}/activities: Paged, newest first, filter
// by kind.
func (h *SubHandler) listActivities(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	var v errs.Invalid
	kinds := ParseActivityFilter(c.Query("filter"), &v)
	binding := "activities?contact=" + id.String() + "&filter="
	for _, k := range kinds {
		binding += k + ","
	}
	page, err := h.pager.Parse(c, binding)
	if perr, ok := err.(*errs.Invalid); ok {
		v.Errors = append(v.Errors, perr.Errors...)
	}
	if err := v.Err(); err != nil {
		return err
	}
	rows, err := h.svc.Activities(c.UserContext(), id, kinds, page.After, page.Limit)
	if err != nil {
		return err
	}
	return httpx.WritePage(c, page, rows, func(a Activity) []string {
		return httpx.CreatedKey(a.OccurredAt, a.ID)
	}, httpx.Plain(func(a Activity) Activity { return a }))
}

func notePath(c *fiber.Ctx, a Activity) string { return contactPath(c) + "/notes/" + a.ID.String() }

// createNote handles POST /contacts/{contactId}/notes.
func (h *SubHandler) createNote(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	var in NoteBody
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	a, err := h.svc.CreateNote(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	return httpx.Created(c, notePath(c, a), a, a.Version())
}

// getNote handles GET /contacts/{contactId}/notes/{noteId} (ours: the Location of a new note).
func (h *SubHandler) getNote(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	nid, err := httpx.UUIDParam(c, "noteId")
	if err != nil {
		return err
	}
	_, n, err := h.svc.Note(c.UserContext(), id, nid, false)
	if err != nil {
		return err
	}
	return httpx.OK(c, NewActivity(n), n.Version)
}

// updateNote handles PATCH /contacts/{contactId}/notes/{noteId}: content only; If-Match
// optional.
func (h *SubHandler) updateNote(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	nid, err := httpx.UUIDParam(c, "noteId")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	ct, n, err := h.svc.Note(ctx, id, nid, true)
	if err != nil {
		return err
	}
	if err := httpx.IfMatch(c, n.Version, false); err != nil {
		return err
	}
	in := NoteBody{patch: true}
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	a, err := h.svc.UpdateNote(ctx, ct, n, in)
	if err != nil {
		return err
	}
	return httpx.OK(c, a, a.Version())
}

// deleteNote handles DELETE /contacts/{contactId}/notes/{noteId}; If-Match optional. E-mails
// and system entries are no notes: 404.
func (h *SubHandler) deleteNote(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	nid, err := httpx.UUIDParam(c, "noteId")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	ct, n, err := h.svc.Note(ctx, id, nid, true)
	if err != nil {
		return err
	}
	if err := httpx.IfMatch(c, n.Version, false); err != nil {
		return err
	}
	if err := h.svc.DeleteNote(ctx, ct, n); err != nil {
		return err
	}
	return httpx.NoContent(c)
}
