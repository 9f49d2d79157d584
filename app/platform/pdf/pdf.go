// Package pdf renders, inspects and assembles the PDFs of the signing area (issue 22) in the
// server process, without a browser: templates in a small markup become PDFs with an embedded
// Unicode font (codeberg.org/go-pdf/fpdf), deterministic for the same input; pdfcpu checks,
// merges and stamps. No HTTP, no database.
//
// STUB: the signatures of this file are the contract the areas build on (doctemplates,
// signatures, advice); the bodies are filled in by the package's owner.
package pdf

import (
	"errors"
	"time"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

var errTODO = errors.New("pdf: not implemented yet")

// Meta is the document information of a rendered PDF. CreatedAt is written as given (the
// renderer never reads the clock), so the same input gives the same bytes.
type Meta struct {
	Title, Author, Subject string
	CreatedAt              time.Time
}

// Rendered is a rendered template: the PDF, its page count, and the signature fields the
// template placed ({{signature:role}}), with Role set and positions relative to the page.
type Rendered struct {
	PDF    []byte
	Pages  int
	Fields []schematype.SignatureField
}

// Placeholders are the names of the {{placeholders}} of a template body, sorted, without
// repeats and without the signature fields.
func Placeholders(body string) []string { return nil }

// SignatureRoles are the roles of the signature fields ({{signature:contact}}) of a body, in
// order of first appearance.
func SignatureRoles(body string) []string { return nil }

// Render fills body's placeholders with values in one pass (a value is printed literally,
// never read as markup or placeholders) and lays it out. A placeholder without a value is an
// *UnfilledError naming every such placeholder.
func Render(body string, values map[string]string, meta Meta) (Rendered, error) {
	return Rendered{}, errTODO
}

// UnfilledError names the placeholders Render had no value for.
type UnfilledError struct{ Names []string }

func (e *UnfilledError) Error() string { return "pdf: placeholders without a value" }

// Limits bound what Inspect accepts.
type Limits struct {
	MaxBytes int64 // default 20 MB
	MaxPages int   // default 200
}

// Info is what Inspect found.
type Info struct {
	Pages int
	// Sizes are the page sizes in points (width, height), per page.
	Sizes [][2]float64
}

// RefusedError is a PDF Inspect refuses: Code is one of not_pdf, encrypted, javascript,
// too_many_pages, too_large; Reason says it in a sentence for the problem's detail.
type RefusedError struct{ Code, Reason string }

func (e *RefusedError) Error() string { return "pdf: " + e.Reason }

// Inspect checks that content is a PDF the service may have signed (not encrypted, no
// JavaScript or other active content, within limits), reading it with bounded memory.
func Inspect(content []byte, l Limits) (Info, error) { return Info{}, errTODO }

// Merge concatenates PDFs in order into one.
func Merge(docs [][]byte) ([]byte, error) { return nil, errTODO }

// Appearance is one signature to place: the image (PNG) in the field's rectangle, with a
// caption under it (name and time).
type Appearance struct {
	Field   schematype.SignatureField
	PNG     []byte
	Caption string
}

// Stamp places the appearances on their pages.
func Stamp(content []byte, apps []Appearance) ([]byte, error) { return nil, errTODO }

// AuditSigner is one signer on the audit page.
type AuditSigner struct {
	Name, Email, Role    string
	VerifiedAt, SignedAt time.Time
	IP, UserAgent        string
	Signature            []byte // PNG
}

// Audit is the audit page appended to a signed PDF.
type Audit struct {
	Title        string
	RequestID    string
	DocumentHash string // SHA-256 (hex) of the PDF the signers saw
	Pages        int
	CreatedAt    time.Time
	CompletedAt  time.Time
	Signers      []AuditSigner
}

// AppendAudit appends the audit page (German) to content.
func AppendAudit(content []byte, a Audit) ([]byte, error) { return nil, errTODO }

// TypedSignature renders a typed name as a signature image (PNG).
func TypedSignature(name string) ([]byte, error) { return nil, errTODO }
