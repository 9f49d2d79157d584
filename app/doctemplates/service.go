// Package doctemplates serves the company's document templates and standard documents
// (GET /document-templates, GET /standard-documents) and fills a template for a contact into
// a PDF filed as the contact's document (POST /documents/generate). The product's German
// defaults are seeded per company by the operator (app/operator/doctemplates.go); the app
// role may only read both tables.
package doctemplates

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/documents"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contactphone"
	"github.com/brokerdesk/brokerdesk/ent/documenttemplate"
	"github.com/brokerdesk/brokerdesk/ent/standarddocument"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Service runs the template use cases.
type Service struct {
	events *events.Service
	docs   *documents.Service
	now    func() time.Time
}

// NewService returns the service; generated PDFs are filed through docs.
func NewService(ev *events.Service, docs *documents.Service, now func() time.Time) *Service {
	return &Service{events: ev, docs: docs, now: now}
}

// ListTemplates returns the company's templates by name.
func (s *Service) ListTemplates(ctx context.Context) ([]*ent.DocumentTemplate, error) {
	rows, err := tenancy.Client(ctx).DocumentTemplate.Query().
		Order(ent.Asc(documenttemplate.FieldName), ent.Asc(documenttemplate.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list document templates: %w", err)
	}
	return rows, nil
}

// ListStandardDocuments returns the company's standard documents by name, without their
// content (a list never needs the bytes).
func (s *Service) ListStandardDocuments(ctx context.Context) ([]*ent.StandardDocument, error) {
	rows, err := tenancy.Client(ctx).StandardDocument.Query().
		Select(standarddocument.FieldID, standarddocument.FieldCompanyID, standarddocument.FieldCreatedAt,
			standarddocument.FieldUpdatedAt, standarddocument.FieldName, standarddocument.FieldFilename,
			standarddocument.FieldSize, standarddocument.FieldSha256, standarddocument.FieldSignatureFields).
		Order(ent.Asc(standarddocument.FieldName), ent.Asc(standarddocument.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list standard documents: %w", err)
	}
	return rows, nil
}

// StandardDocument reads one standard document with its content; another company's is not
// found.
func (s *Service) StandardDocument(ctx context.Context, id uuid.UUID) (*ent.StandardDocument, error) {
	d, err := tenancy.Client(ctx).StandardDocument.Get(ctx, id)
	if err != nil {
		return nil, errs.FromEnt(err, "standard document %s", id)
	}
	return d, nil
}

// Generate is a validated POST /documents/generate.
type Generate struct {
	TemplateID uuid.UUID
	ContactID  uuid.UUID
	ContractID *uuid.UUID
	Variables  map[string]string
	Filename   string
}

// Generate fills the template for the contact (and contract) and files the PDF as the
// contact's document, with the template's signature fields. Template, contact and contract are
// body references: one the credential cannot see (another company's, a contact outside a
// user's visibility, a contract of another contact) is 422 naming the field, as
// correspondence does, never 404. Each variable must be a plain-named placeholder of the
// template (422 unknown_variables); a placeholder nothing fills is 422 unfilled_placeholders.
func (s *Service) Generate(ctx context.Context, in Generate) (*ent.Document, error) {
	db := tenancy.Client(ctx)
	var v errs.Invalid
	t, err := db.DocumentTemplate.Get(ctx, in.TemplateID)
	switch {
	case ent.IsNotFound(err):
		v.Add("templateId", "unknown_template", "is not a document template of this company (GET /document-templates)")
	case err != nil:
		return nil, fmt.Errorf("read document template %s: %w", in.TemplateID, err)
	}
	src, err := s.sources(ctx, &v, in.ContactID, in.ContractID)
	if err != nil {
		return nil, err
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	names := pdf.Placeholders(t.Body)
	keys := make([]string, 0, len(in.Variables))
	for k := range in.Variables {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch {
		case !IsVariable(k):
			v.Add("variables."+k, "unknown_variables", "the service fills "+k+" itself; variables are the template's placeholders without a dot")
		case !slices.Contains(names, k):
			v.Add("variables."+k, "unknown_variables", fmt.Sprintf("is not a placeholder of template %q", t.Name))
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	values, err := s.values(ctx, src)
	if err != nil {
		return nil, err
	}
	for k, val := range in.Variables {
		values[k] = val
	}
	return s.render(ctx, t, src, values, in.Filename, DocumentType(string(t.Category)))
}

// GenerateFromCategory renders the company's template of category (the first by name, e.g.
// advice_protocol) with values on top of the contact's data and files it as a document of
// type docType. The advice area renders its protocol through it: its values are not checked
// against the template (the caller owns them), but a placeholder nothing fills is still 422
// unfilled_placeholders. A company without a template of the category is 409
// template_missing; an unknown contact or contract 422 as for Generate. filename: as given
// (cleaned by the caller), "" for "<template name>.pdf".
func (s *Service) GenerateFromCategory(ctx context.Context, category string, contactID uuid.UUID, contractID *uuid.UUID,
	values map[string]string, filename, docType string) (*ent.Document, error) {
	t, err := tenancy.Client(ctx).DocumentTemplate.Query().
		Where(documenttemplate.CategoryEQ(documenttemplate.Category(category))).
		Order(ent.Asc(documenttemplate.FieldName), ent.Asc(documenttemplate.FieldID)).First(ctx)
	switch {
	case ent.IsNotFound(err):
		return nil, errs.Conflict("template_missing", "the company has no document template of category %s: "+
			"the operator adds one (brokerdesk doc-template seed|set)", category)
	case err != nil:
		return nil, fmt.Errorf("read %s template: %w", category, err)
	}
	var v errs.Invalid
	src, err := s.sources(ctx, &v, contactID, contractID)
	if err != nil {
		return nil, err
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	all, err := s.values(ctx, src)
	if err != nil {
		return nil, err
	}
	for k, val := range values {
		all[k] = val
	}
	return s.render(ctx, t, src, all, filename, docType)
}

// sources are the records a template is filled from.
type sources struct {
	contact  *ent.Contact
	contract *ent.Contract
	company  *ent.Company
}

// sources reads the contact and the contract (which must be the contact's), adding to v what
// cannot be seen, and the company of ctx.
func (s *Service) sources(ctx context.Context, v *errs.Invalid, contactID uuid.UUID, contractID *uuid.UUID) (sources, error) {
	db := tenancy.Client(ctx)
	var src sources
	c, err := db.Contact.Get(ctx, contactID)
	switch {
	case ent.IsNotFound(err):
		v.Add("contactId", "unknown_contact", "is not a contact of this company")
	case err != nil:
		return src, fmt.Errorf("read contact %s: %w", contactID, err)
	}
	src.contact = c
	if contractID != nil {
		k, err := db.Contract.Get(ctx, *contractID)
		switch {
		case ent.IsNotFound(err) || err == nil && (c == nil || k.ContactID != c.ID):
			v.Add("contractId", "unknown_contract", "is not a contract of contact "+contactID.String())
		case err != nil:
			return src, fmt.Errorf("read contract %s: %w", *contractID, err)
		default:
			src.contract = k
		}
	}
	company, ok := tenancy.CompanyID(ctx)
	if !ok {
		return src, tenancy.ErrNoCompany
	}
	if src.company, err = db.Company.Get(ctx, company); err != nil {
		return src, fmt.Errorf("read company %s: %w", company, err)
	}
	return src, nil
}

// values are the computed placeholders of src: contact.*, contract.* (with a contract),
// user.* (the credential's user, empty for a company key or a job), company.*, date.today.
func (s *Service) values(ctx context.Context, src sources) (map[string]string, error) {
	db := tenancy.Client(ctx)
	v := CompanyValues(src.company)
	phone := ""
	p, err := db.ContactPhone.Query().Where(contactphone.ContactID(src.contact.ID)).
		Order(ent.Desc(contactphone.FieldIsPrimary), ent.Asc(contactphone.FieldCreatedAt)).First(ctx)
	switch {
	case err == nil:
		phone = p.Number
	case !ent.IsNotFound(err):
		return nil, fmt.Errorf("read phone of contact %s: %w", src.contact.ID, err)
	}
	contactValues(v, src.contact, phone)
	if k := src.contract; k != nil {
		ins, err := db.Insurer.Get(ctx, k.InsurerID)
		if err != nil {
			return nil, fmt.Errorf("read insurer %s: %w", k.InsurerID, err)
		}
		contractValues(v, k, ins.Name)
	}
	var first, last, email string
	if pr, ok := tenancy.PrincipalFrom(ctx); ok && pr.UserID != uuid.Nil {
		first, last, email = pr.UserFirstName, pr.UserLastName, pr.UserEmail
	}
	userValues(v, first, last, email)
	dateValues(v, s.now())
	return v, nil
}

// render fills t with values and files the PDF with src's contact (and contract) as docType.
// The PDF's creation date is the service clock's: the same input at the same clock gives the
// same bytes.
func (s *Service) render(ctx context.Context, t *ent.DocumentTemplate, src sources, values map[string]string,
	filename, docType string) (*ent.Document, error) {
	name, err := pdfName(filename, t.Name)
	if err != nil {
		return nil, err
	}
	out, err := pdf.Render(t.Body, values, pdf.Meta{Title: strings.TrimSuffix(name, ".pdf"), Author: src.company.Name,
		Subject: t.Name, CreatedAt: s.now()})
	var unfilled *pdf.UnfilledError
	if errors.As(err, &unfilled) {
		return nil, unfilledError(unfilled.Names, src.contract != nil)
	}
	if err != nil {
		return nil, fmt.Errorf("render template %s: %w", t.ID, err)
	}
	in := documents.NewDocument{ContactID: src.contact.ID, Type: docType, Filename: name, SignatureFields: out.Fields}
	if src.contract != nil {
		in.ContractID = &src.contract.ID
	}
	return s.docs.Create(ctx, in, bytes.NewReader(out.PDF))
}

// unfilledError is the 422 naming each placeholder nothing filled, with what would fill it.
func unfilledError(names []string, haveContract bool) error {
	var v errs.Invalid
	for _, n := range names {
		ns, _, dotted := strings.Cut(n, ".")
		hint := "give it in variables"
		switch {
		case ns == "contract" && !haveContract:
			hint = "the template needs a contract: give contractId"
		case ns == "advice" || ns == "advisor":
			hint = "an advice protocol is rendered from its advice record (POST /advice-records/{id}/document)"
		case dotted:
			hint = "the service has no value for it"
		}
		v.Add("variables."+n, "unfilled_placeholders", fmt.Sprintf("the template uses {{%s}} and nothing fills it: %s", n, hint))
	}
	if len(v.Errors) == 0 { // the renderer named none: still a 422, never a 500
		v.Add("templateId", "unfilled_placeholders", "the template has placeholders nothing fills")
	}
	return &v
}
