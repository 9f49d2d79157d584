package contracts

// The statements of this package that ent does not write, each with the reason.

// keyTakenQuery tells whether another contract than $4 holds the key (insurer $1, policy number
// $2, type $3), whoever may see it. Raw SQL because it runs under tenancy.ReadCompanyWide, which
// widens the database's policy only: ent's visibility rules would still filter by the caller.
const keyTakenQuery = `SELECT EXISTS (SELECT 1 FROM contracts
	WHERE insurer_id = $1 AND policy_number = $2 AND type = $3 AND id <> $4)`
