package emails

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/emailtemplate"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Templates are company-wide and written by the operator only (brokerdesk template create |
// seed; the app role may not write email_templates): the API reads them, and POST /emails
// sends one with its placeholders filled (Fill).

// mountTemplates registers GET /email-templates.
func (h *Handler) mountTemplates(r fiber.Router) {
	r.Get("/email-templates", policy.Require("emails:read"), h.listTemplates)
}

// TemplateView is the EmailTemplate resource: the spec's fields plus marketing and the bodies
// (a client shows what it is about to send).
type TemplateView struct {
	ID           uuid.UUID `json:"id"`
	Name         string    `json:"name"`
	Subject      string    `json:"subject"`
	Category     *string   `json:"category"`
	Placeholders []string  `json:"placeholders"`
	Marketing    bool      `json:"marketing"`
	BodyText     string    `json:"bodyText"`
	BodyHTML     *string   `json:"bodyHtml"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

// NewTemplateView is the EmailTemplate resource of t. placeholders is computed from subject
// and bodies as stored, so a row written before a change of the syntax still answers right.
func NewTemplateView(t *ent.EmailTemplate) TemplateView {
	html := ""
	if t.BodyHTML != nil {
		html = *t.BodyHTML
	}
	return TemplateView{ID: t.ID, Name: t.Name, Subject: t.Subject, Category: t.Category,
		Placeholders: Placeholders(t.Subject, t.BodyText, html), Marketing: t.Marketing, BodyText: t.BodyText,
		BodyHTML: t.BodyHTML, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

// ListTemplates returns the company's templates by name.
func (s *Service) ListTemplates(ctx context.Context) ([]*ent.EmailTemplate, error) {
	rows, err := tenancy.Client(ctx).EmailTemplate.Query().Order(ent.Asc(emailtemplate.FieldName), ent.Asc(emailtemplate.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list email templates: %w", err)
	}
	return rows, nil
}

// Template reads one template of the company (the send path).
func (s *Service) Template(ctx context.Context, id uuid.UUID) (*ent.EmailTemplate, error) {
	t, err := tenancy.Client(ctx).EmailTemplate.Get(ctx, id)
	return t, errs.FromEnt(err, "email template %s", id)
}

// listTemplates handles GET /email-templates: unpaged {data}, by name.
func (h *Handler) listTemplates(c *fiber.Ctx) error {
	rows, err := h.svc.ListTemplates(c.UserContext())
	if err != nil {
		return err
	}
	return httpx.Data(c, rows, NewTemplateView)
}

// NewTemplate is a template as the operator writes it (brokerdesk template create, the
// defaults of a new company).
type NewTemplate struct {
	Name      string
	Subject   string
	Text      string
	HTML      *string
	Category  *string
	Marketing bool
}

// Bounds of a template (characters).
const (
	maxTemplateName     = 200
	maxTemplateSubject  = 500
	maxTemplateCategory = 100
	maxTemplateBody     = 200_000
)

// Validate checks a template: every bad field at once (field names are the CLI's flags).
func (t NewTemplate) Validate() error {
	var v errs.Invalid
	v.Require("name", strings.TrimSpace(t.Name) != "")
	check.Len(&v, "name", &t.Name, maxTemplateName)
	check.Len(&v, "subject", &t.Subject, maxTemplateSubject)
	v.Check("subject", !strings.ContainsAny(t.Subject, "\r\n"), "invalid_character", "must be one line")
	v.Require("text", strings.TrimSpace(t.Text) != "")
	check.Len(&v, "text", &t.Text, maxTemplateBody)
	check.Len(&v, "html", t.HTML, maxTemplateBody)
	check.Len(&v, "category", t.Category, maxTemplateCategory)
	v.Check("name", utf8.ValidString(t.Name), "invalid_character", "must be UTF-8")
	return v.Err()
}

// Apply writes t to a template's create, with its placeholders.
func (t NewTemplate) Apply(c *ent.EmailTemplateCreate) *ent.EmailTemplateCreate {
	html := ""
	if t.HTML != nil {
		html = *t.HTML
	}
	return c.SetName(strings.TrimSpace(t.Name)).SetSubject(t.Subject).SetBodyText(t.Text).SetNillableBodyHTML(t.HTML).
		SetNillableCategory(t.Category).SetMarketing(t.Marketing).SetPlaceholders(Placeholders(t.Subject, t.Text, html))
}
