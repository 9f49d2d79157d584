package documents

import (
	"fmt"
	"mime/multipart"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the document endpoints.
type Handler struct {
	svc    *Service
	pager  *httpx.Pager
	idem   fiber.Handler
	get    fiber.Handler
	update fiber.Handler
	delete fiber.Handler
}

// NewHandler builds the handler.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	version := func(d *ent.Document) int64 { return d.Version }
	return &Handler{svc: svc, pager: pager, idem: idem,
		// GET /documents/{documentId}: the metadata.
		get: httpx.Read[uuid.UUID, *ent.Document]{Key: httpx.PathID("documentId"), Get: svc.Get,
			Version: version, View: httpx.View(NewView)}.Handle,
		// PATCH /documents/{documentId}: releasedToCustomer only (release.go); If-Match required,
		// as the release decides what a customer sees.
		update: httpx.Patch[uuid.UUID, *ent.Document, ReleaseInput]{Key: httpx.PathID("documentId"), Lock: svc.Lock,
			Version: version, IfMatchRequired: true, Input: releaseInput, Update: svc.SetReleased,
			View: httpx.View(NewView)}.Handle,
		// DELETE /documents/{documentId}; If-Match optional. Locked: a release (PATCH) is the one
		// change of a document, and If-Match must name the version the delete removes.
		delete: httpx.Delete[uuid.UUID, *ent.Document]{Key: httpx.PathID("documentId"), Lock: svc.Lock,
			Version: version, Delete: svc.Delete}.Handle,
	}
}

// Mount registers the routes.
func (h *Handler) Mount(r fiber.Router) {
	r.Post("/contacts/:contactId/documents", policy.Require("documents:write"), h.idem,
		h.uploadTo("contactId", func(id uuid.UUID) NewDocument { return NewDocument{ContactID: id} }))
	r.Post("/contracts/:contractId/documents", policy.Require("documents:write"), h.idem,
		h.uploadTo("contractId", func(id uuid.UUID) NewDocument { return NewDocument{ContractID: &id} }))
	r.Get("/documents", policy.Require("documents:read"), h.list)
	r.Get("/documents/:documentId", policy.Require("documents:read"), h.get)
	r.Get("/documents/:documentId/content", policy.Require("documents:read"), h.content)
	r.Patch("/documents/:documentId", policy.Require("documents:write"), h.update)
	r.Delete("/documents/:documentId", policy.Require("documents:write"), h.delete)
}

// uploadTo handles the upload under the record the path's param names (400 when malformed):
// POST /contacts/{contactId}/documents, and POST /contracts/{contractId}/documents, whose
// document belongs to the contract's contact as well (multipart/form-data).
func (h *Handler) uploadTo(param string, under func(uuid.UUID) NewDocument) fiber.Handler {
	key := httpx.PathID(param)
	return func(c *fiber.Ctx) error {
		id, err := key(c)
		if err != nil {
			return err
		}
		return h.upload(c, under(id))
	}
}

// upload reads the form (a part file, optional fields type and releasedToCustomer) and answers
// 201 with the Document.
func (h *Handler) upload(c *fiber.Ctx, in NewDocument) error {
	if !strings.HasPrefix(strings.ToLower(c.Get(fiber.HeaderContentType)), fiber.MIMEMultipartForm) {
		return errs.Unsupported("unsupported_media_type", "send the file as multipart/form-data")
	}
	form, err := c.MultipartForm()
	if err != nil {
		return errs.BadRequest("bad_request", "the body is not valid multipart/form-data")
	}
	var v errs.Invalid
	for name := range form.Value {
		if name != "type" && name != "releasedToCustomer" {
			v.Add(name, "unknown_field", "is not a field of this request")
		}
	}
	in.Type = "other"
	if vs := form.Value["type"]; len(vs) > 0 {
		in.Type = strings.Clone(vs[0])
		v.Check("type", slices.Contains(Types, in.Type), "invalid_enum", "must be one of "+strings.Join(Types, ", "))
	}
	if vs := form.Value["releasedToCustomer"]; len(vs) > 0 {
		v.Check("releasedToCustomer", vs[0] == "true" || vs[0] == "false", "invalid_boolean", "must be true or false")
		in.Released = vs[0] == "true"
	}
	files := form.File["file"]
	v.Check("file", len(files) == 1, "required", "send exactly one file in the part file")
	for name := range form.File {
		if name != "file" {
			v.Add(name, "unknown_field", "is not a field of this request")
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	in.Filename = httpx.CleanFilename(strings.Clone(files[0].Filename), "document")
	d, err := h.svc.Create(c.UserContext(), in, fileOf(files[0]))
	if err != nil {
		return err
	}
	return httpx.Created(c, httpx.URL("documents", d.ID.String()), NewView(d), d.Version)
}

// fileOf opens an uploaded part lazily, so the service checks the contact before reading.
func fileOf(fh *multipart.FileHeader) *lazyFile { return &lazyFile{fh: fh} }

type lazyFile struct {
	fh *multipart.FileHeader
	f  multipart.File
}

func (l *lazyFile) Read(p []byte) (int, error) {
	if l.f == nil {
		f, err := l.fh.Open()
		if err != nil {
			return 0, fmt.Errorf("open uploaded file: %w", err)
		}
		l.f = f
	}
	n, err := l.f.Read(p)
	if err != nil {
		_ = l.f.Close()
	}
	return n, err
}

// list handles GET /documents: paged, oldest first; filters contactId, contractId, type.
func (h *Handler) list(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "documents", parseFilter, h.svc.List, oldestFirst, NewView)
}

// parseFilter reads the query of GET /documents; every bad parameter is listed.
func parseFilter(c *fiber.Ctx, v *errs.Invalid) (f Filter, _ error) {
	f.ContactID = httpx.QueryUUID(c, v, "contactId")
	f.ContractID = httpx.QueryUUID(c, v, "contractId")
	f.Type = httpx.QueryEnum(c, v, "type", Types)
	return f, nil
}

// content handles GET /documents/{documentId}/content: the bytes as uploaded, streamed from
// blob storage after the request's transaction ended (sha256 checked on the way, Service.Open),
// with the type sniffed at upload, as a download (RFC 6266 Content-Disposition, nosniff); 304
// when If-None-Match names its ETag (the sha256).
func (h *Handler) content(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "documentId")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	d, err := h.svc.Get(ctx, id)
	if err != nil {
		return err
	}
	etag := `"` + d.Sha256 + `"`
	c.Set(fiber.HeaderETag, etag)
	if httpx.IfNoneMatch(c.Get(fiber.HeaderIfNoneMatch), etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	content, err := h.svc.Open(ctx, d)
	if err != nil {
		return err
	}
	return httpx.SendStreamAs(c, d.Filename, d.ContentType, content, d.Size)
}
