-- Hand-written: a relationship's system entry no longer stores the other contact's name
-- (issue 20 item 4). "Beziehung angelegt: <name> (<role>)" in one contact's timeline showed a
-- colleague's customer's name to everyone who may read that timeline. Entries now store the
-- other contact's id (related_contact_id) and the placeholder {contact}; the API renders the
-- name for a reader who may see that contact, its id for anyone else (contacts.renderRelated).
--
-- Entries written before are rewritten the same way where the other contact can be named with
-- certainty: a relationship of the contact that still exists in that role with a contact of
-- that name, else the one contact of the company with that name. The rest lose the name
-- ("ein Kontakt"): a name that may be a colleague's customer's cannot stay readable.

-- +goose Up
-- The operator role reads and writes every company's rows (the owner is subject to RLS). The
-- other contact: a relationship of the contact that still exists, in that role, with a contact
-- of that name (by_rel); else the one other contact of the company with that name (by_name);
-- else none, and the entry loses the name.
SET LOCAL ROLE brokerdesk_operator;
WITH e AS (
  SELECT a.id, a.company_id, a.contact_id, m[1] AS what, m[2] AS name, m[3] AS role
  FROM contact_activities a,
    LATERAL regexp_match(a.content, '^(Beziehung angelegt|Beziehung entfernt): (.*) \(([a-z_]+)\)$') m
  WHERE a.kind = 'system' AND a.event IN ('relationship.created', 'relationship.deleted')
    AND a.related_contact_id IS NULL AND m IS NOT NULL),
named AS (
  SELECT e.*, coalesce(
    (SELECT r.related_contact_id FROM contact_relationships r JOIN contacts c
        ON c.company_id = r.company_id AND c.id = r.related_contact_id
      WHERE r.company_id = e.company_id AND r.contact_id = e.contact_id AND r.role::text = e.role
        AND CASE WHEN c.type = 'business' AND c.company_name <> '' THEN c.company_name
        ELSE btrim(c.first_name || ' ' || c.last_name) END = e.name
      ORDER BY r.created_at LIMIT 1),
    (SELECT min(c.id::text)::uuid FROM contacts c
      WHERE c.company_id = e.company_id AND c.id <> e.contact_id
        AND CASE WHEN c.type = 'business' AND c.company_name <> '' THEN c.company_name
        ELSE btrim(c.first_name || ' ' || c.last_name) END = e.name
      HAVING count(*) = 1)) AS related
  FROM e)
UPDATE contact_activities a SET related_contact_id = n.related,
  content = n.what || ': ' || CASE WHEN n.related IS NULL THEN 'ein Kontakt' ELSE '{contact}' END || ' (' || n.role || ')'
FROM named n
WHERE a.id = n.id;
RESET ROLE;

-- +goose Down
-- The code before renders nothing: put the names back where the contact still exists.
SET LOCAL ROLE brokerdesk_operator;
UPDATE contact_activities a SET content = replace(a.content, '{contact}', coalesce(
    (SELECT CASE WHEN c.type = 'business' AND c.company_name <> '' THEN c.company_name
       ELSE btrim(c.first_name || ' ' || c.last_name) END
     FROM contacts c WHERE c.company_id = a.company_id AND c.id = a.related_contact_id),
    'Kontakt ' || a.related_contact_id::text))
WHERE a.related_contact_id IS NOT NULL;
RESET ROLE;
