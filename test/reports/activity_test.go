package reports

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestReports_Activity: the seven counts per user from fixtures on both sides of the window's
// edges (days in Europe/Berlin), the admin's rows against an agent's (itself only, counted over
// what it sees), a delegate's (itself and the delegator, over what the delegate sees),
// an expired delegation, and another company's users and data.
func TestReports_Activity(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t, "leads", "emails")
	a, b, d := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	co.Delegate(t, b.ID, d.ID, nil)                                   // d sees b's
	co.Delegate(t, b.ID, a.ID, actPtr(time.Now().Add(-24*time.Hour))) // expired: a does not
	in, before, after := berlin(2026, 3, 15, 10, 0, 0), berlin(2026, 2, 28, 23, 59, 59), berlin(2026, 4, 1, 0, 0, 0)
	lastMinute := berlin(2026, 3, 31, 23, 59, 0) // CEST: 21:59Z, in by Berlin's day
	firstMinute := berlin(2026, 3, 1, 0, 5, 0)   // 23:05Z on Feb 28: in by Berlin's day only

	// Contacts: by owner and creation.
	ca := actContact(t, env, co.ID, &a.ID, firstMinute)
	actContact(t, env, co.ID, &a.ID, after)
	cb := actContact(t, env, co.ID, &b.ID, lastMinute)
	actContact(t, env, co.ID, nil, in) // nobody's: in no row

	// Contracts: the contract's owner, else its contact's; annual premiums as written.
	actContract(t, env, co.ID, ca, nil, "10.00", "monthly", "120.00", in)     // a's (contact's owner)
	actContract(t, env, co.ID, ca, &b.ID, "25.00", "quarterly", "100.00", in) // b's on a's contact
	actContract(t, env, co.ID, cb, nil, "1200.00", "yearly", "1200.00", in)   // b's
	actContract(t, env, co.ID, cb, nil, "5000.00", "single", "", in)          // b's, no annual premium
	actContract(t, env, co.ID, ca, nil, "99.99", "yearly", "99.99", before)   // out of the window

	// Tasks: done in the window, by assignee.
	actTask(t, env, co.ID, &ca, &a.ID, &in)
	actTask(t, env, co.ID, &cb, &a.ID, &lastMinute) // a's task about b's contact: a does not see it
	actTask(t, env, co.ID, &ca, &a.ID, &before)
	actTask(t, env, co.ID, &ca, &a.ID, nil) // open
	actTask(t, env, co.ID, &cb, &b.ID, &in)

	// Appointments: start in the window, by owner, else creator.
	actAppointment(t, env, co.ID, &a.ID, nil, in)
	actAppointment(t, env, co.ID, &a.ID, nil, after)
	actAppointment(t, env, co.ID, nil, &b.ID, firstMinute)

	// E-mails: outbound, sent in the window; by the sender, else the personal mailbox's owner.
	personal, shared := actMailbox(t, env, co.ID, &a.ID), actMailbox(t, env, co.ID, nil)
	actEmail(t, env, co.ID, personal, true, nil, in)  // a's (synced from a's Sent folder)
	actEmail(t, env, co.ID, personal, false, nil, in) // inbound: nobody's
	actEmail(t, env, co.ID, shared, true, &b.ID, in)  // b sent it
	actEmail(t, env, co.ID, shared, true, nil, in)    // shared mailbox, no sender: nobody's
	actEmail(t, env, co.ID, personal, true, nil, after)

	// Leads: converted in the window, by owner; test leads left out.
	plLeads(t, env, co.ID,
		plLead{Owner: &a.ID, Stage: "converted", Created: before, Converted: &in},
		plLead{Owner: &a.ID, Stage: "converted", Created: before, Converted: &after},
		plLead{Owner: &a.ID, Stage: "converted", Created: in, Converted: &in, Test: true},
		plLead{Owner: &b.ID, Stage: "converted", Created: in, Converted: &lastMinute},
		plLead{Owner: &b.ID, Stage: "new", Created: in},
	)

	// Another company's user and data: never in co's report.
	other := env.NewCompany(t)
	oc := actContact(t, env, other.ID, &other.Admin.ID, in)
	actContract(t, env, other.ID, oc, nil, "1.00", "monthly", "12.00", in)

	const march = "from=2026-03-01&to=2026-03-31"
	zero := activityRow{NewAnnualPremium: "0.00"}
	rowA := activityRow{UserID: a.ID, ContactsCreated: 1, ContractsCreated: 1, NewAnnualPremium: "120.00",
		TasksCompleted: 2, Appointments: 1, EmailsSent: 1, LeadsConverted: 1}
	rowB := activityRow{UserID: b.ID, ContactsCreated: 1, ContractsCreated: 3, NewAnnualPremium: "1300.00",
		TasksCompleted: 1, Appointments: 1, EmailsSent: 1, LeadsConverted: 1}
	withID := func(r activityRow, id uuid.UUID) activityRow { r.UserID = id; return r }

	cases := []struct {
		name string
		key  string
		want map[uuid.UUID]activityRow
	}{
		{"admin: every user of the company", co.Secret, map[uuid.UUID]activityRow{
			co.Admin.ID: withID(zero, co.Admin.ID), a.ID: rowA, b.ID: rowB, d.ID: withID(zero, d.ID)}},
		{"admin's user-bound key is the same", co.UserKey(t, co.Admin), map[uuid.UUID]activityRow{
			co.Admin.ID: withID(zero, co.Admin.ID), a.ID: rowA, b.ID: rowB, d.ID: withID(zero, d.ID)}},
		// a sees itself only (the delegation from b expired), and not its task about b's contact;
		// its contacts and contracts are read from its visible owners' contacts (catches an
		// expired delegator among the owners named, or a contract credited to b on a's contact
		// lost or moved to a by that shape)
		{"agent: itself, over what it sees", co.UserKey(t, a), map[uuid.UUID]activityRow{
			a.ID: func() activityRow { r := rowA; r.TasksCompleted = 1; return r }()}},
		// d sees b's contacts but not a's: b's row is the admin's less b's contract on a's
		// contact (catches a contract count that lifts the visibility through the join)
		{"delegate: itself and the delegator, over what it sees", co.UserKey(t, d), map[uuid.UUID]activityRow{
			d.ID: withID(zero, d.ID), b.ID: func() activityRow {
				r := rowB
				r.ContractsCreated, r.NewAnnualPremium = 2, "1200.00"
				return r
			}()}},
		{"another company: its own user only", other.Secret, map[uuid.UUID]activityRow{
			other.Admin.ID: {UserID: other.Admin.ID, ContactsCreated: 1, ContractsCreated: 1, NewAnnualPremium: "12.00"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := activityOf(t, env, c.key, march)
			if len(got) != len(c.want) {
				t.Errorf("rows %v, want %v", got, c.want)
			}
			for id, w := range c.want {
				if got[id] != w {
					t.Errorf("user %s: %+v, want %+v", id, got[id], w)
				}
			}
		})
	}

	t.Run("one-day window at the edge", func(t *testing.T) {
		got := activityOf(t, env, co.Secret, "from=2026-03-31&to=2026-03-31")
		w := activityRow{UserID: b.ID, ContactsCreated: 1, NewAnnualPremium: "0.00", LeadsConverted: 1}
		if got[b.ID] != w {
			t.Errorf("b on March 31: %+v, want %+v", got[b.ID], w)
		}
		if r := got[a.ID]; r.TasksCompleted != 1 || r.ContactsCreated != 0 {
			t.Errorf("a on March 31: %+v, want the last-minute task only", r)
		}
	})
}

