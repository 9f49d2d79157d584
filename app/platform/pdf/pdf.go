// Package pdf renders, inspects and assembles the PDFs of the signing area (issue 22) in the
// server process, without a browser: templates in a small markup become PDFs with an embedded
// Unicode font (codeberg.org/go-pdf/fpdf), deterministic for the same input; pdfcpu checks,
// merges and stamps. No HTTP, no database.
//
// # Template markup
//
// A template body is UTF-8 text, read line by line (leading and trailing spaces of a line do
// not count):
//
//   - "# Heading" is a large bold heading, "## Heading" a bold one;
//   - "- item" is a bullet item; "---" a horizontal rule; "[[pagebreak]]" starts a new page;
//   - every other non-empty line is a line of text, wrapped at the page width; consecutive
//     lines form one block, an empty line is a paragraph gap;
//   - {{name}} is a placeholder (name: letters, digits, _ and .; spaces inside the braces do
//     not count). Values are filled in one pass and printed literally: a value is never read
//     as markup or as placeholders (a contact named "{{company.iban}}" or "# x" prints exactly
//     that); a value with line breaks prints as several lines. A {{…}} that is not a valid
//     name is a *MarkupError (Check finds it); a "{{" without "}}" is plain text;
//   - a line that is only {{signature:ROLE}} (ROLE: lower-case letters and _, e.g. contact,
//     broker) reserves a signature box of 70 x 22 mm, never split over pages, with a line and
//     the caption "Unterschrift Kunde/Kundin" (contact), "Unterschrift Makler/in" (broker) or
//     "Unterschrift ROLE" under it. Render returns one SignatureField per box: Role, the
//     1-based Page and the rectangle relative to the page (0-1, origin top left). A signature
//     placeholder anywhere else is a *MarkupError.
//
// Pages are A4 portrait with 20 mm margins and a footer "Seite X von Y"; Meta.Title is the
// document title. A placeholder without a value makes Render fail with *UnfilledError.
package pdf

import (
	"time"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

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

// Appearance is one signature to place: the image (PNG) in the field's rectangle, with a
// caption under it (name and time).
type Appearance struct {
	Field   schematype.SignatureField
	PNG     []byte
	Caption string
}

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
