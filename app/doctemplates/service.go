// Package doctemplates serves the company's document templates and standard documents
// (GET /document-templates, GET /standard-documents) and fills a template for a contact into
// a PDF filed as the contact's document (POST /documents/generate). The product's German
// defaults are seeded per company by the operator.
//
// STUB: the contract the other areas build on; the owner fills it in.
package doctemplates

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/documents"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/ent"
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

// Generate is a validated POST /documents/generate.
type Generate struct {
	TemplateID uuid.UUID
	ContactID  uuid.UUID
	ContractID *uuid.UUID
	Variables  map[string]string
	Filename   string
}

// Generate fills the template for the contact (and contract) and files the PDF as the
// contact's document, with the template's signature fields.
func (s *Service) Generate(ctx context.Context, in Generate) (*ent.Document, error) {
	return nil, errors.New("doctemplates: not implemented yet")
}

// GenerateFromCategory renders the company's template of category (the first by name, e.g.
// advice_protocol) with values on top of the contact's data and files it as a document of
// type docType. The advice area renders its protocol through it.
func (s *Service) GenerateFromCategory(ctx context.Context, category string, contactID uuid.UUID, contractID *uuid.UUID,
	values map[string]string, filename, docType string) (*ent.Document, error) {
	return nil, errors.New("doctemplates: not implemented yet")
}
