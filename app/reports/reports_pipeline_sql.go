package reports

// The statements of the pipeline and activity reports. Below ent because each is one
// aggregate (GROUP BY, FILTER, COALESCE over a join) ent's GroupBy cannot write, and a report
// must be one read, not a query per stage or per user. They run in the request's pinned
// transaction (tenancy.Client), so row-level security narrows every table they read to the
// company and to what the credential may see (app_visible_owner on leads and contacts,
// app_contact_visible on contracts, the task, appointment and e-mail policies): an agent's
// report is the admin's over the agent's visible rows, and nothing here may lift that.
//
// Window arguments are timestamptz or NULL (open): $1 the first instant, $2 the first instant
// after the window.

// pipelineStagesQuery counts the window's leads now in each stage of the company, every stage
// listed (LEFT JOIN: an empty stage is 0), in board order as GET /lead-stages lists them.
// Test leads are left out, as GET /leads leaves them out by default.
const pipelineStagesQuery = `SELECT s.key, s.name, count(l.id)
FROM lead_stages s
LEFT JOIN leads l ON l.stage_id = s.id AND NOT l.test
	AND ($1::timestamptz IS NULL OR l.created_at >= $1)
	AND ($2::timestamptz IS NULL OR l.created_at < $2)
GROUP BY s.id, s.key, s.name, s.position, s.created_at
ORDER BY s.position, s.created_at, s.id`

// pipelineSourcesQuery counts the window's leads by source (NULL: none given).
const pipelineSourcesQuery = `SELECT source, count(*)
FROM leads
WHERE NOT test
	AND ($1::timestamptz IS NULL OR created_at >= $1)
	AND ($2::timestamptz IS NULL OR created_at < $2)
GROUP BY source`

// pipelineSummaryQuery: the window's leads, those of them converted (by now), the conversion
// rate (converted per lead, 4 fraction digits, 0 without leads) and the mean days from
// creation to conversion of the converted ones (2 fraction digits, NULL without any).
// trim_scale drops trailing zeros (0.5, not 0.5000): the values are JSON numbers.
const pipelineSummaryQuery = `SELECT count(*),
	count(*) FILTER (WHERE converted),
	trim_scale(COALESCE(round(count(*) FILTER (WHERE converted)::numeric / NULLIF(count(*), 0), 4), 0))::text,
	trim_scale(round((avg(extract(epoch FROM converted_at - created_at))
		FILTER (WHERE converted AND converted_at IS NOT NULL) / 86400)::numeric, 2))::text
FROM leads
WHERE NOT test
	AND ($1::timestamptz IS NULL OR created_at >= $1)
	AND ($2::timestamptz IS NULL OR created_at < $2)`

