package reports

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Pipeline is the answer of GET /reports/pipeline over the leads created in the window (test
// leads left out), as the credential sees them (docs/decisions/reports.md "Pipeline and
// activity").
type Pipeline struct {
	// Stages: every stage of the company in board order, with the window's leads now in it.
	Stages []StageCount `json:"stages"`
	// Sources: every lead source in the schema's order, then leads without one (source null)
	// when there are any.
	Sources []SourceCount `json:"sources"`
	// Leads is the number of the window's leads: the base of ConversionRate.
	Leads     int64 `json:"leads"`
	Converted int64 `json:"converted"`
	// ConversionRate is Converted / Leads, 4 fraction digits, 0 without leads. A JSON number
	// written from PostgreSQL's numeric as is, never through a float.
	ConversionRate json.Number `json:"conversionRate"`
	// AverageDaysToConversion is the mean of (convertedAt - createdAt) in days of the converted
	// leads, 2 fraction digits; null when none is converted.
	AverageDaysToConversion *json.Number `json:"averageDaysToConversion"`
}

// StageCount is one stage of the pipeline: its key (new, converted or the company stage's
// slug), its name and the count of leads now in it.
type StageCount struct {
	Stage string `json:"stage"`
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

// SourceCount is the count of leads of one source; Source nil: leads without a source.
type SourceCount struct {
	Source *string `json:"source"`
	Count  int64   `json:"count"`
}

// pipeline handles GET /reports/pipeline: from and to optional.
func (h *Handler) pipeline(c *fiber.Ctx) error {
	var v errs.Invalid
	p := readReportPeriod(c, &v, false)
	if err := v.Err(); err != nil {
		return err
	}
	r, err := h.svc.Pipeline(c.UserContext(), p)
	if err != nil {
		return err
	}
	return c.JSON(r)
}

// Pipeline computes the pipeline report of the leads created in p: three aggregates in the
// request's transaction (stages, sources, the summary).
func (s *Service) Pipeline(ctx context.Context, p reportPeriod) (Pipeline, error) {
	db := tenancy.Client(ctx)
	args := []any{p.start, p.end}
	out := Pipeline{Stages: []StageCount{}, Sources: []SourceCount{}}

	rows, err := db.QueryContext(ctx, pipelineStagesQuery, args...)
	if err != nil {
		return Pipeline{}, fmt.Errorf("pipeline stages: %w", err)
	}
	for rows.Next() {
		var sc StageCount
		if err := rows.Scan(&sc.Stage, &sc.Name, &sc.Count); err != nil {
			rows.Close()
			return Pipeline{}, fmt.Errorf("pipeline stages: %w", err)
		}
		out.Stages = append(out.Stages, sc)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Pipeline{}, fmt.Errorf("pipeline stages: %w", err)
	}

	bySource := map[string]int64{}
	var none int64
	rows, err = db.QueryContext(ctx, pipelineSourcesQuery, args...)
	if err != nil {
		return Pipeline{}, fmt.Errorf("pipeline sources: %w", err)
	}
	for rows.Next() {
		var src *string
		var n int64
		if err := rows.Scan(&src, &n); err != nil {
			rows.Close()
			return Pipeline{}, fmt.Errorf("pipeline sources: %w", err)
		}
		if src == nil {
			none = n
		} else {
			bySource[*src] = n
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Pipeline{}, fmt.Errorf("pipeline sources: %w", err)
	}
	// The schema's list, not the rows found: a dashboard gets the same sources every time.
	for _, src := range schema.LeadSources {
		out.Sources = append(out.Sources, SourceCount{Source: &src, Count: bySource[src]})
	}
	if none > 0 {
		out.Sources = append(out.Sources, SourceCount{Count: none})
	}

	var rate string
	var days *string
	if err := tenancy.QueryRow(ctx, pipelineSummaryQuery, args, &out.Leads, &out.Converted, &rate, &days); err != nil {
		return Pipeline{}, fmt.Errorf("pipeline summary: %w", err)
	}
	out.ConversionRate = json.Number(rate)
	if days != nil {
		d := json.Number(*days)
		out.AverageDaysToConversion = &d
	}
	return out, nil
}
