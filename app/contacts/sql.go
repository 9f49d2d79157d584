package contacts

// The statements of this package that go below ent, each with the reason. (The advisory lock
// of an external upsert is app/platform/extref's.)

// sqlListScope asks contact_list_scope (migrations 20261126080000, 20261126090100) for the
// visible owners of the request's user and PostgreSQL's estimate of their contacts matching a
// LIKE pattern, in one round trip: a set-returning SQL function, which ent does not model.
const sqlListScope = `SELECT owner_id, estimate FROM contact_list_scope($1, $2)`

// sqlKeysLeakproof asks the catalog whether contact_search_keys and the function of @>>
// (migration 20261127140000) are leakproof (searchkeys.go, keysLeakproof): pg_proc and
// pg_operator are PostgreSQL's own tables, which ent does not model.
const sqlKeysLeakproof = `SELECT count(*) = 2 AND coalesce(bool_and(proleakproof), false) FROM pg_catalog.pg_proc
	WHERE oid IN ('public.contact_search_keys(uuid, text)'::regprocedure,
		(SELECT oprcode FROM pg_catalog.pg_operator WHERE oid = to_regoperator('public.@>>(text[], text[])')))`

// sqlLockCustomFields serialises the custom field definitions of a company ($1) to the end of
// the transaction, so two concurrent creates cannot pass the limit: an advisory lock, which ent
// has no builder for.
const sqlLockCustomFields = `SELECT pg_advisory_xact_lock(hashtextextended('custom_fields:' || $1, 0))`

// The savepoint of one item of POST /contacts/bulk: a failed item is undone alone inside the
// request's transaction. ent has no savepoints.
const ()

// Key rotation (RotateData) runs outside any request, over every company, as the operator role
// (ent's tenant hooks and privacy rules need a pinned company), and re-seals without moving
// version or updated_at (ent's version hook would move them: re-sealing changes no data).
const (
	sqlOperatorRole = `SET LOCAL ROLE brokerdesk_operator`
	// sqlStaleSealed locks a batch ($2) of contacts holding a group sealed with another key than
	// the current one ($1), skipping rows a request holds.
	sqlStaleSealed = `SELECT id, company_id, sensitive FROM contacts
		WHERE EXISTS (SELECT 1 FROM jsonb_each(sensitive) e WHERE e.value->>'kid' IS DISTINCT FROM $1)
		LIMIT $2 FOR UPDATE SKIP LOCKED`
	sqlReseal = `UPDATE contacts SET sensitive = $1 WHERE id = $2`
)
