package reports

import (
	"context"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/contracts"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contract"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// RenewalWindow is the filter of GET /reports/renewals: the days from and to, both included.
type RenewalWindow struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// Renewal is a contract due in the window and the day it is due: its end date or the first
// anniversary of its main renewal date in the window, whichever comes first. Due orders the
// report and continues it past a cursor.
type Renewal struct {
	contracts.Contract
	Due string
}

// byDue orders the renewals by due day, then id. The SQL applies it (renewalsPageSQL); the keyset
// gives the cursor key of a row.
var byDue = paging.Keyset[Renewal]{Kind: paging.Text, Value: func(r Renewal) (any, uuid.UUID) { return r.Due, r.ID }}

// renewals handles GET /reports/renewals: Paged, a Page of Contract by due day, then id.
func (h *Handler) renewals(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "reports/renewals", parseRenewalWindow, h.svc.Renewals, byDue, Renewal.view)
}

func (r Renewal) view() contracts.View { return r.Contract.View() }

// parseRenewalWindow reads from and to, both required.
func parseRenewalWindow(c *fiber.Ctx, v *errs.Invalid) (RenewalWindow, error) {
	from, to, ok := httpx.QueryWindow(c, v, true)
	if !ok {
		return RenewalWindow{}, nil
	}
	return RenewalWindow{From: *from, To: *to}, nil
}

// Renewals returns a page of the contracts due in w (Renewal), each with its insurer.
func (s *Service) Renewals(ctx context.Context, w RenewalWindow, page paging.Page) ([]Renewal, error) {
	day, id, ok, err := afterKey(page)
	if err != nil {
		return nil, err
	}
	var afterDay *time.Time
	if ok {
		d, perr := time.Parse(time.DateOnly, day)
		if perr != nil {
			return nil, errs.InvalidField("cursor", "invalid_cursor", "is not a cursor of this list")
		}
		afterDay = &d
	}
	if err := tenancy.WithoutJIT(ctx); err != nil {
		return nil, err
	}
	query, args := renewalsPageSQL(w.From, w.To, page.Limit+1, afterDay, id)
	// Planned for its values, each time (tenancy.CustomPlans): a generic plan, which PostgreSQL may
	// keep after five runs, is built without the window's and the owners' values.
	rows, err := tenancy.Client(ctx).QueryContext(tenancy.CustomPlans(ctx), query, args...)
	if err != nil {
		return nil, fmt.Errorf("renewals report: %w", err)
	}
	defer rows.Close()
	var (
		ids []uuid.UUID
		due = map[uuid.UUID]string{}
	)
	for rows.Next() {
		var (
			id uuid.UUID
			d  string
		)
		if err := rows.Scan(&id, &d); err != nil {
			return nil, fmt.Errorf("renewals report: %w", err)
		}
		ids = append(ids, id)
		due[id] = d
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("renewals report: %w", err)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("renewals report: %w", err)
	}
	// The rows themselves through ent, for the contracts' view; the same transaction sees the
	// same rows, so none is missing.
	cs, err := tenancy.Client(ctx).Contract.Query().Where(contract.IDIn(ids...)).WithInsurer().All(ctx)
	if err != nil {
		return nil, fmt.Errorf("renewals report: %w", err)
	}
	byID := make(map[uuid.UUID]*ent.Contract, len(cs))
	for _, c := range cs {
		byID[c.ID] = c
	}
	out := make([]Renewal, 0, len(ids))
	for _, id := range ids {
		if c := byID[id]; c != nil {
			out = append(out, Renewal{Contract: contracts.Contract{Contract: c}, Due: due[id]})
		}
	}
	return out, nil
}
