package portfolio

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/formats/portfoliocsv"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portfoliomapping"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Bounds of a mapping (docs/decisions/contracts-documents-portfolio.md "CSV mappings").
const (
	MaxMappingColumns  = 100
	MaxMappingDefaults = 50
	maxMappingName     = 200
	maxMappingText     = 200
)

// MappingInput is PortfolioMappingInput: the body of POST /portfolio-mappings; PATCH merges its
// patch into the input of the stored mapping (columns and defaults key by key, null removes).
type MappingInput struct {
	Name         *string           `json:"name,omitempty"`
	Columns      map[string]string `json:"columns,omitempty"`
	Defaults     map[string]string `json:"defaults,omitempty"`
	DecimalPoint *bool             `json:"decimalPoint,omitempty"`
}

// Validate checks a mapping body: every problem is listed, the targets by portfoliocsv (a
// target it does not know is unknown_target, one filled by two columns duplicate_target,
// contract.policyNumber unfilled required).
func (in MappingInput) Validate() error {
	var v errs.Invalid
	text := func(s string) bool {
		return strings.TrimSpace(s) != "" && utf8.RuneCountInString(s) <= maxMappingText && !strings.ContainsRune(s, 0)
	}
	if in.Name == nil {
		v.Add("name", "required", "is required")
	} else {
		v.Check("name", strings.TrimSpace(*in.Name) != "" && utf8.RuneCountInString(*in.Name) <= maxMappingName &&
			!strings.ContainsRune(*in.Name, 0), "invalid_length", fmt.Sprintf("must have 1 to %d characters", maxMappingName))
	}
	v.Check("columns", len(in.Columns) > 0, "required", "map at least the column of contract.policyNumber")
	v.Check("columns", len(in.Columns) <= MaxMappingColumns, "too_many", fmt.Sprintf("at most %d columns", MaxMappingColumns))
	v.Check("defaults", len(in.Defaults) <= MaxMappingDefaults, "too_many", fmt.Sprintf("at most %d defaults", MaxMappingDefaults))
	for c := range in.Columns {
		v.Check("columns."+c, text(c), "invalid_length", fmt.Sprintf("a column name has 1 to %d characters", maxMappingText))
	}
	for t, val := range in.Defaults {
		v.Check("defaults."+t, text(val), "invalid_length", fmt.Sprintf("must have 1 to %d characters", maxMappingText))
	}
	if len(v.Errors) > nameErrors(v) {
		return v.Err() // the targets are judged once columns and defaults are well-formed
	}
	if err := in.mapping().Validate(); err != nil {
		me, ok := err.(*portfoliocsv.MappingError)
		if !ok {
			return err
		}
		for _, p := range me.Problems {
			v.Add(p.Field, p.Code, p.Detail)
		}
	}
	return v.Err()
}

func nameErrors(v errs.Invalid) int {
	n := 0
	for _, e := range v.Errors {
		if e.Field == "name" {
			n++
		}
	}
	return n
}

func (in MappingInput) mapping() portfoliocsv.Mapping {
	return portfoliocsv.Mapping{Columns: in.Columns, Defaults: in.Defaults}
}

func mappingInputOf(m *ent.PortfolioMapping) MappingInput {
	name, dp := m.Name, m.DecimalPoint
	return MappingInput{Name: &name, Columns: m.Columns, Defaults: m.Defaults, DecimalPoint: &dp}
}

// MappingView is the PortfolioMapping resource.
type MappingView struct {
	ID           uuid.UUID         `json:"id"`
	Name         string            `json:"name"`
	Columns      map[string]string `json:"columns"`
	Defaults     map[string]string `json:"defaults"`
	DecimalPoint bool              `json:"decimalPoint"`
	CreatedAt    time.Time         `json:"createdAt"`
	UpdatedAt    time.Time         `json:"updatedAt"`
}

