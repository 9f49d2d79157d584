package tasks

import (
	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/errs"
	"github.com/brokerdesk/brokerdesk/app/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the task endpoints.
type Handler struct {
	svc   *Service
	pager *httpx.Pager
	idem  fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware POST /tasks uses.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	return &Handler{svc: svc, pager: pager, idem: idem}
}

// Mount registers the routes. r authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/tasks", policy.Require("tasks:read"), h.list)
	r.Post("/tasks", policy.Require("tasks:write"), h.idem, h.create)
	r.Get("/tasks/:taskId", policy.Require("tasks:read"), h.get)
	r.Patch("/tasks/:taskId", policy.Require("tasks:write"), h.update)
	r.Delete("/tasks/:taskId", policy.Require("tasks:write"), h.delete)
	r.Get("/tasks/:taskId/comments", policy.Require("tasks:read"), h.listComments)
	r.Post("/tasks/:taskId/comments", policy.Require("tasks:write"), h.createComment)
}

func location(t *ent.Task) string { return "/api/public/v1/tasks/" + t.ID.String() }

// list handles GET /tasks: Paged, by due date (none last), then id.
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
	return httpx.WritePage(c, page, rows, sortKey, NewView)
}

// create handles POST /tasks.
func (h *Handler) create(c *fiber.Ctx) error {
	var in Input
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	t, err := h.svc.Create(c.UserContext(), in)
	if err != nil {
		return err
	}
	return httpx.Created(c, location(t), NewView(t), t.Version)
}

// get handles GET /tasks/{taskId}.
func (h *Handler) get(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "taskId")
	if err != nil {
		return err
	}
	t, err := h.svc.Get(c.UserContext(), id)
	if err != nil {
		return err
	}
	return httpx.OK(c, NewView(t), t.Version)
}

// update handles PATCH /tasks/{taskId}: a merge patch of TaskInput; If-Match optional.
func (h *Handler) update(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "taskId")
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
	in := inputOf(cur)
	if err := httpx.MergePatch(c, &in); err != nil {
		return err
	}
	t, err := h.svc.Update(ctx, cur, in)
	if err != nil {
		return err
	}
	return httpx.OK(c, NewView(t), t.Version)
}

// delete handles DELETE /tasks/{taskId}; If-Match optional.
func (h *Handler) delete(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "taskId")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	t, err := h.svc.Lock(ctx, id)
	if err != nil {
		return err
	}
	if err := httpx.IfMatch(c, t.Version, false); err != nil {
		return err
	}
	if err := h.svc.Delete(ctx, t); err != nil {
		return err
	}
	return httpx.NoContent(c)
}

// listComments handles GET /tasks/{taskId}/comments: Paged, oldest first.
func (h *Handler) listComments(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "taskId")
	if err != nil {
		return err
	}
	page, err := h.pager.Parse(c, "task-comments?task="+id.String())
	if err != nil {
		return err
	}
	rows, err := h.svc.Comments(c.UserContext(), id, page.After, page.Limit)
	if err != nil {
		return err
	}
	return httpx.WritePage(c, page, rows, func(x *ent.TaskComment) []string {
		return httpx.CreatedKey(x.CreatedAt, x.ID)
	}, NewCommentView)
}

// createComment handles POST /tasks/{taskId}/comments.
func (h *Handler) createComment(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "taskId")
	if err != nil {
		return err
	}
	var in CommentInput
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	cm, err := h.svc.AddComment(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(NewCommentView(cm))
}
