package doctemplates

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/documents"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the template endpoints.
type Handler struct {
	svc  *Service
	idem fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware of POST
// /documents/generate.
func NewHandler(svc *Service, idem fiber.Handler) *Handler { return &Handler{svc: svc, idem: idem} }

// Mount registers the routes. Standard documents are read with signatures:read, which the
// digital_signature feature gates (policy.Require): they exist to be sent for signature.
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/document-templates", policy.Require("documents:read"), h.listTemplates)
	r.Post("/documents/generate", policy.Require("documents:write"), h.idem, h.generate)
	r.Get("/standard-documents", policy.Require("signatures:read"), h.listStandard)
	r.Get("/standard-documents/:standardDocumentId/content", policy.Require("signatures:read"), h.standardContent)
}

// listTemplates handles GET /document-templates: unpaged {data}, by name.
func (h *Handler) listTemplates(c *fiber.Ctx) error {
	rows, err := h.svc.ListTemplates(c.UserContext())
	if err != nil {
		return err
	}
	return httpx.Data(c, rows, NewTemplateView)
}

// listStandard handles GET /standard-documents: unpaged {data}, by name.
func (h *Handler) listStandard(c *fiber.Ctx) error {
	rows, err := h.svc.ListStandardDocuments(c.UserContext())
	if err != nil {
		return err
	}
	return httpx.Data(c, rows, NewStandardDocumentView)
}

// standardContent handles GET /standard-documents/{standardDocumentId}/content: the PDF as a
// download (a partner shows it before sending it for signature).
func (h *Handler) standardContent(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "standardDocumentId")
	if err != nil {
		return err
	}
	d, err := h.svc.StandardDocument(c.UserContext(), id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderETag, `"`+d.Sha256+`"`)
	return httpx.SendFileAs(c, d.Filename, "application/pdf", d.Content)
}

// generate handles POST /documents/generate: 201 with the Document, Location its URL.
func (h *Handler) generate(c *fiber.Ctx) error {
	var in GenerateInput
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	g := in.Parsed()
	if in.Filename != nil {
		// cleaned as an upload's name is; a name that cleans to nothing takes the default
		g.Filename = httpx.CleanFilename(strings.Clone(*in.Filename), "")
	}
	d, err := h.svc.Generate(c.UserContext(), g)
	if err != nil {
		return err
	}
	return httpx.Created(c, httpx.URL("documents", d.ID.String()), documents.NewView(d), d.Version)
}
