package search

import (
	"fmt"
	"strings"
)

// The search is one statement, SQL below the ORM on purpose: a UNION ALL over four tables,
// ranked by expressions of pg_trgm and the text search (similarity, ts_rank_cd, ts_headline)
// that ent does not speak. It runs in the request's transaction (tenancy.Client), so the
// row-level security policies decide what each branch may read, as for every other read; the
// statement lifts none, and names a restricted credential's owners for the planner only
// (shape.owned).
//
// Parameters: $1 the query (trimmed), $2 the limit, $3 the query with written-out umlauts read back
// (umlautVariant), $4… one word each (queryWords), then, for a restricted credential, the owners
// it sees (tenancy.VisibleOwners, a uuid[]). Folding happens in SQL (search_fold,
// migration 20261210100100), so the query is folded exactly as the stored text; the statement
// goes out as an unnamed one (tenancy.CustomPlans), so each "LIKE '%' || fold($n) || '%'" is
// planned with its value, a constant pattern the pg_trgm indexes can take trigrams from.

// fq is the folded query.
const fq = `public.search_fold($1)`

// likeWord is the LIKE pattern "contains word n": the word folded, its wildcards escaped.
func likeWord(n int) string {
	return fmt.Sprintf(`'%%' || pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(public.search_fold($%d), '\', '\\'), '%%', '\%%'), '_', '\_') || '%%'`, n)
}

// containsAll is the condition "hay contains every word" (words numbered from $4).
func containsAll(hay string, words int) string {
	conds := make([]string, words)
	for i := range conds {
		conds[i] = hay + " LIKE " + likeWord(4+i)
	}
	return "(" + strings.Join(conds, " AND ") + ")"
}

// contactTitle is how a contact is named in a hit: a business by its company name, a person by
// first and last name; the e-mail address when those are empty.
const contactTitle = `COALESCE(NULLIF(pg_catalog.btrim(CASE WHEN c.type = 'business' THEN c.company_name
  ELSE pg_catalog.concat_ws(' ', c.first_name, c.last_name) END), ''), c.email, '')`

// leadTitle is how a lead is named in a hit: first and last name, else its e-mail or phone.
const leadTitle = `COALESCE(NULLIF(pg_catalog.btrim(pg_catalog.concat_ws(' ', l.first_name, l.last_name)), ''),
  l.email, l.phone, '')`

// hlSep separates the texts a highlight may be cut from in the column hl (the unit separator,
// which no name holds; concat_ws leaves out the NULL ones).
const hlSep = `E'\x1f'`

// shape is what the statement is built for: the number of query words, whether the
// credential is restricted (its owners are the last parameter) and whether each branch is
// bounded (the title functions and @@> are leakproof: their conditions can be index conditions
// under the policies; Service.bounded).
type shape struct {
	words      int
	restricted bool
	bounded    bool
}

// ownersParam is the owners' parameter: after the words.
func (s shape) ownersParam() string { return fmt.Sprintf("$%d::uuid[]", 4+s.words) }

// owned is the condition "the contact is one of the restricted credential's owners'": its
// owner column (contacts, leads) or its contact (contracts, documents: contact.id) for
// owner, "" for a credential that sees all. It only names for the planner what the policies
// (still applied on top) admit: it drives the scan from the owners' rows (index
// tenant_contacts_company_owner) instead of testing every matching row behind the per-row
// policy app_contact_row.
func (s shape) owned(owner, contact string) string {
	switch {
	case !s.restricted:
		return ""
	case owner != "":
		return " AND " + owner + " = ANY(" + s.ownersParam() + ")"
	default:
		return " AND " + contact + " IN (SELECT o.id FROM public.contacts o WHERE o.owner_id = ANY(" + s.ownersParam() + "))"
	}
}

