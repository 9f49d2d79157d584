package imports

import (
	"io"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the import endpoints.
type Handler struct {
	svc   *Service
	pager *httpx.Pager
	idem  fiber.Handler
}

// NewHandler builds the handler; idem is the Idempotency-Key middleware of the upload.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	return &Handler{svc: svc, pager: pager, idem: idem}
}

// Mount registers the routes. upload is the group whose authentication pins after the body
// was read (the multipart upload, as portfolio transfers do). The spec gives every route the
// one scope imports:write, reads too: an import holds whole files of personal data.
func (h *Handler) Mount(r, upload fiber.Router) {
	write := policy.Require("imports:write")
	r.Get("/imports", write, h.list)
	upload.Post("/imports", write, h.idem, h.create)
	r.Get("/imports/:importId", write, h.get)
	r.Post("/imports/:importId/commit", write, h.commit)
	r.Get("/imports/:importId/rows", write, h.rows)
}

// list handles GET /imports: Paged, oldest first; query status.
func (h *Handler) list(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "imports", parseListFilter, h.svc.List, importsOldestFirst, NewView)
}

func parseListFilter(c *fiber.Ctx, v *errs.Invalid) (f ListFilter, _ error) {
	f.Status = httpx.QueryEnum(c, v, "status", schema.ImportStatuses)
	return f, nil
}

// get handles GET /imports/{importId}.
func (h *Handler) get(c *fiber.Ctx) error {
	return httpx.Read[uuid.UUID, *ent.ContactImport]{Key: httpx.PathID("importId"), Get: h.svc.Get,
		Version: importVersion, View: httpx.View(NewView)}.Handle(c)
}

func importVersion(im *ent.ContactImport) int64 { return im.Version }

// rows handles GET /imports/{importId}/rows: Paged in file order; query outcome, analysis.
func (h *Handler) rows(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "importId")
	if err != nil {
		return err
	}
	return httpx.ServeList(c, h.pager, "import-rows:"+id.String(), func(c *fiber.Ctx, v *errs.Invalid) (RowFilter, error) {
		return RowFilter{ImportID: id, Outcome: httpx.QueryEnum(c, v, "outcome", schema.ImportOutcomes),
			Analysis: httpx.QueryEnum(c, v, "analysis", schema.ImportAnalyses)}, nil
	}, h.svc.Rows, rowsInFileOrder, NewRowView)
}

// commit handles POST /imports/{importId}/commit with the optional body {duplicates}: 202 with
// the running import; 409 unless it is analyzed.
func (h *Handler) commit(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "importId")
	if err != nil {
		return err
	}
	var in CommitInput
	if len(c.Body()) > 0 {
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
	}
	im, err := h.svc.Commit(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderETag, httpx.ETag(im.Version))
	return c.Status(fiber.StatusAccepted).JSON(NewView(im))
}

// create handles POST /imports (multipart/form-data): 202 with the queued import. The body is
// streamed (httpx.ReadUpload): the file goes to blob storage as it arrives, its first bytes
// kept to decide its type; a refused request deletes the stored file.
func (h *Handler) create(c *fiber.Ctx) error {
	ctx := c.UserContext()
	var head headBytes
	up, err := httpx.ReadUpload(c, MaxUpload, tooLarge,
		func(r io.Reader) (blobstore.Stored, error) {
			return h.svc.storeFile(ctx, io.TeeReader(r, &head))
		},
		func(f blobstore.Stored) { h.svc.deleteFile(ctx, f) })
	if err != nil {
		return err
	}
	in, err := parseUpload(up.Values, up.Files)
	if err != nil {
		h.svc.deleteFile(ctx, up.Stored)
		return err
	}
	in.Filename = up.Filename
	if len(head.b) == 0 {
		h.svc.deleteFile(ctx, up.Stored)
		return errs.InvalidField("file", "empty", "the file is empty")
	}
	format, err := sniff(head.b)
	if err != nil {
		h.svc.deleteFile(ctx, up.Stored)
		return errs.InvalidField("file", "unsupported_type", err.Error())
	}
	im, err := h.svc.Create(ctx, in, format, up.Stored)
	if err != nil {
		h.svc.deleteFile(ctx, up.Stored)
		return err
	}
	c.Set(fiber.HeaderLocation, httpx.URL("imports", im.ID.String()))
	c.Set(fiber.HeaderETag, httpx.ETag(im.Version))
	return c.Status(fiber.StatusAccepted).JSON(NewView(im))
}

func tooLarge() error {
	return errs.TooLarge("payload_too_large", "the request is larger than the limit of %d MiB for import files", MaxUpload>>20)
}

// headBytes keeps the first 512 bytes written to it: what sniff decides the type by.
type headBytes struct{ b []byte }

func (h *headBytes) Write(p []byte) (int, error) {
	if n := 512 - len(h.b); n > 0 {
		h.b = append(h.b, p[:min(n, len(p))]...)
	}
	return len(p), nil
}
