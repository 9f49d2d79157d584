package rule

import (
	"context"

	"entgo.io/ent/dialect/sql"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/intercept"
	"github.com/brokerdesk/brokerdesk/ent/privacy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// The visibility rules (issue 8) narrow user-scoped rows to what the credential of ctx may see,
// in SQL, the same decision as the RESTRICTIVE row-level security policies
// (migrations/20261124030000_visibility.sql: app_visible_owner, app_contact_visible), so a bug
// in either layer does not leak. Company-level credentials and background work see all: the
// rules add nothing for them (tenancy.VisibilityOf).

// FilterVisibleOwner narrows queries, updates and deletes to rows whose owner column field is
// visible: owned by the acting user, or by a user who delegated to it (valid_until unset or in
// the future). A NULL owner is visible to "all" only.
func FilterVisibleOwner(field string) privacy.QueryMutationRule {
	return visibilityRule(func(s *sql.Selector, user string) *sql.Predicate {
		return visibleOwner(s.C(field), user)
	})
}

// FilterVisibleContact narrows queries, updates and deletes to rows whose contact (column
// field) is visible; a NULL contact does not restrict the row.
func FilterVisibleContact(field string) privacy.QueryMutationRule {
	return visibilityRule(func(s *sql.Selector, user string) *sql.Predicate {
		return sql.Or(sql.IsNull(s.C(field)), visibleContact(s.C(field), user))
	}, portalContact(field))
}

// FilterVisibleOwnerOrPortalSelf is FilterVisibleOwner for the contacts table: a customer's
// portal session sees the one contact it is pinned to (its id), and nothing by owner.
func FilterVisibleOwnerOrPortalSelf(field string) privacy.QueryMutationRule {
	return visibilityRule(func(s *sql.Selector, user string) *sql.Predicate {
		return visibleOwner(s.C(field), user)
	}, portalContact("id"))
}

// portalContact: the column names the portal session's contact (NULL never does).
func portalContact(col string) func(s *sql.Selector, contact string) *sql.Predicate {
	return func(s *sql.Selector, contact string) *sql.Predicate { return sql.EQ(s.C(col), contact) }
}

// FilterVisibleEvent narrows the event feed to events whose resource the credential saw at the
// time (issue 20 item 3: an event is no wider than its resource): an event that concerns
// nothing user-scoped (user_scoped false) is visible; otherwise its contact (contact_id, while
// it exists) or one of the users who saw the resource then (owner_id, co_owner_id) must be
// visible, and, for a resource that needs a second contact (related_contact_id: a
// relationship), that contact or its owner then (related_owner_id) too. app/events.About
// records these from the resource's own rule; the policy event_visibility says the same
// (migrations/20261127100100_event_visibility.sql).
func FilterVisibleEvent() privacy.QueryMutationRule {
	return visibilityRule(func(s *sql.Selector, user string) *sql.Predicate {
		return sql.Or(
			sql.EQ(s.C("user_scoped"), false),
			sql.And(
				sql.Or(
					sql.And(sql.NotNull(s.C("contact_id")), visibleContact(s.C("contact_id"), user)),
					anyOwnerVisible(s, user, "owner_id", "co_owner_id"),
				),
				sql.Or(
					sql.IsNull(s.C("related_contact_id")),
					visibleContact(s.C("related_contact_id"), user),
					anyOwnerVisible(s, user, "related_owner_id"),
				),
			),
		)
	})
}

// anyOwnerVisible: one of the owner columns names a visible user (a NULL one names none).
func anyOwnerVisible(s *sql.Selector, user string, cols ...string) *sql.Predicate {
	own := make([]*sql.Predicate, len(cols))
	for i, c := range cols {
		own[i] = sql.And(sql.NotNull(s.C(c)), visibleOwner(s.C(c), user))
	}
	return sql.Or(own...)
}

// visibleOwner: col is user or a delegator of user with a valid delegation. Written as
// col = ANY(ARRAY(...)): the array is an InitPlan computed once per statement, and the
// condition can use an index on the owner (a bitmap AND with the trigram index of q, for one),
// which "col = user OR col IN (...)" could not.
func visibleOwner(col, user string) *sql.Predicate {
	return sql.P(func(b *sql.Builder) { writeVisibleOwner(b, col, user) })
}

func writeVisibleOwner(b *sql.Builder, col, user string) {
	b.WriteString(col).WriteString(" = ANY(ARRAY(SELECT ").Arg(user).
		WriteString("::uuid UNION ALL SELECT d.delegator_id FROM delegations d WHERE d.delegate_id = ").
		Arg(user).WriteString("::uuid AND (d.valid_until IS NULL OR d.valid_until > now())))")
}

// visibleContact: col IN (contacts whose owner is visible).
func visibleContact(col, user string) *sql.Predicate {
	return sql.P(func(b *sql.Builder) {
		b.WriteString(col).WriteString(" IN (SELECT c.id FROM contacts c WHERE ")
		writeVisibleOwner(b, "c.owner_id", user)
		b.WriteString(")")
	})
}

type wherer interface{ WhereP(...func(*sql.Selector)) }

// visibilityRule narrows by pred for a restricted credential. A customer's portal session
// (tenancy.WithPortal) is narrowed by portal, given the contact it is pinned to; a rule without
// one shows a portal session nothing (users' rows, leads, events, e-mail).
func visibilityRule(pred func(s *sql.Selector, user string) *sql.Predicate,
	portal ...func(s *sql.Selector, contact string) *sql.Predicate) privacy.QueryMutationRule {
	return selectorRule(func(ctx context.Context) (func(*sql.Selector), bool) {
		if contact, ok := tenancy.PortalContact(ctx); ok {
			c := contact.String()
			if len(portal) == 0 {
				return func(s *sql.Selector) { s.Where(sql.False()) }, true
			}
			return func(s *sql.Selector) { s.Where(portal[0](s, c)) }, true
		}
		vis, user := tenancy.VisibilityOf(ctx)
		if vis == tenancy.VisibilityAll {
			return nil, false
		}
		u := user.String()
		return func(s *sql.Selector) { s.Where(pred(s, u)) }, true
	})
}

// selectorRule narrows queries, updates and deletes by the condition where gives for ctx (none
// when it answers false); creates are not narrowed.
func selectorRule(where func(ctx context.Context) (func(*sql.Selector), bool)) privacy.QueryMutationRule {
	return ruleFuncs{
		query: func(ctx context.Context, q ent.Query) error {
			p, ok := where(ctx)
			if !ok {
				return privacy.Skip
			}
			iq, err := intercept.NewQuery(q)
			if err != nil {
				return privacy.Denyf("visibility: %v", err)
			}
			iq.WhereP(p)
			return privacy.Skip
		},
		mutation: func(ctx context.Context, m ent.Mutation) error {
			p, ok := where(ctx)
			if !ok || m.Op().Is(ent.OpCreate) {
				return privacy.Skip // a new row has no visibility to check before it exists
			}
			w, ok := m.(wherer)
			if !ok {
				return privacy.Denyf("visibility: unexpected mutation %T", m)
			}
			w.WhereP(p)
			return privacy.Skip
		},
	}
}

type ruleFuncs struct {
	query    func(context.Context, ent.Query) error
	mutation func(context.Context, ent.Mutation) error
}

func (r ruleFuncs) EvalQuery(ctx context.Context, q ent.Query) error { return r.query(ctx, q) }

func (r ruleFuncs) EvalMutation(ctx context.Context, m ent.Mutation) error {
	return r.mutation(ctx, m)
}

// FilterVisibleContactElseOwners narrows rows that may belong to a contact (tasks,
// appointments): a row with a contact (column contact) is visible when the contact is; a row
// without one when one of the owner columns (assignee, owner, creator) names a visible user.
// An assignee does not see a task about a contact it may not see (docs/decisions/work.md
// "Visibility"); their events follow the same rule (events.AboutContactElseOwners,
// FilterVisibleEvent). The policies task_visibility and appointment_visibility say the same
// (migrations/20261124050100_tasks_appointments_tenancy.sql).
func FilterVisibleContactElseOwners(contact string, owners ...string) privacy.QueryMutationRule {
	return visibilityRule(func(s *sql.Selector, user string) *sql.Predicate {
		return sql.Or(
			sql.And(sql.NotNull(s.C(contact)), visibleContact(s.C(contact), user)),
			sql.And(sql.IsNull(s.C(contact)), anyOwnerVisible(s, user, owners...)),
		)
	}, portalContact(contact))
}