// scoreCap bounds the matches a bounded branch reads and scores (besides its exact matches):
// a common term (15,000 contacts contain "mueller" at a million) is otherwise scored row by row
// (similarity, word_similarity: 0.3-0.5 s) before the best $2 are kept. Twice the largest page
// (limit 50); 200 took 8-10 ms more for Müller (of about 27).
const scoreCap = 100

// candidates is the FROM item of a bounded branch, as alias: at most scoreCap rows of table
// matching match and rest, in no particular order, and for each exact condition (same name,
// e-mail, policy key, filename: the score-1 rows, found by their own index) the first $2 rows
// matching it and rest in order (the branch's order after the score, so the same exact rows
// as an unbounded read; an exact match implies match, which its arm leaves out: the planner
// then takes the exact condition's own index instead of building match's bitmap again). Whole
// rows (no second read of each by its id; UNION drops the doubles, so every column needs an
// equality: a json or point column would need the ids instead). Unbounded, table as alias.
func (s shape) candidates(table, alias, match, rest, order string, exact ...string) string {
	if !s.bounded {
		return table + " " + alias
	}
	arms := []string{"SELECT " + alias + ".* FROM " + table + " " + alias + " WHERE " + match + rest + " LIMIT " + fmt.Sprint(scoreCap)}
	for _, e := range exact {
		arms = append(arms, "SELECT "+alias+".* FROM "+table+" "+alias+" WHERE "+e+rest+" ORDER BY "+order+" LIMIT $2")
	}
	return "((" + strings.Join(arms, ")\n  UNION\n  (") + ")) " + alias
}

// where is the branch's WHERE: cond when unbounded, nothing more when bounded (candidates
// tested it). cond starts with a condition: match (rest starts with AND).
func (s shape) where(cond string) string {
	if s.bounded {
		return ""
	}
	return "WHERE " + cond + "\n"
}

// Every branch yields the same columns: type, id, title, subtitle, contact id, score, the texts
// a highlight may be cut from (hl, in order of preference, separated by hlSep), extra (a contract's type code) and
// text_hit (a document found by its text only: its highlight is a passage of the text).
// Each branch takes its best $2 rows; the outer statement ranks the union and keeps $2.

// Contacts: every word inside the folded search text (names, company, e-mail, street, city,
// profession, tags: contacts.search_text), through tenant_contacts_search_fold. Score 1 for
// the name or e-mail itself, else 0.9 times the better of the name's similarity and the best
// word similarity within the search text. Bounded: the exact ones through
// tenant_contacts_title_fold and contact_company_id_email_key.
func contactsBranch(s shape) string {
	hay := `public.search_fold(c.search_text)`
	match, rest := containsAll(hay, s.words), s.owned("c.owner_id", "")
	return `SELECT 'contact' AS type, c.id, t.title,
  NULLIF(pg_catalog.concat_ws(' · ', c.email, c.groups -> 'address' ->> 'city'), '') AS subtitle,
  c.id AS contact_id,
  CASE WHEN public.search_fold(t.title) = ` + fq + ` OR c.email_key = public.contact_fold($1) THEN 1::numeric
    ELSE pg_catalog.round((0.9 * GREATEST(public.similarity(public.search_fold(t.title), ` + fq + `),
      public.word_similarity(` + fq + `, ` + hay + `)))::numeric, 4) END AS score,
  pg_catalog.concat_ws(` + hlSep + `, t.title, c.email, c.company_name, c.groups -> 'address' ->> 'city',
    c.groups -> 'address' ->> 'street', c.groups -> 'profession' ->> 'profession') AS hl,
  NULL::text AS extra, false AS text_hit
FROM ` + s.candidates("public.contacts", "c", match, rest, contactTitle+", c.id",
		`public.search_contact_title(c.type, c.first_name, c.last_name, c.company_name, c.email) = `+fq,
		`c.email_key = public.contact_fold($1)`) + `
  CROSS JOIN LATERAL (SELECT ` + contactTitle + ` AS title) t
` + s.where(match+rest) + `ORDER BY score DESC, t.title, c.id LIMIT $2`
}