// activityQuery is one row per user the report shows ($3 true: only $4 and the users who
// delegated to $4 with a delegation valid now, the owners an agent sees; false: every user of
// the company), with the user's counts in the window, each a GROUP BY over one table joined by
// user (no query per user):
//   - contactsCreated: contacts created, by the contact's owner (contacts record no creator);
//   - contractsCreated, newAnnualPremium: contracts created and the sum of their annual_premium
//     (premium × payments a year, written with every contract: contracts.AnnualPremium; NULL,
//     as for single premiums, adds nothing), by the contract's owner, else its contact's;
//   - tasksCompleted: tasks done with completed_at in the window, by assignee;
//   - appointments: appointments starting in the window, by owner, else creator (a series
//     counts once, at its first start: occurrences are not expanded);
//   - emailsSent: outbound e-mails sent in the window, by the user who sent them through the
//     API, else the owner of the personal mailbox whose Sent folder they were synced from;
//   - leadsConverted: leads (test ones left out) converted in the window, by owner.
//
// {contracts} and {contactOwners} are activityStatement's: how the contracts and contacts are
// read for the credential.
const activityQuery = `WITH shown AS (
	SELECT u.id, u.first_name, u.last_name, u.email FROM users u
	WHERE NOT $3::boolean OR u.id = ANY(ARRAY(SELECT $4::uuid UNION ALL SELECT d.delegator_id FROM delegations d
		WHERE d.delegate_id = $4::uuid AND (d.valid_until IS NULL OR d.valid_until > now())))
), contacts_n AS (
	SELECT owner_id AS user_id, count(*) AS n FROM contacts
	WHERE created_at >= $1 AND created_at < $2 AND owner_id IS NOT NULL{contactOwners} GROUP BY owner_id
), contracts_n AS (
	{contracts}
), tasks_n AS (
	SELECT assignee_id AS user_id, count(*) AS n FROM tasks
	WHERE status = 'done' AND completed_at >= $1 AND completed_at < $2 AND assignee_id IS NOT NULL GROUP BY 1
), appointments_n AS (
	SELECT COALESCE(owner_id, creator_id) AS user_id, count(*) AS n FROM appointments
	WHERE start_at >= $1 AND start_at < $2 GROUP BY 1
), emails_n AS (
	SELECT COALESCE(e.creator_id, m.owner_id) AS user_id, count(*) AS n
	FROM emails e LEFT JOIN mailboxes m ON m.id = e.mailbox_id AND NOT m.shared
	WHERE e.direction = 'outbound' AND e.sent_at >= $1 AND e.sent_at < $2 GROUP BY 1
), leads_n AS (
	SELECT owner_id AS user_id, count(*) AS n FROM leads
	WHERE converted AND NOT test AND converted_at >= $1 AND converted_at < $2 AND owner_id IS NOT NULL GROUP BY 1
)
SELECT s.id, s.first_name, s.last_name, s.email,
	COALESCE(cn.n, 0), COALESCE(kn.n, 0), COALESCE(kn.premium, 0)::numeric(16,2), COALESCE(tn.n, 0),
	COALESCE(an.n, 0), COALESCE(en.n, 0), COALESCE(ln.n, 0)
FROM shown s
LEFT JOIN contacts_n cn ON cn.user_id = s.id
LEFT JOIN contracts_n kn ON kn.user_id = s.id
LEFT JOIN tasks_n tn ON tn.user_id = s.id
LEFT JOIN appointments_n an ON an.user_id = s.id
LEFT JOIN emails_n en ON en.user_id = s.id
LEFT JOIN leads_n ln ON ln.user_id = s.id
ORDER BY s.last_name, s.first_name, s.id`

// activityContracts is contracts_n for a credential that sees all: the window's contracts by
// created_at, each credited to its owner, else its contact's; the contact is read only for a
// contract without owner (a scalar sub-select in the COALESCE is evaluated only then), not
// joined for every contract (the join hashed the company's million contacts: 2.5 s of 4).
const activityContracts = `SELECT COALESCE(ct.owner_id, (SELECT c.owner_id FROM contacts c WHERE c.company_id = ct.company_id AND c.id = ct.contact_id)) AS user_id,
		count(*) AS n, sum(ct.annual_premium) AS premium
	FROM contracts ct
	WHERE ct.created_at >= $1 AND ct.created_at < $2 GROUP BY 1`

// activityContractsOwners is contracts_n for a restricted credential whose visible owners are
// $5: from those owners' contacts (index tenant_contacts_company_owner) to their contracts, so
// the contracts' per-row policy probes only these instead of every contract of the window;
// the policies still apply on top.
const activityContractsOwners = `SELECT COALESCE(ct.owner_id, c.owner_id) AS user_id, count(*) AS n, sum(ct.annual_premium) AS premium
	FROM contacts c JOIN contracts ct ON ct.company_id = c.company_id AND ct.contact_id = c.id
	WHERE c.owner_id = ANY($5::uuid[]) AND ct.created_at >= $1 AND ct.created_at < $2 GROUP BY 1`
