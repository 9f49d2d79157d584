package operator

import (
	"context"
	"fmt"
	"strings"

	"entgo.io/ent/dialect/sql"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/insurer"
)

// Insurer is an entry of the insurer catalog.
type Insurer struct {
	VUNumber string `json:"vuNumber"`
	Name     string `json:"name"`
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
			out = append(out, Insurer{VUNumber: r.VuNumber, Name: r.Name})
		}
		return err
	})
	return out, err
}
