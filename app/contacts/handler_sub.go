package contacts

import (
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/policy"
)

// SubHandler serves the sub-resources of a contact: phones, relationships, household finances,
// activities and notes. Every route answers 404 for a contact the credential cannot see
// (another company's, or outside the user's visibility).
type SubHandler struct {
	svc                                *Service
	pager                              *httpx.Pager
	putFinance, updateNote, deleteNote fiber.Handler
	deletePhone, deleteRelationship    fiber.Handler
	listRelationships, getNote         fiber.Handler
	getFinance                         fiber.Handler
}

// NewSubHandler builds the handler.
func NewSubHandler(svc *Service, pager *httpx.Pager) *SubHandler {
	noteVersion := func(n Note) int64 { return n.Version }
	lockNote := func(ctx context.Context, id httpx.ChildID) (Note, error) { return svc.LockNote(ctx, id.Parent, id.ID) }
	findNote := func(ctx context.Context, id httpx.ChildID) (Note, error) { return svc.FindNote(ctx, id.Parent, id.ID) }
	noteKey := httpx.PathChildID("contactId", "noteId")
	return &SubHandler{svc: svc, pager: pager,
		// PUT /contacts/{contactId}/finance: lists present replace, omitted stay; If-Match
		// optional ("0" before the first write).
		putFinance: httpx.Patch[uuid.UUID, Household, FinanceBody]{Key: httpx.PathID("contactId"), Lock: svc.LockFinance,
			Version: Household.Version, Read: decode[Household, FinanceBody](FinanceBody{}), Update: svc.PutFinance,
			View: httpx.View(NewFinance)}.Handle,
		// PATCH /contacts/{contactId}/notes/{noteId}: content only; If-Match optional.
		updateNote: httpx.Patch[httpx.ChildID, Note, NoteBody]{Key: noteKey, Lock: lockNote, Version: noteVersion,
			Read: decode[Note](NoteBody{patch: true}), Update: svc.UpdateNote, View: httpx.View(noteView)}.Handle,
		// DELETE /contacts/{contactId}/notes/{noteId}; If-Match optional. E-mails and system
		// entries are no notes: 404.
		deleteNote: httpx.Delete[httpx.ChildID, Note]{Key: noteKey, Lock: lockNote, Version: noteVersion,
			Delete: svc.DeleteNote}.Handle,
		// DELETE /contacts/{contactId}/phones/{phoneId}; no If-Match (a phone has no version).
		deletePhone: deleteChild("phoneId", svc.DeletePhone),
		// DELETE /contacts/{contactId}/relationships/{relationshipId}; no If-Match (a
		// relationship never changes).
		deleteRelationship: deleteChild("relationshipId", svc.DeleteRelationship),
		// GET /contacts/{contactId}/finance: empty lists before the first PUT, and an ETag also
		// then ("0"): every single-resource answer carries one, and If-Match: "0" on PUT then
		// means "only if nobody has written them yet".
		getFinance: httpx.Read[uuid.UUID, Household]{Key: httpx.PathID("contactId"), Get: svc.Finance,
			Version: Household.Version, ETagAtZero: true, View: httpx.View(NewFinance)}.Handle,
		// GET /contacts/{contactId}/relationships: one unpaged list, oldest first, no ETag.
		listRelationships: httpx.Read[uuid.UUID, []Link]{Key: httpx.PathID("contactId"), Get: svc.Relationships,
			View: httpx.DataView(NewRelationship)}.Handle,
		// GET /contacts/{contactId}/notes/{noteId} (ours: the Location of a new note).
		getNote: httpx.Read[httpx.ChildID, Note]{Key: noteKey, Get: findNote, Version: noteVersion,
			View: httpx.View(noteView)}.Handle,
	}
}

