// Package documents serves /documents: the files of a contact or of one of its contracts. The
// metadata is a row of the company's documents table, the content a blob in blob storage
// (app/platform/blobstore) under a key the server chooses. The blob is written before the row and
// removed when the request's transaction rolls back; a deleted document's blob (also with its
// contact) is removed after the commit; Sweeper removes what a crash left between the two.
package documents

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gabriel-vasile/mimetype"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/document"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// MaxSize is the largest document, in bytes: 10 MB. The server's body limit (10 MiB) leaves
// room for the multipart envelope; a body over it is refused before any route, in the same 413
// problem shape.
const MaxSize = 10_000_000

// BlobPrefix is where document blobs live in the bucket: BlobPrefix/<company>/<random>.
const BlobPrefix = "documents"

// Types are the document types (schema.DocumentTypes).
var Types = schema.DocumentTypes

// AllowedTypes are the media types a document may have, sniffed from its content: what a
// brokerage files. Every type a download serves as itself (httpx.SafeTypes: PDF, scans and
// photos, office documents, text, Outlook messages), and XML and e-mails, which are stored but
// served as application/octet-stream (httpx.ServedType). Not allowed, among others:
// executables and scripts, HTML and SVG (active content), archives (their content cannot be
// judged), and anything unrecognised (application/octet-stream).
var AllowedTypes = append(slices.Clone(httpx.SafeTypes), "text/xml", "application/xml", "message/rfc822")

// Sniff is the media type of content by its bytes (github.com/gabriel-vasile/mimetype: unlike
// net/http's sniffer it tells office formats and e-mails from plain ZIP and OLE files and
// recognises executables), with parameters ("text/plain; charset=utf-8").
func Sniff(content []byte) string { return mimetype.Detect(content).String() }

// Allowed reports whether a sniffed media type may be stored.
func Allowed(mediaType string) bool {
	base, _, _ := strings.Cut(mediaType, ";")
	return slices.Contains(AllowedTypes, strings.TrimSpace(base))
}

// Service runs the document use cases.
type Service struct {
	events *events.Service
	bucket *blob.Bucket
	text   *textExtractor // a PDF's text layer for GET /search (text.go)
}

// NewService returns the service storing contents in bucket.
func NewService(ev *events.Service, bucket *blob.Bucket) *Service {
	return &Service{events: ev, bucket: bucket, text: newTextExtractor()}
}

// NewDocument is a validated upload: to the contact ContactID, or (ContractID set) to a
// contract, whose contact it then belongs to.
type NewDocument struct {
	ContactID  uuid.UUID
	ContractID *uuid.UUID
	Type       string
	Filename   string
	// SignatureFields are where signers sign (a PDF generated from a template: its
	// {{signature:role}} fields); none for an upload.
	SignatureFields []schematype.SignatureField
	// Released releases it to the customer portal at once (release.go).
	Released bool
}

// Create stores content as a document. Order: the blob first, then the row and the event in
// the request's transaction; when that transaction rolls back the blob is removed, and a crash
// in between leaves a blob without row that Sweeper removes. A row never exists without its
// blob.
func (s *Service) Create(ctx context.Context, in NewDocument, file io.Reader) (*ent.Document, error) {
	company, ok := tenancy.CompanyID(ctx)
	if !ok {
		return nil, tenancy.ErrNoCompany
	}
	db := tenancy.Client(ctx)
	if in.ContractID != nil {
		ct, err := db.Contract.Get(ctx, *in.ContractID)
		if err != nil {
			return nil, errs.FromEnt(err, "contract %s", *in.ContractID)
		}
		in.ContactID = ct.ContactID
	}
	owner, err := s.contactOwner(ctx, in.ContactID)
	if err != nil {
		if in.ContractID != nil && errors.Is(err, errs.ErrNotFound) {
			// The contract's contact is not visible to the credential: so is the contract.
			return nil, errs.NotFound("contract %s not found", *in.ContractID)
		}
		return nil, err
	}
	content, err := io.ReadAll(io.LimitReader(file, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read uploaded file: %w", err)
	}
	if len(content) > MaxSize {
		return nil, errs.TooLarge("payload_too_large", "a document has at most %d bytes (10 MB)", MaxSize)
	}
	if len(content) == 0 {
		return nil, errs.InvalidField("file", "empty", "the file is empty")
	}
	mediaType := Sniff(content)
	if !Allowed(mediaType) {
		return nil, errs.Unsupported("document_type_not_allowed",
			"the content is %s, which is not a document type this API stores (see the Document schema)", mediaType)
	}
	text := s.text.Text(ctx, mediaType, content)
	sum := sha256.Sum256(content)
	key := blobstore.NewKey(BlobPrefix, company)
	if err := s.bucket.WriteAll(ctx, key, content, &blob.WriterOptions{ContentType: mediaType}); err != nil {
		return nil, blobstore.WriteFailed(ctx, "document", err)
	}
	if err := tenancy.AfterRollback(ctx, func() { s.removeBlobs(ctx, key) }); err != nil {
		s.removeBlobs(ctx, key)
		return nil, err
	}
	create := db.Document.Create()
	if len(in.SignatureFields) > 0 { // an upload keeps the column NULL
		create.SetSignatureFields(in.SignatureFields)
	}
	if in.Released {
		create.SetReleasedAt(time.Now())
	}
	d, err := create.
		SetContactID(in.ContactID).
		SetNillableContractID(in.ContractID).
		SetType(document.Type(in.Type)).
		SetFilename(in.Filename).
		SetContentType(mediaType).
		SetSize(int64(len(content))).
		SetSha256(hex.EncodeToString(sum[:])).
		SetBlobKey(key).
		SetText(text).
		Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("store document: %w", err)
	}
	if err := s.events.Record(ctx, "document.created", newView(d, owner)); err != nil {
		return nil, err
	}
	return d, nil
}