// TestReports_ActivityErrors: from and to are required, dates, the range; 401, 403; never a 500.
func TestReports_ActivityErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	env.Run(t, []apitest.Case{
		// catches a missing auth on the route
		{Name: "no key is 401", Path: "/reports/activity?from=2026-01-01&to=2026-01-31", Status: 401},
		// catches a missing scope check
		{Name: "without reports:read 403", Key: co.KeyWithScopes(t, "contacts:read", "tasks:read"),
			Path: "/reports/activity?from=2026-01-01&to=2026-01-31", Status: 403, Problem: "insufficient_scope"},
		// catches an open window where the spec requires both dates (a full-table report)
		{Name: "both dates missing, both listed", Key: co.Secret, Path: "/reports/activity", Status: 422,
			Check: apitest.FieldErrorSet("from:required", "to:required")},
		{Name: "to missing", Key: co.Secret, Path: "/reports/activity?from=2026-01-01", Status: 422,
			Check: apitest.FieldErrors("to:required")},
		// catches a parser that takes timestamps or other layouts
		{Name: "bad dates", Key: co.Secret, Path: "/reports/activity?from=01.01.2026&to=2026-1-31", Status: 422,
			Check: apitest.FieldErrorSet("from:invalid_date", "to:invalid_date")},
		// catches an unchecked reversed window
		{Name: "to before from", Key: co.Secret, Path: "/reports/activity?from=2026-02-01&to=2026-01-31", Status: 422,
			Check: apitest.FieldErrors("to:invalid_range")},
		{Name: "one day", Key: co.Secret, Path: "/reports/activity?from=2026-02-01&to=2026-02-01", Status: 200},
	})
}

// actMailbox creates a mailbox through the operator: personal (owner) or shared (nil).
func actMailbox(t *testing.T, env *apitest.Env, co uuid.UUID, owner *uuid.UUID) uuid.UUID {
	t.Helper()
	m, err := env.Ops.CreateMailbox(context.Background(), env.Config.DataKeys, operator.NewMailbox{CompanyID: co,
		Email: fmt.Sprintf("box%d@makler.test", plSeq.Add(1)), IMAPURL: "imap://127.0.0.1:1143", SMTPURL: "smtp://127.0.0.1:1025",
		Username: "box", Password: "geheim", OwnerID: owner, Shared: owner == nil})
	if err != nil {
		t.Fatalf("create mailbox: %v", err)
	}
	return m.ID
}

func actPtr[T any](v T) *T { return &v }
