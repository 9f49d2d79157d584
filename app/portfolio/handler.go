package portfolio

import (
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Formats are the portfolio formats of the spec.
var Formats = []string{"gdv_vu_vermittler", "bipro_430_4", "csv"}

// WriteModes say what an import does to values a record has already.
var WriteModes = []string{"overwrite", "fill_empty_only"}

var statuses = []string{"pending", "validating", "validated", "committing", "committed", "failed"}

// Handler serves /portfolio-transfers.
type Handler struct {
	svc       *Service
	pager     *httpx.Pager
	idem      fiber.Handler
	maxUpload int64 // bytes of a POST /portfolio-transfers request
	get       fiber.Handler
}

// NewHandler builds the handler.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler, maxUpload int64) *Handler {
	return &Handler{svc: svc, pager: pager, idem: idem, maxUpload: maxUpload,
		// GET /portfolio-transfers/{transferId}.
		get: httpx.Read[uuid.UUID, *ent.PortfolioTransfer]{Key: httpx.PathID("transferId"), Get: svc.Get,
			Version: func(t *ent.PortfolioTransfer) int64 { return t.Version }, View: httpx.View(NewView)}.Handle,
	}
}

// Mount registers the routes. upload serves POST /portfolio-transfers: authenticated like r
// but without a request transaction (tenancy.SecretUnpinned), so a slow client streaming its
// file holds no database connection; Service.Create uses short transactions of its own.
func (h *Handler) Mount(r, upload fiber.Router) {
	r.Get("/portfolio-transfers", policy.Require("portfolio:read"), h.list)
	upload.Post("/portfolio-transfers", policy.Require("portfolio:write"), h.idem, h.create)
	r.Get("/portfolio-transfers/:transferId", policy.Require("portfolio:read"), h.get)
	r.Post("/portfolio-transfers/:transferId/commit", policy.Require("portfolio:write"), h.commit)
}

// list handles GET /portfolio-transfers: Paged, oldest first; query status.
func (h *Handler) list(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "portfolio-transfers", parseListFilter, h.svc.List, transfersOldestFirst, NewView)
}

// parseListFilter reads the query of GET /portfolio-transfers.
func parseListFilter(c *fiber.Ctx, v *errs.Invalid) (f ListFilter, _ error) {
	f.Status = httpx.QueryEnum(c, v, "status", statuses)
	return f, nil
}

// commit handles POST /portfolio-transfers/{transferId}/commit: 202 with the transfer
// (committing, or committed already); 409 before validation.
func (h *Handler) commit(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "transferId")
	if err != nil {
		return err
	}
	t, _, err := h.svc.Commit(c.UserContext(), id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderETag, httpx.ETag(t.Version))
	return c.Status(fiber.StatusAccepted).JSON(NewView(t))
}

// create handles POST /portfolio-transfers (multipart/form-data): 202 with the pending transfer.
//
// The body is read as a stream (httpx.BodyReader), never held whole: the file part goes to blob
// storage as it arrives, whether the other fields come before or after it; the fields are
// checked once the body has been read, and a refused request deletes the stored file.
func (h *Handler) create(c *fiber.Ctx) error {
	ctx := c.UserContext()
	up, err := httpx.ReadUpload(c, h.maxUpload, func() error { return tooLarge(h.maxUpload) },
		func(r io.Reader) (blobstore.Stored, error) { return h.svc.StoreFile(ctx, r) },
		func(f blobstore.Stored) { h.svc.DeleteFile(ctx, f) })
	if err != nil {
		return err
	}
	in, err := parseTransfer(up.Values, up.Files)
	if err != nil {
		h.svc.DeleteFile(ctx, up.Stored)
		return err
	}
	in.Filename = up.Filename
	t, err := h.svc.Create(ctx, in, up.Stored)
	if err != nil {
		h.svc.DeleteFile(ctx, up.Stored)
		return err
	}
	c.Set(fiber.HeaderLocation, httpx.URL("portfolio-transfers", t.ID.String()))
	c.Set(fiber.HeaderETag, httpx.ETag(t.Version))
	return c.Status(fiber.StatusAccepted).JSON(NewView(t))
}

func tooLarge(limit int64) error {
	return errs.TooLarge("payload_too_large", "the request is larger than the limit of %d MiB for portfolio files", limit>>20)
}

// parseTransfer checks the form fields of a transfer (files: the number of file parts).
func parseTransfer(values map[string][]string, files int) (NewTransfer, error) {
	val := func(name string) (string, bool) {
		vs := values[name]
		if len(vs) == 0 {
			return "", false
		}
		return vs[0], true
	}
	var v errs.Invalid
	for name := range values {
		if !slices.Contains([]string{"format", "source", "ownerId", "mappingId", "autoCommit", "writeMode", "encoding"}, name) {
			v.Add(name, "unknown_field", "is not a field of this request")
		}
	}
	in := NewTransfer{WriteMode: "overwrite"}
	format, ok := val("format")
	v.Check("format", ok, "required", "is required")
	if ok {
		v.Check("format", slices.Contains(Formats, format), "invalid_enum", "must be one of "+strings.Join(Formats, ", "))
	}
	in.Format = format
	in.Source = format
	if s, ok := val("source"); ok {
		v.Check("source", strings.TrimSpace(s) != "" && utf8.RuneCountInString(s) <= 100 && !strings.ContainsRune(s, 0),
			"invalid_length", "must have 1 to 100 characters")
		in.Source = strings.TrimSpace(s)
	}
	in.OwnerID = uuidField(&v, values, "ownerId")
	in.MappingID = uuidField(&v, values, "mappingId")
	if format == "csv" {
		v.Check("mappingId", in.MappingID != nil || len(values["mappingId"]) > 0, "required", "is required for csv")
	} else if ok {
		v.Check("mappingId", len(values["mappingId"]) == 0, "not_applicable", "is read with format csv only")
	}
	if s, ok := val("autoCommit"); ok {
		v.Check("autoCommit", s == "true" || s == "false", "invalid_boolean", "must be true or false")
		in.AutoCommit = s == "true"
	}
	if s, ok := val("writeMode"); ok {
		v.Check("writeMode", slices.Contains(WriteModes, s), "invalid_enum", "must be one of "+strings.Join(WriteModes, ", "))
		in.WriteMode = s
	}
	if s, ok := val("encoding"); ok && s != "auto" {
		v.Check("encoding", slices.Contains(gdv.Encodings(), strings.ToLower(s)), "invalid_enum",
			"must be auto or one of "+strings.Join(gdv.Encodings(), ", "))
		in.Encoding = strings.ToLower(s)
	}
	v.Check("file", files == 1, "required", "send exactly one file")
	return in, v.Err()
}

func uuidField(v *errs.Invalid, values map[string][]string, name string) *uuid.UUID {
	vs := values[name]
	if len(vs) == 0 {
		return nil
	}
	id, err := uuid.Parse(vs[0])
	v.Check(name, err == nil, "invalid_uuid", "must be a UUID")
	if err != nil {
		return nil
	}
	return &id
}
