package events

// The statements of this package that go below ent, each with the reason.

// insertEvent has no RETURNING: the writer need not see its event (an agent who gives a
// contact to a colleague records contact.updated it no longer may read), and RETURNING would
// make row-level security check the new row against the SELECT policy. An owner not given is
// the contact's owner at the time, read in the same statement (under the writer's visibility:
// the writer sees the contact of what it changes).
const insertEvent = `INSERT INTO events (id, company_id, type, occurred_at, data, actor, contact_id, owner_id, co_owner_id,
  related_contact_id, related_owner_id, user_scoped)
VALUES ($1, $2, $3, $4, $5, $6, $7, coalesce($8, (SELECT c.owner_id FROM contacts c WHERE c.id = $7)), $9,
  $10, coalesce($11, (SELECT c.owner_id FROM contacts c WHERE c.id = $10)), $12)`
