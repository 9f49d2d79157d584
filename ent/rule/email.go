package rule

import (
	"entgo.io/ent/dialect/sql"

	"github.com/brokerdesk/brokerdesk/ent/privacy"
)

// The e-mail area's visibility (issue 21, docs/decisions/email.md), the same decisions as the
// RESTRICTIVE policies of migrations/20261207100100_email_tenancy.sql:
//   - a mailbox: shared, or its owner is visible;
//   - a link of a message: its contact (or lead) is visible;
//   - a thread: its mailbox is visible, or one of its messages has a visible link;
//   - a message, an attachment: its thread is visible.

// FilterVisibleMailbox narrows mailboxes to shared ones and those whose owner is visible.
func FilterVisibleMailbox() privacy.QueryMutationRule {
	return visibilityRule(func(s *sql.Selector, user string) *sql.Predicate {
		return sql.Or(sql.EQ(s.C("shared"), true), sql.And(sql.NotNull(s.C("owner_id")), visibleOwner(s.C("owner_id"), user)))
	})
}

// FilterVisibleInMailbox narrows rows of a mailbox (column field) to visible mailboxes.
func FilterVisibleInMailbox(field string) privacy.QueryMutationRule {
	return visibilityRule(func(s *sql.Selector, user string) *sql.Predicate {
		return visibleMailbox(s.C(field), user)
	})
}

// FilterVisibleLink narrows links to those whose contact (or, without one, lead) is visible.
func FilterVisibleLink(contact, lead string) privacy.QueryMutationRule {
	return visibilityRule(func(s *sql.Selector, user string) *sql.Predicate {
		return sql.Or(
			sql.And(sql.NotNull(s.C(contact)), visibleContact(s.C(contact), user)),
			sql.And(sql.IsNull(s.C(contact)), sql.NotNull(s.C(lead)), visibleLead(s.C(lead), user)),
		)
	})
}

// FilterVisibleEmailThread narrows rows of a thread to visible threads: field "id" on the thread
// table itself, else the column naming the thread (a message's or attachment's thread_id).
// Both are per-row conditions on the rows the query walks (OFFSET 0 keeps each EXISTS a
// subplan): a form with "IN (SELECT … FROM email_threads/email_links)" was hashed over every
// thread and link of the company for each statement, 150–250 ms at 20,000 threads whatever the
// page needed (docs/perf-notes/2026-12-07-email.md).
func FilterVisibleEmailThread(field string) privacy.QueryMutationRule {
	return visibilityRule(func(s *sql.Selector, user string) *sql.Predicate {
		if field == "id" {
			return visibleThread(s.C("id"), s.C("mailbox_id"), user)
		}
		return sql.P(func(b *sql.Builder) {
			b.WriteString("EXISTS (SELECT 1 FROM email_threads t WHERE t.id = ").WriteString(s.C(field)).WriteString(" AND ")
			b.Join(visibleThread("t.id", "t.mailbox_id", user))
			b.WriteString(" OFFSET 0)")
		})
	})
}

// visibleThread: the thread (columns id and mailbox) is in a visible mailbox, or one of its
// messages is linked to a visible contact or lead.
func visibleThread(id, mailbox, user string) *sql.Predicate {
	return sql.P(func(b *sql.Builder) {
		b.WriteString("(")
		b.Join(visibleMailbox(mailbox, user))
		b.WriteString(" OR EXISTS (SELECT 1 FROM email_links l WHERE l.thread_id = ").WriteString(id).
			WriteString(" AND ((l.contact_id IS NOT NULL AND ")
		b.Join(visibleContact("l.contact_id", user))
		b.WriteString(") OR (l.contact_id IS NULL AND l.lead_id IS NOT NULL AND ")
		b.Join(visibleLead("l.lead_id", user))
		b.WriteString(")) OFFSET 0))")
	})
}

// visibleMailbox: col IN (mailboxes that are shared or whose owner is visible).
func visibleMailbox(col, user string) *sql.Predicate {
	return sql.P(func(b *sql.Builder) {
		b.WriteString(col).WriteString(" IN (SELECT m.id FROM mailboxes m WHERE m.shared OR ")
		writeVisibleOwner(b, "m.owner_id", user)
		b.WriteString(")")
	})
}

// visibleLead: col IN (leads whose owner is visible).
func visibleLead(col, user string) *sql.Predicate {
	return sql.P(func(b *sql.Builder) {
		b.WriteString(col).WriteString(" IN (SELECT x.id FROM leads x WHERE ")
		writeVisibleOwner(b, "x.owner_id", user)
		b.WriteString(")")
	})
}
