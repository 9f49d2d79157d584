package intake

// The statements of this package that go below ent, each with the reason.

// lockIdentity takes a transaction-scoped advisory lock on one identity key (lockIdentities):
// two submissions of the same person must not both find no open lead and create two. ent has
// no advisory locks, and no row exists yet to lock with SELECT … FOR UPDATE.
const lockIdentity = "SELECT pg_advisory_xact_lock($1)"
