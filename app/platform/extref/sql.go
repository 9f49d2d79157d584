package extref

// lockRef takes a transaction-scoped advisory lock on the hash of (company, resource,
// reference): ent has no advisory locks, and there is no row to lock FOR UPDATE before the
// first upsert has created it.
const lockRef = `SELECT pg_advisory_xact_lock($1)`
