package search

import (
	"fmt"
	"strings"
)

// The search is one statement, SQL below the ORM on purpose: a UNION ALL over four tables,
// ranked by expressions of pg_trgm and the text search (similarity, ts_rank_cd, ts_headline)
// that ent does not speak. It runs in the request's transaction (tenancy.Client), so the
// row-level security policies decide what each branch may read, as for every other read; the
// statement adds no visibility condition of its own and lifts none.
//
// Parameters: $1 the query (trimmed), $2 the limit, $3 the query with written-out umlauts read back
// (umlautVariant), $4… one word each (queryWords). Folding happens in SQL (search_fold,
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

// hlSep separates the texts a highlight may be cut from in the column hl (the unit separator,
// which no name holds; concat_ws leaves out the NULL ones).
const hlSep = `E'\x1f'`

// Every branch yields the same columns: type, id, title, subtitle, contact id, score, the texts
// a highlight may be cut from (hl, in order of preference, separated by hlSep), extra (a contract's type code) and
// text_hit (a document found by its text only: its highlight is a passage of the text).
// Each branch takes its best $2 rows; the outer statement ranks the union and keeps $2.

// Contacts: every word inside the folded search text (names, company, e-mail, street, city,
// profession, tags: contacts.search_text), through tenant_contacts_search_fold. Score 1 for
// the name or e-mail itself, else 0.9 times the better of the name's similarity and the best
// word similarity within the search text.
func contactsBranch(words int) string {
	hay := `public.search_fold(c.search_text)`
	return `SELECT 'contact' AS type, c.id, t.title,
  NULLIF(pg_catalog.concat_ws(' · ', c.email, c.groups -> 'address' ->> 'city'), '') AS subtitle,
  c.id AS contact_id,
  CASE WHEN public.search_fold(t.title) = ` + fq + ` OR c.email_key = public.contact_fold($1) THEN 1::numeric
    ELSE pg_catalog.round((0.9 * GREATEST(public.similarity(public.search_fold(t.title), ` + fq + `),
      public.word_similarity(` + fq + `, ` + hay + `)))::numeric, 4) END AS score,
  pg_catalog.concat_ws(` + hlSep + `, t.title, c.email, c.company_name, c.groups -> 'address' ->> 'city',
    c.groups -> 'address' ->> 'street', c.groups -> 'profession' ->> 'profession') AS hl,
  NULL::text AS extra, false AS text_hit
FROM public.contacts c CROSS JOIN LATERAL (SELECT ` + contactTitle + ` AS title) t
WHERE ` + containsAll(hay, words) + `
ORDER BY score DESC, t.title, c.id LIMIT $2`
}

// Leads: every word inside the folded name, e-mail and phone (tenant_leads_search); test leads
// (intake test submissions) are left out as GET /leads leaves them out. Scored as contacts.
func leadsBranch(words int) string {
	hay := `public.search_lead_text(l.first_name, l.last_name, l.email, l.phone)`
	return `SELECT 'lead' AS type, l.id, t.title,
  NULLIF(pg_catalog.concat_ws(' · ', l.email, l.phone), '') AS subtitle,
  l.contact_id,
  CASE WHEN public.search_fold(t.title) = ` + fq + ` OR l.email_key = public.contact_fold($1) THEN 1::numeric
    ELSE pg_catalog.round((0.9 * GREATEST(public.similarity(public.search_fold(t.title), ` + fq + `),
      public.word_similarity(` + fq + `, ` + hay + `)))::numeric, 4) END AS score,
  pg_catalog.concat_ws(` + hlSep + `, t.title, l.email, l.phone) AS hl,
  NULL::text AS extra, false AS text_hit
FROM public.leads l CROSS JOIN LATERAL (SELECT COALESCE(NULLIF(pg_catalog.btrim(
  pg_catalog.concat_ws(' ', l.first_name, l.last_name)), ''), l.email, l.phone, '') AS title) t
WHERE NOT l.test AND ` + containsAll(hay, words) + `
ORDER BY score DESC, t.title, l.id LIMIT $2`
}

