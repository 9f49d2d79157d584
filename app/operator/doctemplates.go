package operator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/doctemplates"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/documenttemplate"
	"github.com/brokerdesk/brokerdesk/ent/standarddocument"
)

// Document templates and standard documents (issue 22): the spec lists only their reads (GET
// /document-templates, GET /standard-documents). The operator writes them (brokerdesk
// doc-template …, brokerdesk standard-document …); every company gets the product's German
// defaults when it is created (doctemplates.DefaultTemplates, DefaultStandardDocuments).

// ListDocTemplates lists the company's document templates by name.
func (s *Service) ListDocTemplates(ctx context.Context, companyID uuid.UUID) ([]doctemplates.TemplateView, error) {
	out := []doctemplates.TemplateView{}
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		if _, err := db.Company.Get(ctx, companyID); err != nil {
			return errs.FromEnt(err, "company %s", companyID)
		}
		rows, err := db.DocumentTemplate.Query().Where(documenttemplate.CompanyID(companyID)).
			Order(ent.Asc(documenttemplate.FieldName)).All(ctx)
		for _, t := range rows {
			out = append(out, doctemplates.NewTemplateView(t))
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list document templates: %w", err)
	}
	return out, nil
}

// SetDocTemplate stores a template of the company under its name: a new one, or the new body
// and category of the template of that name (created false). Documents generated before keep
// what they were.
func (s *Service) SetDocTemplate(ctx context.Context, companyID uuid.UUID, in doctemplates.NewTemplate) (doctemplates.TemplateView, bool, error) {
	in.Name = strings.TrimSpace(in.Name)
	if err := in.Validate(); err != nil {
		return doctemplates.TemplateView{}, false, err
	}
	var out doctemplates.TemplateView
	created := false
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		if _, err := db.Company.Get(ctx, companyID); err != nil {
			return errs.FromEnt(err, "company %s", companyID)
		}
		cur, err := db.DocumentTemplate.Query().
			Where(documenttemplate.CompanyID(companyID), documenttemplate.Name(in.Name)).ForUpdate().Only(ctx)
		var t *ent.DocumentTemplate
		switch {
		case ent.IsNotFound(err):
			created = true
			t, err = in.Apply(db.DocumentTemplate.Create().SetCompanyID(companyID)).Save(ctx)
		case err == nil:
			t, err = in.ApplyUpdate(cur.Update()).Save(ctx)
		}
		if err != nil {
			return err
		}
		out = doctemplates.NewTemplateView(t)
		return nil
	})
	if err != nil {
		return doctemplates.TemplateView{}, false, fmt.Errorf("set document template: %w", err)
	}
	return out, created, nil
}

// SeedDocTemplates adds the default document templates the company lacks (by name) and
// returns those added; a template the company changed or wrote under a default's name stays.
func (s *Service) SeedDocTemplates(ctx context.Context, companyID uuid.UUID) ([]doctemplates.TemplateView, error) {
	var out []doctemplates.TemplateView
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		if _, err := db.Company.Get(ctx, companyID); err != nil {
			return errs.FromEnt(err, "company %s", companyID)
		}
		var err error
		out, err = seedDocTemplates(ctx, db, companyID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("seed document templates: %w", err)
	}
	return out, nil
}

// seedDocTemplates adds the defaults company lacks in the operator transaction of db.
func seedDocTemplates(ctx context.Context, db *ent.Client, companyID uuid.UUID) ([]doctemplates.TemplateView, error) {
	have, err := db.DocumentTemplate.Query().Where(documenttemplate.CompanyID(companyID)).
		Select(documenttemplate.FieldName).Strings(ctx)
	if err != nil {
		return nil, err
	}
	out := []doctemplates.TemplateView{}
	for _, d := range doctemplates.DefaultTemplates() {
		if slices.Contains(have, d.Name) {
			continue
		}
		in := doctemplates.NewTemplate{Name: d.Name, Category: d.Category, Body: d.Body}
		t, err := in.Apply(db.DocumentTemplate.Create().SetCompanyID(companyID)).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("default document template %s: %w", d.Name, err)
		}
		out = append(out, doctemplates.NewTemplateView(t))
	}
	return out, nil
}

// ListStandardDocuments lists the company's standard documents by name.
func (s *Service) ListStandardDocuments(ctx context.Context, companyID uuid.UUID) ([]doctemplates.StandardDocumentView, error) {
	out := []doctemplates.StandardDocumentView{}
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		if _, err := db.Company.Get(ctx, companyID); err != nil {
			return errs.FromEnt(err, "company %s", companyID)
		}
		rows, err := db.StandardDocument.Query().Where(standarddocument.CompanyID(companyID)).
			Order(ent.Asc(standarddocument.FieldName)).All(ctx)
		for _, d := range rows {
			out = append(out, doctemplates.NewStandardDocumentView(d))
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list standard documents: %w", err)
	}
	return out, nil
}

