// Package users serves /users: the people working at the brokerage.
package users

import (
	"net/mail"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the user endpoints.
type Handler struct {
	pager *httpx.Pager
	svc   *Service
	get   fiber.Handler
}

// NewHandler builds the handler.
func NewHandler(pager *httpx.Pager) *Handler {
	svc := &Service{}
	return &Handler{pager: pager, svc: svc,
		// GET /users/{userId}, labelled in the request's language.
		get: httpx.Read[uuid.UUID, *ent.User]{Key: httpx.PathID("userId"), Get: svc.Get,
			Version: func(u *ent.User) int64 { return u.Version },
			View:    func(c *fiber.Ctx, u *ent.User) (any, error) { return NewView(u, httpx.Lang(c)), nil }}.Handle,
	}
}

// Mount registers the routes. r authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/users", policy.Require("users:read"), h.list)
	r.Get("/users/:userId", policy.Require("users:read"), h.get)
}

// View is the User resource.
type View struct {
	ID                 uuid.UUID                `json:"id"`
	Email              string                   `json:"email"`
	FirstName          string                   `json:"firstName"`
	LastName           string                   `json:"lastName"`
	Status             string                   `json:"status"`
	StatusLabel        string                   `json:"statusLabel"`
	Role               string                   `json:"role"`
	RoleLabel          string                   `json:"roleLabel"`
	ExternalReferences []schematype.ExternalRef `json:"externalReferences"`
	CreatedAt          time.Time                `json:"createdAt"`
	UpdatedAt          time.Time                `json:"updatedAt"`
}

// NewView is the User resource with its labels in lang ("de" or "en").
func NewView(u *ent.User, lang string) View {
	refs := u.ExternalReferences
	if refs == nil {
		refs = []schematype.ExternalRef{}
	}
	return View{ID: u.ID, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName,
		Status: string(u.Status), StatusLabel: labels[lang][string(u.Status)],
		Role: string(u.Role), RoleLabel: labels[lang][string(u.Role)],
		ExternalReferences: refs, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

// labels of statuses and roles, by language.
var labels = map[string]map[string]string{
	"de": {"active": "Aktiv", "inactive": "Inaktiv", "suspended": "Gesperrt",
		"admin": "Administrator", "manager": "Manager", "agent": "Berater"},
	"en": {"active": "Active", "inactive": "Inactive", "suspended": "Suspended",
		"admin": "Administrator", "manager": "Manager", "agent": "Agent"},
}

// list handles GET /users: Paged, oldest first, filters status and email. The view names
// labels in the request's language, so the pipeline's steps are spelled out (ServeList's views
// know no request).
func (h *Handler) list(c *fiber.Ctx) error {
	f, page, err := httpx.ParseList(c, h.pager, "users", parseFilter)
	if err != nil {
		return err
	}
	rows, err := h.svc.List(c.UserContext(), f, page.Page)
	if err != nil {
		return err
	}
	lang := httpx.Lang(c)
	return httpx.WritePage(c, page, rows, oldestFirst.Key, httpx.Plain(func(u *ent.User) View { return NewView(u, lang) }))
}

// parseFilter reads the query of GET /users; every bad parameter is listed.
func parseFilter(c *fiber.Ctx, v *errs.Invalid) (f Filter, _ error) {
	status := c.Query("status")
	v.Check("status", status == "" || user.StatusValidator(user.Status(status)) == nil,
		"invalid_enum", "must be one of active, inactive, suspended")
	if status != "" {
		f.Status = strings.Clone(status)
	}
	f.Email = strings.Clone(strings.ToLower(strings.TrimSpace(c.Query("email"))))
	if f.Email != "" {
		a, err := mail.ParseAddress(f.Email)
		v.Check("email", err == nil && a.Address == f.Email, "invalid_email", "must be an e-mail address")
	}
	return f, nil
}