// Contracts: the query's policy key (letters and digits, search_policy_key) of at least three
// characters inside the contract's (tenant_contracts_policy_key); fewer than three match
// almost every number and no trigram. Score 1 for the same key, else 0.9 times their
// similarity. The key holds letters and digits only: nothing to escape in the pattern.
const contractsBranch = `SELECT 'contract' AS type, k.id, k.policy_number AS title, i.name AS subtitle, k.contact_id,
  CASE WHEN public.search_policy_key(k.policy_number) = public.search_policy_key($1) THEN 1::numeric
    ELSE pg_catalog.round((0.9 * public.similarity(public.search_policy_key(k.policy_number),
      public.search_policy_key($1)))::numeric, 4) END AS score,
  k.policy_number AS hl,
  k.type AS extra, false AS text_hit
FROM public.contracts k JOIN public.insurers i ON i.id = k.insurer_id
WHERE pg_catalog.length(public.search_policy_key($1)) >= 3
  AND public.search_policy_key(k.policy_number) LIKE '%' || public.search_policy_key($1) || '%'
ORDER BY score DESC, k.policy_number, k.id LIMIT $2`

// tsQuery is the query as German full text (plainto_tsquery: any input is a valid query, its
// operators are words) over text without accents, as search_document_tsv reads a document: the
// query as typed or ($3, umlautVariant) with written-out umlauts read back as plain vowels.
const tsQuery = `(pg_catalog.plainto_tsquery('pg_catalog.german', public.search_unaccent($1))
  || pg_catalog.plainto_tsquery('pg_catalog.german', public.search_unaccent($3)))`

// Documents: every word inside the folded filename (tenant_documents_filename), or the query's
// words, stemmed, in the text layer (search_document_tsv, tenant_documents_text). Score 1 for
// the filename itself, else 0.9 times the better of the filename's word similarity and the
// text's cover density rank (normalised to 0..1: rank / (rank + 1)). The subtitle names the
// contact the document belongs to (visible with it).
func documentsBranch(words int) string {
	hay := `public.search_fold(d.filename)`
	name := containsAll(hay, words)
	return `SELECT 'document' AS type, d.id, d.filename AS title, ` + contactTitle + ` AS subtitle,
  d.contact_id,
  CASE WHEN ` + hay + ` = ` + fq + ` THEN 1::numeric
    ELSE pg_catalog.round((0.9 * GREATEST(public.word_similarity(` + fq + `, ` + hay + `),
      pg_catalog.ts_rank_cd(public.search_document_tsv(d.text), ` + tsQuery + `, 32)))::numeric, 4) END AS score,
  d.filename AS hl,
  NULL::text AS extra, NOT ` + name + ` AS text_hit
FROM public.documents d JOIN public.contacts c ON c.id = d.contact_id
WHERE ` + name + ` OR public.search_document_tsv(d.text) @@ ` + tsQuery + `
ORDER BY score DESC, d.filename, d.id LIMIT $2`
}

// headline is a passage of a document's text around the matched words, marked « », cut from
// the original text (what a person reads; the German stemmer reads its umlauts as tsQuery's
// plain vowels). The text is read again for the kept rows only.
const headline = `(SELECT pg_catalog.ts_headline('pg_catalog.german', d.text, ` + tsQuery + `,
    'StartSel=«, StopSel=», MaxWords=20, MinWords=8, MaxFragments=1, FragmentDelimiter=" … "')
  FROM public.documents d WHERE d.id = r.id)`

// statement is the search over the branches of types, for words query words.
func statement(types []string, words int) string {
	var branches []string
	for _, t := range types {
		switch t {
		case TypeContact:
			branches = append(branches, contactsBranch(words))
		case TypeLead:
			branches = append(branches, leadsBranch(words))
		case TypeContract:
			branches = append(branches, contractsBranch)
		case TypeDocument:
			branches = append(branches, documentsBranch(words))
		}
	}
	return `SELECT r.type, r.id, r.title, r.subtitle, r.contact_id, r.score, r.hl, r.extra,
  CASE WHEN r.text_hit THEN ` + headline + ` END
FROM ((` + strings.Join(branches, ")\nUNION ALL\n(") + `)) r
ORDER BY r.score DESC, r.type, r.title, r.id
LIMIT $2`
}