// contactOwner reads the owner of a contact the credential may see; a contact it may not see
// (another company's, outside a user's visibility) is not found.
func (s *Service) contactOwner(ctx context.Context, id uuid.UUID) (*uuid.UUID, error) {
	c, err := tenancy.Client(ctx).Contact.Query().Where(contact.ID(id)).Select(contact.FieldOwnerID).Only(ctx)
	if err != nil {
		return nil, errs.FromEnt(err, "contact %s", id)
	}
	return c.OwnerID, nil
}

// Get reads one document. Another company's, or one of a contact the credential may not see,
// is not found.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (*ent.Document, error) {
	d, err := tenancy.Client(ctx).Document.Get(ctx, id)
	if err != nil {
		return nil, errs.FromEnt(err, "document %s", id)
	}
	return d, nil
}

// Filter narrows GET /documents. Nil fields do not filter.
type Filter struct {
	ContactID  *uuid.UUID
	ContractID *uuid.UUID
	Type       *string
}

// oldestFirst orders GET /documents: createdAt, then id.
var oldestFirst = paging.ByCreated(func(d *ent.Document) (time.Time, uuid.UUID) { return d.CreatedAt, d.ID })

// List returns a page of the documents matching f, oldest first.
func (s *Service) List(ctx context.Context, f Filter, page paging.Page) ([]*ent.Document, error) {
	return oldestFirst.Rows(page, "documents", func(k paging.Query) ([]*ent.Document, error) {
		q := tenancy.Client(ctx).Document.Query()
		q.Where(paging.If(f.ContactID, document.ContactID)...)
		q.Where(paging.If(f.ContractID, document.ContractID)...)
		q.Where(paging.Enum(f.Type, document.TypeEQ)...)
		return q.Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	})
}

// Delete deletes a document; its blob is removed once the deletion committed.
func (s *Service) Delete(ctx context.Context, d *ent.Document) error {
	owner, err := s.contactOwner(ctx, d.ContactID)
	if err != nil {
		return err
	}
	if err := tenancy.Client(ctx).Document.DeleteOne(d).Exec(ctx); err != nil {
		return fmt.Errorf("delete document %s: %w", d.ID, err)
	}
	if err := tenancy.AfterCommit(ctx, func() { s.removeBlobs(ctx, d.BlobKey) }); err != nil {
		return err
	}
	return s.events.Record(ctx, "document.deleted", newView(d, owner))
}

// ContactDeleting is called in the transaction that deletes contact id (contacts.Service
// OnDelete): its documents go with it by the foreign key, their blobs are removed once the
// deletion committed. No document.deleted events: contact.deleted says the contact went with
// everything of it.
func (s *Service) ContactDeleting(ctx context.Context, id uuid.UUID) error {
	keys, err := tenancy.Client(ctx).Document.Query().Where(document.ContactID(id)).Select(document.FieldBlobKey).Strings(ctx)
	if err != nil {
		return fmt.Errorf("read documents of contact %s: %w", id, err)
	}
	if len(keys) == 0 {
		return nil
	}
	return tenancy.AfterCommit(ctx, func() { s.removeBlobs(ctx, keys...) })
}

// removeBlobs deletes blobs after the request ended one way or the other; a failure is logged
// and left to Sweeper (the blob has no row, so it is an orphan).
func (s *Service) removeBlobs(ctx context.Context, keys ...string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, k := range keys {
		if err := s.bucket.Delete(ctx, k); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			zerolog.Ctx(ctx).Warn().Err(err).Str("blob_key", k).Msg("remove document blob (the orphan sweep retries)")
		}
	}
}