// Leads: every word inside the folded name, e-mail and phone (tenant_leads_search); test leads
// (intake test submissions) are left out as GET /leads leaves them out. Scored as contacts;
// bounded as contacts (tenant_leads_title_fold, lead_company_id_email_key).
func leadsBranch(s shape) string {
	hay := `public.search_lead_text(l.first_name, l.last_name, l.email, l.phone)`
	match, rest := containsAll(hay, s.words), ` AND NOT l.test`+s.owned("l.owner_id", "")
	return `SELECT 'lead' AS type, l.id, t.title,
  NULLIF(pg_catalog.concat_ws(' · ', l.email, l.phone), '') AS subtitle,
  l.contact_id,
  CASE WHEN public.search_fold(t.title) = ` + fq + ` OR l.email_key = public.contact_fold($1) THEN 1::numeric
    ELSE pg_catalog.round((0.9 * GREATEST(public.similarity(public.search_fold(t.title), ` + fq + `),
      public.word_similarity(` + fq + `, ` + hay + `)))::numeric, 4) END AS score,
  pg_catalog.concat_ws(` + hlSep + `, t.title, l.email, l.phone) AS hl,
  NULL::text AS extra, false AS text_hit
FROM ` + s.candidates("public.leads", "l", match, rest, leadTitle+", l.id",
		`public.search_lead_title(l.first_name, l.last_name, l.email, l.phone) = `+fq,
		`l.email_key = public.contact_fold($1)`) + `
  CROSS JOIN LATERAL (SELECT ` + leadTitle + ` AS title) t
` + s.where(match+rest) + `ORDER BY score DESC, t.title, l.id LIMIT $2`
}

// Contracts: the query's policy key (letters and digits, search_policy_key) of at least three
// characters inside the contract's (tenant_contracts_policy_key); fewer than three match
// almost every number and no trigram. Score 1 for the same key, else 0.9 times their
// similarity. The key holds letters and digits only: nothing to escape in the pattern.
// Bounded: the same key through tenant_contracts_policy_key_exact. Only for a query with a digit
// (Service.Search, hasDigit).
func contractsBranch(s shape) string {
	match := `public.search_policy_key(k.policy_number) LIKE '%' || public.search_policy_key($1) || '%'`
	rest := ` AND pg_catalog.length(public.search_policy_key($1)) >= 3` + s.owned("", "k.contact_id")
	return `SELECT 'contract' AS type, k.id, k.policy_number AS title, i.name AS subtitle, k.contact_id,
  CASE WHEN public.search_policy_key(k.policy_number) = public.search_policy_key($1) THEN 1::numeric
    ELSE pg_catalog.round((0.9 * public.similarity(public.search_policy_key(k.policy_number),
      public.search_policy_key($1)))::numeric, 4) END AS score,
  k.policy_number AS hl,
  k.type AS extra, false AS text_hit
FROM ` + s.candidates("public.contracts", "k", match, rest, "k.policy_number, k.id",
		`public.search_policy_key(k.policy_number) = public.search_policy_key($1)`) + `
  JOIN public.insurers i ON i.id = k.insurer_id
` + s.where(match+rest) + `ORDER BY score DESC, k.policy_number, k.id LIMIT $2`
}

// tsQuery is the query as German full text (plainto_tsquery: any input is a valid query, its
// operators are words) over text without accents, as search_document_tsv reads a document: the
// query as typed or ($3, umlautVariant) with written-out umlauts read back as plain vowels.
const tsQuery = `(pg_catalog.plainto_tsquery('pg_catalog.german', public.search_unaccent($1))
  || pg_catalog.plainto_tsquery('pg_catalog.german', public.search_unaccent($3)))`

