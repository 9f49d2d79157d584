package operator

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/emailtemplate"
)

// E-mail templates (issue 21): the spec lists them (GET /email-templates) but not how they are
// written. The operator writes them (brokerdesk template create | seed); every company gets
// emails.DefaultTemplates when it is created.

// CreateTemplate stores a template of the company (422 taken when the company has one of the
// name).
func (s *Service) CreateTemplate(ctx context.Context, companyID uuid.UUID, in emails.NewTemplate) (emails.TemplateView, error) {
	if err := in.Validate(); err != nil {
		return emails.TemplateView{}, err
	}
	var out emails.TemplateView
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		if _, err := db.Company.Get(ctx, companyID); err != nil {
			return errs.FromEnt(err, "company %s", companyID)
		}
		t, err := in.Apply(db.EmailTemplate.Create().SetCompanyID(companyID)).Save(ctx)
		if ent.IsConstraintError(err) {
			return errs.InvalidField("name", "taken", "the company has a template of this name")
		}
		if err != nil {
			return err
		}
		out = emails.NewTemplateView(t)
		return nil
	})
	if err != nil {
		return emails.TemplateView{}, fmt.Errorf("create template: %w", err)
	}
	return out, nil
}

// SeedTemplates adds the default templates the company lacks (by name) and returns those
// added; a template the company changed or wrote under a default's name stays as it is.
func (s *Service) SeedTemplates(ctx context.Context, companyID uuid.UUID) ([]emails.TemplateView, error) {
	var out []emails.TemplateView
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		if _, err := db.Company.Get(ctx, companyID); err != nil {
			return errs.FromEnt(err, "company %s", companyID)
		}
		added, err := seedTemplates(ctx, db, companyID)
		out = added
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("seed templates: %w", err)
	}
	return out, nil
}

// seedTemplates adds the defaults company lacks in the operator transaction of db.
func seedTemplates(ctx context.Context, db *ent.Client, companyID uuid.UUID) ([]emails.TemplateView, error) {
	have, err := db.EmailTemplate.Query().Where(emailtemplate.CompanyID(companyID)).Select(emailtemplate.FieldName).Strings(ctx)
	if err != nil {
		return nil, err
	}
	out := []emails.TemplateView{}
	for _, d := range emails.DefaultTemplates() {
		if slices.Contains(have, d.Name) {
			continue
		}
		t, err := d.Apply(db.EmailTemplate.Create().SetCompanyID(companyID)).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("default template %s: %w", d.Name, err)
		}
		out = append(out, emails.NewTemplateView(t))
	}
	return out, nil
}
