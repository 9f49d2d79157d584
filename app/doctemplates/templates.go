package doctemplates

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/documenttemplate"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Templates and standard documents are written by the operator only (brokerdesk doc-template
// set | seed, brokerdesk standard-document add | remove | seed; the app role may only SELECT
// both tables). The types below are what the operator writes, checked before anything is
// stored.

// Bounds of what the operator writes.
const (
	maxName = 200
	// MaxBody bounds a template body (characters): a contract of a few pages is ~10,000.
	MaxBody = 200_000
	// MaxStandardSize bounds a standard document (bytes): the row holds the content.
	MaxStandardSize = 10_000_000
)

// NewTemplate is a template as the operator writes it.
type NewTemplate struct {
	Name     string
	Category string
	Body     string
}

// Validate checks a template, every bad field at once (field names are the CLI's flags): a
// name (no path separators or control characters: it is the default file name of what is
// generated from it), a category of the spec's seven, a body the renderer reads
// (pdf.Check) whose placeholders are Known and whose signature fields are the contact's or
// the broker's, and which renders when every placeholder has a value.
func (t NewTemplate) Validate() error {
	var v errs.Invalid
	checkName(&v, "name", t.Name)
	v.Check("category", slices.Contains(schema.DocumentTemplateCategories, t.Category), "invalid_enum",
		"must be one of "+strings.Join(schema.DocumentTemplateCategories, ", "))
	v.Require("file", strings.TrimSpace(t.Body) != "")
	check.Len(&v, "file", &t.Body, MaxBody)
	v.Check("file", utf8.ValidString(t.Body), "invalid_character", "must be UTF-8")
	if len(v.Errors) == 0 {
		var me *pdf.MarkupError
		if err := pdf.Check(t.Body); errors.As(err, &me) {
			v.Add("file", "invalid_markup", me.Error())
		} else if err != nil {
			return err
		}
	}
	if len(v.Errors) == 0 {
		names := pdf.Placeholders(t.Body)
		for _, bad := range checkPlaceholders(names, pdf.SignatureRoles(t.Body)) {
			v.Add("file", "unknown_placeholder", bad)
		}
		if len(v.Errors) == 0 {
			// A trial render with every placeholder filled: a body that cannot be laid out (too
			// many pages) is refused now, not at the first POST /documents/generate.
			if _, err := pdf.Render(t.Body, BlankValues(names, nil), pdf.Meta{Title: t.Name}); err != nil {
				v.Add("file", "invalid_markup", err.Error())
			}
		}
	}
	return v.Err()
}

// checkName adds field's problems as a template's or standard document's name.
func checkName(v *errs.Invalid, field, name string) {
	v.Require(field, strings.TrimSpace(name) != "")
	check.Len(v, field, &name, maxName)
	v.Check(field, utf8.ValidString(name) && !strings.ContainsFunc(name, func(r rune) bool {
		return r == '/' || r == '\\' || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
	}), "invalid_character", "must not contain / \\ or control characters")
}

// Apply writes t to a template's create, with its placeholders and signature roles.
func (t NewTemplate) Apply(c *ent.DocumentTemplateCreate) *ent.DocumentTemplateCreate {
	return c.SetName(strings.TrimSpace(t.Name)).SetCategory(documenttemplate.Category(t.Category)).SetBody(t.Body).
		SetPlaceholders(nonNil(pdf.Placeholders(t.Body))).SetSignatureRoles(nonNil(pdf.SignatureRoles(t.Body)))
}

// ApplyUpdate writes t's category and body to an existing template of the same name.
func (t NewTemplate) ApplyUpdate(u *ent.DocumentTemplateUpdateOne) *ent.DocumentTemplateUpdateOne {
	return u.SetCategory(documenttemplate.Category(t.Category)).SetBody(t.Body).
		SetPlaceholders(nonNil(pdf.Placeholders(t.Body))).SetSignatureRoles(nonNil(pdf.SignatureRoles(t.Body)))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// NewStandardDocument is a standard document as the operator adds it: a PDF and where its
// signers sign (Role contact or broker; pages 1-based, positions relative 0–1 from the top
// left).
type NewStandardDocument struct {
	Name     string
	Filename string
	Content  []byte
	Fields   []schematype.SignatureField
}

// Validate checks a standard document: name and file name, a PDF the signing area accepts
// (pdf.Inspect: not encrypted, no JavaScript, within limits) of at most MaxStandardSize bytes,
// and fields inside its pages.
func (d NewStandardDocument) Validate() error {
	var v errs.Invalid
	checkName(&v, "name", d.Name)
	checkName(&v, "filename", d.Filename)
	v.Check("filename", utf8.RuneCountInString(d.Filename) <= MaxFilename, "too_long", fmt.Sprintf("at most %d characters", MaxFilename))
	var info pdf.Info
	switch {
	case len(d.Content) == 0:
		v.Add("file", "required", "is required")
	case len(d.Content) > MaxStandardSize:
		v.Add("file", "too_large", fmt.Sprintf("at most %d bytes", MaxStandardSize))
	default:
		var err error
		info, err = pdf.Inspect(d.Content, pdf.Limits{MaxBytes: MaxStandardSize})
		var refused *pdf.RefusedError
		switch {
		case errors.As(err, &refused):
			v.Add("file", refused.Code, refused.Reason)
		case err != nil:
			return err
		}
	}
	for i, f := range d.Fields {
		field := fmt.Sprintf("fields.%d", i)
		v.Check(field+".role", f.Role == "contact" || f.Role == "broker", "invalid_enum", "must be contact or broker")
		v.Check(field+".page", f.Page >= 1 && (info.Pages == 0 || f.Page <= info.Pages), "out_of_range",
			fmt.Sprintf("must be a page of the document (1–%d)", info.Pages))
		v.Check(field, f.X >= 0 && f.Y >= 0 && f.Width > 0 && f.Height > 0 && f.X+f.Width <= 1 && f.Y+f.Height <= 1,
			"out_of_range", "x, y, width and height are relative to the page (0–1) and the box lies inside it")
	}
	return v.Err()
}

// Apply writes d to a standard document's create, with its size and hash.
func (d NewStandardDocument) Apply(c *ent.StandardDocumentCreate) *ent.StandardDocumentCreate {
	sum := sha256.Sum256(d.Content)
	fields := d.Fields
	if fields == nil {
		fields = []schematype.SignatureField{}
	}
	return c.SetName(strings.TrimSpace(d.Name)).SetFilename(strings.TrimSpace(d.Filename)).SetContent(d.Content).
		SetSize(int64(len(d.Content))).SetSha256(hex.EncodeToString(sum[:])).SetSignatureFields(fields)
}

// RenderStandard renders the default standard document d for a company: company.* from
// company, every other placeholder a blank line to fill in by hand. createdAt is the PDF's
// creation date.
func RenderStandard(d DefaultStandard, company map[string]string, createdAt time.Time) (NewStandardDocument, error) {
	values := BlankValues(pdf.Placeholders(d.Body), company)
	out, err := pdf.Render(d.Body, values, pdf.Meta{Title: d.Name, Author: company["company.name"], CreatedAt: createdAt})
	if err != nil {
		return NewStandardDocument{}, fmt.Errorf("render standard document %s: %w", d.Name, err)
	}
	return NewStandardDocument{Name: d.Name, Filename: d.Filename, Content: out.PDF, Fields: out.Fields}, nil
}
