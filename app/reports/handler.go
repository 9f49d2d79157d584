// Package reports serves the five overview reports under /reports (issue 24): portfolio,
// renewals, cross-selling, pipeline and activity. Each is a read of the company's contracts,
// contacts, leads, tasks, appointments and e-mails as the credential may see them: the
// queries run in the request's pinned transaction, so row-level security and the ent rules
// narrow an agent's report to its own and delegated customers, as everywhere else. One file a
// report (portfolio.go, renewals.go, crossselling.go, pipeline.go, activity.go); the query
// parameters they share in reports_query.go.
package reports

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Service computes the reports.
type Service struct{ now func() time.Time }

// NewService builds the service; now is the clock ("today" of asOf defaults).
func NewService(now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{now: now}
}

// Handler serves the report endpoints.
type Handler struct {
	svc   *Service
	pager *httpx.Pager
}

// NewHandler builds the handler.
func NewHandler(svc *Service, pager *httpx.Pager) *Handler { return &Handler{svc: svc, pager: pager} }

// Mount registers the routes (scope reports:read, the spec's).
func (h *Handler) Mount(r fiber.Router) {
	read := policy.Require("reports:read")
	r.Get("/reports/portfolio", read, h.portfolio)
	r.Get("/reports/renewals", read, h.renewals)
	r.Get("/reports/cross-selling", read, h.crossSelling)
	r.Get("/reports/pipeline", read, h.pipeline)
	r.Get("/reports/activity", read, h.activity)
}
