package operator

import (
	"context"
	"fmt"
	"strings"

	"entgo.io/ent/dialect/sql"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/insurer"
)

// Insurer is an entry of the insurer catalog.
type Insurer struct {
	VUNumber string `json:"vuNumber"`
	Name     string `json:"name"`
	// CorrespondenceEmail is where correspondence cases to the insurer are routed ("" when
	// none is known: a case then needs its recipientEmail before it is sent).
	CorrespondenceEmail string `json:"correspondenceEmail,omitempty"`
}

// SetInsurer adds the VU number to the insurer catalog with name, or renames its entry (the
// placeholder "VU <number>" an import added, for instance).
func (s *Service) SetInsurer(ctx context.Context, vuNumber, name string) (Insurer, error) {
	vuNumber, name = strings.TrimSpace(vuNumber), strings.TrimSpace(name)
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		return db.Insurer.Create().SetVuNumber(vuNumber).SetName(name).
			OnConflict(sql.ConflictColumns(insurer.FieldVuNumber)).UpdateName().Exec(ctx)
	})
	if err != nil {
		return Insurer{}, fmt.Errorf("set insurer %s: %w", vuNumber, err)
	}
	return Insurer{VUNumber: vuNumber, Name: name}, nil
}

// ListInsurers returns the catalog by VU number.
func (s *Service) ListInsurers(ctx context.Context) ([]Insurer, error) {
	var out []Insurer
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		rows, err := db.Insurer.Query().Order(ent.Asc(insurer.FieldVuNumber)).All(ctx)
		for _, r := range rows {
			out = append(out, Insurer{VUNumber: r.VuNumber, Name: r.Name, CorrespondenceEmail: r.CorrespondenceEmail})
		}
		return err
	})
	return out, err
}

// SetInsurerEmail sets the correspondence address of the insurer with the VU number: where
// correspondence cases to it are routed (app/correspondence). An empty email clears it. The
// insurer must be in the catalog (SetInsurer adds it); the address must be one plain e-mail
// address of at most 320 characters (the column's bound and the spec's recipientEmail).
func (s *Service) SetInsurerEmail(ctx context.Context, vuNumber, email string) (Insurer, error) {
	vuNumber, email = strings.TrimSpace(vuNumber), strings.TrimSpace(email)
	var v errs.Invalid
	v.Check("email", email == "" || (check.ValidEmail(email) && len(email) <= 320), "invalid_email",
		"must be one e-mail address of at most 320 characters, or empty to clear it")
	if err := v.Err(); err != nil {
		return Insurer{}, err
	}
	var out Insurer
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		ins, err := db.Insurer.Query().Where(insurer.VuNumber(vuNumber)).Only(ctx)
		if err != nil {
			return errs.FromEnt(err, "insurer %s", vuNumber)
		}
		ins, err = ins.Update().SetCorrespondenceEmail(email).Save(ctx)
		if err != nil {
			return err
		}
		out = Insurer{VUNumber: ins.VuNumber, Name: ins.Name, CorrespondenceEmail: ins.CorrespondenceEmail}
		return nil
	})
	if err != nil {
		return Insurer{}, fmt.Errorf("set e-mail of insurer %s: %w", vuNumber, err)
	}
	return out, nil
}