// AddStandardDocument stores a standard document of the company (422 taken when the company
// has one of the name: remove it first).
func (s *Service) AddStandardDocument(ctx context.Context, companyID uuid.UUID, in doctemplates.NewStandardDocument) (doctemplates.StandardDocumentView, error) {
	if err := in.Validate(); err != nil {
		return doctemplates.StandardDocumentView{}, err
	}
	var out doctemplates.StandardDocumentView
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		if _, err := db.Company.Get(ctx, companyID); err != nil {
			return errs.FromEnt(err, "company %s", companyID)
		}
		d, err := in.Apply(db.StandardDocument.Create().SetCompanyID(companyID)).Save(ctx)
		if ent.IsConstraintError(err) {
			return errs.InvalidField("name", "taken", "the company has a standard document of this name (remove it first)")
		}
		if err != nil {
			return err
		}
		out = doctemplates.NewStandardDocumentView(d)
		return nil
	})
	if err != nil {
		return doctemplates.StandardDocumentView{}, fmt.Errorf("add standard document: %w", err)
	}
	return out, nil
}

// RemoveStandardDocument deletes the company's standard document named by id or name.
// Signature requests made from it keep their merged PDF.
func (s *Service) RemoveStandardDocument(ctx context.Context, companyID uuid.UUID, ref string) (doctemplates.StandardDocumentView, error) {
	var out doctemplates.StandardDocumentView
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		q := db.StandardDocument.Query().Where(standarddocument.CompanyID(companyID))
		if id, err := uuid.Parse(ref); err == nil {
			q.Where(standarddocument.ID(id))
		} else {
			q.Where(standarddocument.Name(ref))
		}
		d, err := q.Only(ctx)
		if ent.IsNotFound(err) {
			return errs.NotFound("standard document %s not found in company %s", ref, companyID)
		}
		if err != nil {
			return err
		}
		out = doctemplates.NewStandardDocumentView(d)
		return db.StandardDocument.DeleteOne(d).Exec(ctx)
	})
	if err != nil {
		return doctemplates.StandardDocumentView{}, fmt.Errorf("remove standard document: %w", err)
	}
	return out, nil
}

// SeedStandardDocuments adds the default standard documents the company lacks (by name),
// rendered with the company's data as it is now, and returns those added.
func (s *Service) SeedStandardDocuments(ctx context.Context, companyID uuid.UUID) ([]doctemplates.StandardDocumentView, error) {
	var out []doctemplates.StandardDocumentView
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		co, err := db.Company.Get(ctx, companyID)
		if err != nil {
			return errs.FromEnt(err, "company %s", companyID)
		}
		docs, err := renderStandardDocuments(co, time.Now())
		if err != nil {
			return err
		}
		out, err = seedStandardDocuments(ctx, db, companyID, docs)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("seed standard documents: %w", err)
	}
	return out, nil
}

// renderStandardDocuments renders the default standard documents for co.
func renderStandardDocuments(co *ent.Company, now time.Time) ([]doctemplates.NewStandardDocument, error) {
	values := doctemplates.CompanyValues(co)
	var out []doctemplates.NewStandardDocument
	for _, d := range doctemplates.DefaultStandardDocuments() {
		doc, err := doctemplates.RenderStandard(d, values, now)
		if err != nil {
			return nil, err
		}
		out = append(out, doc)
	}
	return out, nil
}

// seedStandardDocuments stores the documents of docs company lacks (by name) in the operator
// transaction of db.
func seedStandardDocuments(ctx context.Context, db *ent.Client, companyID uuid.UUID, docs []doctemplates.NewStandardDocument) ([]doctemplates.StandardDocumentView, error) {
	have, err := db.StandardDocument.Query().Where(standarddocument.CompanyID(companyID)).
		Select(standarddocument.FieldName).Strings(ctx)
	if err != nil {
		return nil, err
	}
	out := []doctemplates.StandardDocumentView{}
	for _, d := range docs {
		if slices.Contains(have, d.Name) {
			continue
		}
		row, err := d.Apply(db.StandardDocument.Create().SetCompanyID(companyID)).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("default standard document %s: %w", d.Name, err)
		}
		out = append(out, doctemplates.NewStandardDocumentView(row))
	}
	return out, nil
}

// seedDocuments gives a new company the default templates and the standard documents docs
// (rendered once for a company and its sandbox twin, which share name and address).
func seedDocuments(ctx context.Context, db *ent.Client, companyID uuid.UUID, docs []doctemplates.NewStandardDocument) error {
	if _, err := seedDocTemplates(ctx, db, companyID); err != nil {
		return err
	}
	_, err := seedStandardDocuments(ctx, db, companyID, docs)
	return err
}
