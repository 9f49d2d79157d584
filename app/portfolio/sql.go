package portfolio

// The statements of this package that ent does not write, each with the reason: both call
// functions of migrations/ (ent cannot call a function). A transfer and its job are written
// through ent and river in one transaction (jobs.RowTx), not here.

// ensureInsurer adds a VU number the catalog lacks and returns its id (insurer_ensure,
// SECURITY DEFINER: the app role may not write the catalog, and the function never takes a name
// from the file).
const ensureInsurer = `SELECT insurer_ensure($1)`

// analyzeTables refreshes the statistics of the tables a commit grows (portfolio_analyze, at
// most once every 30 seconds whoever calls; ANALYZE needs the table owner's rights).
const analyzeTables = `SELECT portfolio_analyze()`
