package commissions

// The statements of the parse worker that ent does not write, each with the reason. They run
// in the worker's transaction, pinned to the company with every contact visible.

// matchKeysQuery lists the (insurer, policy key) pairs of a statement's unmatched entries:
// the matcher looks up only those among the insurer's contracts. DISTINCT over possibly
// 50,000 entries is the database's work, not a round trip per entry.
const matchKeysQuery = `SELECT DISTINCT insurer_id, policy_key FROM commission_entries
	WHERE statement_id = $1 AND contract_id IS NULL AND insurer_id IS NOT NULL AND policy_key <> ''`

// insurerContractsQuery reads the contracts of one insurer, whose keys the matcher computes
// with commission.PolicyKey (one rule, in Go; no stored key column).
const insurerContractsQuery = `SELECT id, contact_id, policy_number FROM contracts WHERE insurer_id = $1`

// matchUpdate links a statement's unmatched entries of one insurer to the contracts found for
// their keys, all in one statement: ent's update cannot join an array of pairs. It bumps the
// version and updated_at as ent's hooks would.
const matchUpdate = `UPDATE commission_entries e
	SET contract_id = m.id, contact_id = m.contact, matched_by = 'auto', version = e.version + 1, updated_at = $5
	FROM unnest($3::text[], $4::uuid[], $6::uuid[]) AS m(key, id, contact)
	WHERE e.statement_id = $1 AND e.insurer_id = $2 AND e.contract_id IS NULL AND e.policy_key = m.key`

// statementTotals counts and sums a statement's entries in SQL (NUMERIC, exact; never a float
// in Go), with the first and last booking date for a file that names no period.
const statementTotals = `SELECT count(*), count(contract_id), COALESCE(sum(amount), 0)::text, min(booked_on), max(booked_on)
	FROM commission_entries WHERE statement_id = $1`

// entryInsurers lists the distinct insurers of a statement's entries (at most two are read:
// the statement takes the insurer only when there is exactly one).
const entryInsurers = `SELECT DISTINCT insurer_id FROM commission_entries
	WHERE statement_id = $1 AND insurer_id IS NOT NULL LIMIT 2`