// Documents: every word inside the folded filename (tenant_documents_filename), or the query's
// words, stemmed, in the text layer (search_document_tsv, tenant_documents_text). Score 1 for
// the filename itself, else 0.9 times the better of the filename's word similarity and the
// text's cover density rank (normalised to 0..1: rank / (rank + 1)). The subtitle names the
// contact the document belongs to (visible with it). Bounded, the text matches through @@>
// (our leakproof @@, migration 20261212100000, the operator of tenant_documents_text's class)
// and the same filename through the trigram index's equality; unbounded through @@.
func documentsBranch(s shape) string {
	hay := `public.search_fold(d.filename)`
	name := containsAll(hay, s.words)
	op := `@@`
	if s.bounded {
		op = `OPERATOR(public.@@>)`
	}
	match, rest := `(`+name+` OR public.search_document_tsv(d.text) `+op+` `+tsQuery+`)`, s.owned("", "d.contact_id")
	return `SELECT 'document' AS type, d.id, d.filename AS title, ` + contactTitle + ` AS subtitle,
  d.contact_id,
  CASE WHEN ` + hay + ` = ` + fq + ` THEN 1::numeric
    ELSE pg_catalog.round((0.9 * GREATEST(public.word_similarity(` + fq + `, ` + hay + `),
      pg_catalog.ts_rank_cd(public.search_document_tsv(d.text), ` + tsQuery + `, 32)))::numeric, 4) END AS score,
  d.filename AS hl,
  NULL::text AS extra, NOT ` + name + ` AS text_hit
FROM ` + s.candidates("public.documents", "d", match, rest, "d.filename, d.id", hay+` = `+fq) + `
  JOIN public.contacts c ON c.id = d.contact_id
` + s.where(match+rest) + `ORDER BY score DESC, d.filename, d.id LIMIT $2`
}

// headline is a passage of a document's text around the matched words, marked « », cut from
// the original text (what a person reads; the German stemmer reads its umlauts as tsQuery's
// plain vowels). The text is read again for the kept rows only.
const headline = `(SELECT pg_catalog.ts_headline('pg_catalog.german', d.text, ` + tsQuery + `,
    'StartSel=«, StopSel=», MaxWords=20, MinWords=8, MaxFragments=1, FragmentDelimiter=" … "')
  FROM public.documents d WHERE d.id = r.id)`

// statement is the search over the branches of types (at least one) for s.
func statement(types []string, s shape) string {
	var branches []string
	for _, t := range types {
		switch t {
		case TypeContact:
			branches = append(branches, contactsBranch(s))
		case TypeLead:
			branches = append(branches, leadsBranch(s))
		case TypeContract:
			branches = append(branches, contractsBranch(s))
		case TypeDocument:
			branches = append(branches, documentsBranch(s))
		}
	}
	return `SELECT r.type, r.id, r.title, r.subtitle, r.contact_id, r.score, r.hl, r.extra,
  CASE WHEN r.text_hit THEN ` + headline + ` END
FROM ((` + strings.Join(branches, ")\nUNION ALL\n(") + `)) r
ORDER BY r.score DESC, r.type, r.title, r.id
LIMIT $2`
}

// sqlBounded: do the title functions, search_document_tsv and the function of @@> exist and are
// they leakproof, i.e. did a superuser run migration 20261212100000? Otherwise the bounded
// branches' conditions would be tested row by row behind the policies.
const sqlBounded = `SELECT COALESCE(pg_catalog.bool_and(p.proleakproof), false) AND pg_catalog.count(*) = 4
FROM pg_catalog.pg_proc p
WHERE p.oid IN (pg_catalog.to_regprocedure('public.search_contact_title(text,text,text,text,text)'),
  pg_catalog.to_regprocedure('public.search_lead_title(text,text,text,text)'),
  pg_catalog.to_regprocedure('public.search_document_tsv(text)'),
  (SELECT o.oprcode FROM pg_catalog.pg_operator o WHERE o.oid = pg_catalog.to_regoperator('public.@@>(tsvector,tsquery)')))`
