package tasks

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the task endpoints.
type Handler struct {
	svc            *Service
	pager          *httpx.Pager
	idem           fiber.Handler
	create, get    fiber.Handler
	update, delete fiber.Handler
	createComment  fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware POST /tasks uses.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	version := func(t *ent.Task) int64 { return t.Version }
	return &Handler{svc: svc, pager: pager, idem: idem,
		// POST /tasks.
		create: httpx.Create[Input, *ent.Task]{Create: svc.Create, Location: location, Version: version,
			View: httpx.View(NewView)}.Handle,
		// GET /tasks/{taskId}.
		get: httpx.Read[uuid.UUID, *ent.Task]{Key: httpx.PathID("taskId"), Get: svc.Get, Version: version,
			View: httpx.View(NewView)}.Handle,
		// POST /tasks/{taskId}/comments: a comment is never read or changed on its own, so the
		// answer has no Location and no ETag.
		createComment: httpx.CreateUnder[uuid.UUID, CommentInput, *ent.TaskComment]{Key: httpx.PathID("taskId"),
			Create: svc.AddComment, View: httpx.View(NewCommentView)}.Handle,
		// PATCH /tasks/{taskId}: a merge patch of the task's input; If-Match optional.
		update: httpx.Patch[uuid.UUID, *ent.Task, Input]{Key: httpx.PathID("taskId"), Lock: svc.Lock,
			Version: version, Input: inputOf, Update: svc.Update, View: httpx.View(NewView)}.Handle,
		// DELETE /tasks/{taskId}; If-Match optional.
		delete: httpx.Delete[uuid.UUID, *ent.Task]{Key: httpx.PathID("taskId"), Lock: svc.Lock,
			Version: version, Delete: svc.Delete}.Handle,
	}
}

// Mount registers the routes. r authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	httpx.Collection{Path: "/tasks", Param: "taskId", Scope: "tasks", Idem: h.idem, List: h.list,
		Create: h.create, Get: h.get, Update: h.update, Delete: h.delete}.Mount(r)
	r.Get("/tasks/:taskId/comments", policy.Require("tasks:read"), h.listComments)
	r.Post("/tasks/:taskId/comments", policy.Require("tasks:write"), h.createComment)
}

func location(t *ent.Task) string { return httpx.URL("tasks", t.ID.String()) }

// list handles GET /tasks: Paged, by due date (none last), then id.
func (h *Handler) list(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "tasks", parseListFilter, h.svc.List, byDue, NewView)
}

// parseListFilter reads the query of GET /tasks; every bad parameter is listed.
func parseListFilter(c *fiber.Ctx, v *errs.Invalid) (f ListFilter, _ error) {
	f.UpdatedSince = httpx.QueryTime(c, v, "updatedSince")
	f.DueFrom = httpx.QueryTime(c, v, "dueFrom")
	f.DueTo = httpx.QueryTime(c, v, "dueTo")
	f.ContactID = httpx.QueryUUID(c, v, "contactId")
	f.AssigneeID = httpx.QueryUUID(c, v, "assigneeId")
	f.LeadID = httpx.QueryUUID(c, v, "leadId")
	f.Statuses = httpx.QueryEnums(c, v, "status", schema.TaskStatuses)
	f.Priorities = httpx.QueryEnums(c, v, "priority", schema.TaskPriorities)
	if f.DueFrom != nil && f.DueTo != nil {
		v.Check("dueTo", !f.DueTo.Before(*f.DueFrom), "invalid_range", "must not be before dueFrom")
	}
	return f, nil
}

// listComments handles GET /tasks/{taskId}/comments: Paged, oldest first.
func (h *Handler) listComments(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "task-comments", parseCommentFilter, h.svc.Comments, commentsOldestFirst, NewCommentView)
}

func parseCommentFilter(c *fiber.Ctx, _ *errs.Invalid) (f CommentFilter, err error) {
	f.TaskID, err = httpx.UUIDParam(c, "taskId")
	return f, err
}
