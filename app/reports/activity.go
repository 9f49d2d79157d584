package reports

import (
	"context"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// ActivityRow is one user's activity in the window of GET /reports/activity; what each count
// counts is activityQuery's comment (and docs/decisions/reports.md "Pipeline and activity").
type ActivityRow struct {
	UserID           uuid.UUID        `json:"userId"`
	FirstName        string           `json:"firstName"`
	LastName         string           `json:"lastName"`
	Email            string           `json:"email"`
	ContactsCreated  int64            `json:"contactsCreated"`
	ContractsCreated int64            `json:"contractsCreated"`
	NewAnnualPremium schematype.Money `json:"newAnnualPremium"`
	TasksCompleted   int64            `json:"tasksCompleted"`
	Appointments     int64            `json:"appointments"`
	EmailsSent       int64            `json:"emailsSent"`
	LeadsConverted   int64            `json:"leadsConverted"`
}

// activity handles GET /reports/activity: from and to required.
func (h *Handler) activity(c *fiber.Ctx) error {
	var v errs.Invalid
	p := readReportPeriod(c, &v, true)
	if err := v.Err(); err != nil {
		return err
	}
	rows, err := h.svc.Activity(c.UserContext(), p)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": rows})
}

// Activity computes one row per user the credential may see (every user of the company; a
// restricted credential: its user and those who delegated to it) in one statement. p must be
// closed at both ends.
func (s *Service) Activity(ctx context.Context, p reportPeriod) ([]ActivityRow, error) {
	vis, user := tenancy.VisibilityOf(ctx)
	restricted := vis != tenancy.VisibilityAll
	if err := tenancy.WithoutJIT(ctx); err != nil {
		return nil, err
	}
	query, args := activityStatement(ctx, p, restricted, user)
	// Planned for its values, each time (tenancy.CustomPlans): a generic plan, which PostgreSQL may
	// keep after five runs, is built without the window's and the owners' values.
	rows, err := tenancy.Client(ctx).QueryContext(tenancy.CustomPlans(ctx), query, args...)
	if err != nil {
		return nil, fmt.Errorf("activity report: %w", err)
	}
	defer rows.Close()
	out := []ActivityRow{}
	for rows.Next() {
		var r ActivityRow
		if err := rows.Scan(&r.UserID, &r.FirstName, &r.LastName, &r.Email, &r.ContactsCreated,
			&r.ContractsCreated, &r.NewAnnualPremium, &r.TasksCompleted, &r.Appointments, &r.EmailsSent,
			&r.LeadsConverted); err != nil {
			return nil, fmt.Errorf("activity report: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("activity report: %w", err)
	}
	return out, nil
}

// activityStatement is activityQuery for the credential of ctx and its arguments: a restricted
// credential whose lookup read its visible owners names them ($5), so contacts and contracts
// are read from those owners' contacts (activityContractsOwners); otherwise
// activityContracts.
func activityStatement(ctx context.Context, p reportPeriod, restricted bool, user uuid.UUID) (string, []any) {
	args := []any{p.start, p.end, restricted, user}
	contracts, contactOwners := activityContracts, ""
	if owners, ok := tenancy.VisibleOwners(ctx); ok {
		args = append(args, owners)
		contracts, contactOwners = activityContractsOwners, " AND owner_id = ANY($5::uuid[])"
	}
	r := strings.NewReplacer("{contracts}", contracts, "{contactOwners}", contactOwners)
	return r.Replace(activityQuery), args
}