// deleteChild is the DELETE of a sub-resource without a version: the path's contact and child
// (400 when malformed), the service, 204.
func deleteChild(param string, del func(ctx context.Context, contactID, id uuid.UUID) error) fiber.Handler {
	key := httpx.PathChildID("contactId", param)
	return func(c *fiber.Ctx) error {
		id, err := key(c)
		if err != nil {
			return err
		}
		if err := del(c.UserContext(), id.Parent, id.ID); err != nil {
			return err
		}
		return httpx.NoContent(c)
	}
}

// underContact is the head of every POST under a contact: the path's contact (400 when
// malformed), the body decoded into in (400, 422), then the service's create.
func underContact[I, R any](c *fiber.Ctx, in I, create func(context.Context, uuid.UUID, I) (R, error)) (R, error) {
	id, err := httpx.UUIDParam(c, "contactId")
	if err == nil {
		err = httpx.Decode(c, &in)
	}
	if err != nil {
		var zero R
		return zero, err
	}
	return create(c.UserContext(), id, in)
}

// decode is the Read of a recipe whose body is a whole input (PUT, or a PATCH of named fields):
// the body decoded into a copy of blank and validated.
func decode[R, I any](blank I) func(*fiber.Ctx, R) (I, error) {
	return func(c *fiber.Ctx, _ R) (I, error) {
		in := blank
		err := httpx.Decode(c, &in)
		return in, err
	}
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

// contactPath is the URL of the path's contact, as the client wrote its id.
func contactPath(c *fiber.Ctx) string { return httpx.URL("contacts", c.Params("contactId")) }

// createPhone handles POST /contacts/{contactId}/phones. A Phone answer carries its contact's
// ETag: a phone is part of its contact and has no version of its own.
func (h *SubHandler) createPhone(c *fiber.Ctx) error {
	p, err := underContact(c, PhoneBody{create: true}, h.svc.CreatePhone)
	if err != nil {
		return err
	}
	return httpx.Created(c, contactPath(c), NewPhoneView(p), p.Edges.Contact.Version)
}

// updatePhone handles PATCH /contacts/{contactId}/phones/{phoneId}.
func (h *SubHandler) updatePhone(c *fiber.Ctx) error {
	id, err := httpx.PathChildID("contactId", "phoneId")(c)
	if err != nil {
		return err
	}
	var in PhoneBody
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	p, err := h.svc.UpdatePhone(c.UserContext(), id.Parent, id.ID, in)
	if err != nil {
		return err
	}
	return httpx.OK(c, NewPhoneView(p), p.Edges.Contact.Version)
}

// createRelationship handles POST /contacts/{contactId}/relationships.
func (h *SubHandler) createRelationship(c *fiber.Ctx) error {
	l, err := underContact(c, RelationshipBody{}, h.svc.CreateRelationship)
	if err != nil {
		return err
	}
	return httpx.Created(c, contactPath(c)+"/relationships", NewRelationship(l), immutableVersion)
}

// listActivities handles GET /contacts/{contactId}/activities: Paged, newest first, filter
// by kind.
func (h *SubHandler) listActivities(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "activities", parseActivityFilter, h.svc.Activities, activitiesNewestFirst, NewActivity)
}

// parseActivityFilter reads the path's contact (400 when malformed) and filter (comma-separated
// notes, emails, system).
func parseActivityFilter(c *fiber.Ctx, v *errs.Invalid) (f ActivityFilter, err error) {
	if f.ContactID, err = httpx.UUIDParam(c, "contactId"); err != nil {
		return f, err
	}
	f.Kinds = ParseActivityFilter(c.Query("filter"), v)
	return f, nil
}

func noteView(n Note) Activity { return NewActivity(n.ContactActivity) }

// createNote handles POST /contacts/{contactId}/notes.
func (h *SubHandler) createNote(c *fiber.Ctx) error {
	n, err := underContact(c, NoteBody{}, h.svc.CreateNote)
	if err != nil {
		return err
	}
	return httpx.Created(c, contactPath(c)+"/notes/"+n.ID.String(), noteView(n), n.Version)
}