// NewMappingView is the resource of m.
func NewMappingView(m *ent.PortfolioMapping) MappingView {
	v := MappingView{ID: m.ID, Name: m.Name, Columns: m.Columns, Defaults: m.Defaults, DecimalPoint: m.DecimalPoint,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
	if v.Defaults == nil {
		v.Defaults = map[string]string{}
	}
	return v
}

// mappingSnapshot is what a transfer keeps of its mapping (column mapping).
func mappingSnapshot(m *ent.PortfolioMapping) map[string]any {
	defaults := m.Defaults
	if defaults == nil {
		defaults = map[string]string{}
	}
	return map[string]any{"id": m.ID.String(), "columns": m.Columns, "defaults": defaults, "decimalPoint": m.DecimalPoint}
}

// csvOptions reads a transfer's mapping snapshot back.
func csvOptions(snap map[string]any) (portfoliocsv.Mapping, bool) {
	strs := func(v any) map[string]string {
		out := map[string]string{}
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				if s, ok := x.(string); ok {
					out[k] = s
				}
			}
		}
		return out
	}
	dp, _ := snap["decimalPoint"].(bool)
	return portfoliocsv.Mapping{Columns: strs(snap["columns"]), Defaults: strs(snap["defaults"])}, dp
}

// GetMapping reads one mapping. Another company's mapping is not found.
func (s *Service) GetMapping(ctx context.Context, id uuid.UUID) (*ent.PortfolioMapping, error) {
	m, err := tenancy.Client(ctx).PortfolioMapping.Get(ctx, id)
	if err != nil {
		return nil, errs.FromEnt(err, "portfolio mapping %s", id)
	}
	return m, nil
}

// LockMapping reads one mapping and locks it to the end of the transaction.
func (s *Service) LockMapping(ctx context.Context, id uuid.UUID) (*ent.PortfolioMapping, error) {
	m, err := tenancy.Client(ctx).PortfolioMapping.Query().Where(portfoliomapping.ID(id)).ForUpdate().Only(ctx)
	if err != nil {
		return nil, errs.FromEnt(err, "portfolio mapping %s", id)
	}
	return m, nil
}

// mappingsOldestFirst orders GET /portfolio-mappings.
var mappingsOldestFirst = paging.ByCreated(func(m *ent.PortfolioMapping) (time.Time, uuid.UUID) { return m.CreatedAt, m.ID })

// ListMappings returns a page of the mappings, oldest first.
func (s *Service) ListMappings(ctx context.Context, _ struct{}, page paging.Page) ([]*ent.PortfolioMapping, error) {
	return mappingsOldestFirst.Rows(page, "portfolio mappings", func(k paging.Query) ([]*ent.PortfolioMapping, error) {
		return tenancy.Client(ctx).PortfolioMapping.Query().Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	})
}

// CreateMapping stores a validated mapping.
func (s *Service) CreateMapping(ctx context.Context, in MappingInput) (*ent.PortfolioMapping, error) {
	q := tenancy.Client(ctx).PortfolioMapping.Create().SetName(strings.TrimSpace(*in.Name)).SetColumns(in.Columns)
	if len(in.Defaults) > 0 {
		q.SetDefaults(in.Defaults)
	}
	if in.DecimalPoint != nil {
		q.SetDecimalPoint(*in.DecimalPoint)
	}
	m, err := q.Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("create portfolio mapping: %w", err)
	}
	return m, nil
}

// UpdateMapping replaces the fields of m (locked) with in. Transfers made with m keep the
// mapping they were made with (a snapshot).
func (s *Service) UpdateMapping(ctx context.Context, m *ent.PortfolioMapping, in MappingInput) (*ent.PortfolioMapping, error) {
	u := m.Update().SetName(strings.TrimSpace(*in.Name)).SetColumns(in.Columns).SetDecimalPoint(in.DecimalPoint != nil && *in.DecimalPoint)
	if len(in.Defaults) > 0 {
		u.SetDefaults(in.Defaults)
	} else {
		u.ClearDefaults()
	}
	out, err := u.Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("update portfolio mapping %s: %w", m.ID, err)
	}
	return out, nil
}

// DeleteMapping removes m (locked). Transfers made with it keep their snapshot; their
// mappingId goes null (foreign key ON DELETE SET NULL).
func (s *Service) DeleteMapping(ctx context.Context, m *ent.PortfolioMapping) error {
	if err := tenancy.Client(ctx).PortfolioMapping.DeleteOne(m).Exec(ctx); err != nil {
		return fmt.Errorf("delete portfolio mapping %s: %w", m.ID, err)
	}
	return nil
}
