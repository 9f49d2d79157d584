-- Hand-written: the visibility policies decide once per statement, not once per row (issue 8,
-- "Speed"). The policies of 20261124030000_visibility.sql called the plpgsql functions
-- app_visible_owner / app_contact_visible for every row: each call a function frame with its
-- own search path (pinned, pg_temp last), and for a contact a lookup with a nested policy call per contact row
-- (~0.3 ms per row for an agent; 24 ms against 3.5 ms for an admin's timeline page).
--
-- Now a policy says the same with two sub-selects the planner runs once per statement
-- (InitPlans): app_visible_all() (the credential sees its whole company) and
-- app_visible_owner_ids() (the acting user and the users who delegated to it, validly); both
-- plpgsql, whose plans each connection caches (a SQL function would be planned anew in
-- every statement, ~0.3 ms). Per
-- row are left an array comparison for an owner, and for a contact a primary-key lookup of the
-- contact row under its own policy (app_contact_row, inlined into a scalar sub-select). For
-- visibility 'all' the OR stops at the first InitPlan: no per-row work at all.
--
-- app_restrict_visibility keeps its interface: an expression written with
-- app_contact_visible(col) or app_visible_owner(col) is expanded into that form
-- (app_visibility_expr), so later migrations keep writing the readable call. The functions
-- stay, rewritten in SQL, for any other caller; they mean the same as the expansion.

-- +goose Up
-- app_visible_all: the pinned credential sees every row of its company: visibility 'all', or
-- company-level work with neither setting given (operator, background jobs).
-- +goose StatementBegin
CREATE FUNCTION app_visible_all() RETURNS boolean
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  vis text := coalesce(current_setting('app.visibility', true), '');
  usr text := coalesce(current_setting('app.user_id', true), '');
BEGIN
  RETURN vis = 'all' OR (vis = '' AND usr = '');
END $$;
-- +goose StatementEnd

-- app_visible_owner_ids: the owners whose rows an own_and_delegated credential sees: the
-- acting user and every user with a delegation to it that has not expired (delegations are
-- read under their own row-level security: the pinned company's only). Empty without a user.
-- +goose StatementBegin
CREATE FUNCTION app_visible_owner_ids() RETURNS uuid[]
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  usr text := coalesce(current_setting('app.user_id', true), '');
BEGIN
  IF usr = '' THEN
    RETURN '{}';
  END IF;
  RETURN array_prepend(usr::uuid, ARRAY(SELECT d.delegator_id FROM public.delegations d
    WHERE d.delegate_id = usr::uuid AND (d.valid_until IS NULL OR d.valid_until > now())));
END $$;
-- +goose StatementEnd

-- The same decisions as before, for callers outside the policies (one call per row).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION app_visible_owner(owner uuid) RETURNS boolean
LANGUAGE sql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$ SELECT public.app_visible_all() OR coalesce(owner = ANY (public.app_visible_owner_ids()), false) $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION app_contact_visible(contact uuid) RETURNS boolean
LANGUAGE sql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$ SELECT public.app_visible_all() OR EXISTS (SELECT 1 FROM public.contacts c WHERE c.id = contact) $$;
-- +goose StatementEnd
GRANT EXECUTE ON FUNCTION app_visible_all(), app_visible_owner_ids() TO brokerdesk_app, brokerdesk_operator;

-- app_contact_row: one row (true) when the contact is visible (under the contacts policy),
-- none otherwise. A set-returning SQL function without SET, STRICT or SECURITY DEFINER, so the
-- planner inlines it (the contacts policy applies to the inlined query): a policy calling it
-- runs a primary-key probe, yet depends on the function, not on the contacts table (a policy
-- naming contacts would make schema tools that drop tables by name fail). Every name and the
-- operator are schema-qualified, as it runs with the caller's search path.
-- +goose StatementBegin
CREATE FUNCTION app_contact_row(contact uuid) RETURNS SETOF boolean
LANGUAGE sql STABLE PARALLEL RESTRICTED
AS $$ SELECT true FROM public.contacts c WHERE c.id OPERATOR(pg_catalog.=) contact $$;
-- +goose StatementEnd
GRANT EXECUTE ON FUNCTION app_contact_row(uuid) TO brokerdesk_app, brokerdesk_operator;

-- app_visibility_expr: the policy expression expr of table tbl with every
-- app_visible_owner(col) and app_contact_visible(col) (col a plain column of tbl) expanded into
-- the per-statement form. A contact is visible when app_contact_row finds it; a scalar
-- sub-select on purpose: the planner cannot turn it into a hash of every visible contact,
-- which it may do with an EXISTS or IN. NULL (no visible row) admits nothing.
-- +goose StatementBegin
CREATE FUNCTION app_visibility_expr(tbl regclass, expr text) RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  t text := tbl::text;
BEGIN
  expr := regexp_replace(expr, 'app_contact_visible\(\s*([a-z_][a-z0-9_]*)\s*\)',
    '((SELECT public.app_visible_all()) OR (SELECT v FROM public.app_contact_row(' || t || '.\1) v))', 'g');
  expr := regexp_replace(expr, 'app_visible_owner\(\s*([a-z_][a-z0-9_]*)\s*\)',
    '((SELECT public.app_visible_all()) OR ' || t || '.\1 = ANY ((SELECT public.app_visible_owner_ids())::uuid[]))', 'g');
  RETURN expr;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION app_restrict_visibility(tbl regclass, name text, expr text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
BEGIN
  expr := app_visibility_expr(tbl, expr);
  EXECUTE format('CREATE POLICY %I ON %s AS RESTRICTIVE FOR SELECT USING (%s)', name, tbl, expr);
  EXECUTE format('CREATE POLICY %I ON %s AS RESTRICTIVE FOR UPDATE USING (%s) WITH CHECK (true)', name || '_update', tbl, expr);
  EXECUTE format('CREATE POLICY %I ON %s AS RESTRICTIVE FOR DELETE USING (%s)', name || '_delete', tbl, expr);
END $$;
-- +goose StatementEnd

-- The policies written so far: the same expressions, expanded.
-- +goose StatementBegin
DO $$
DECLARE
  p record;
BEGIN
  FOR p IN SELECT pol.polname, pol.polrelid::regclass AS tbl, pg_get_expr(pol.polqual, pol.polrelid) AS qual
    FROM pg_policy pol
    WHERE pg_get_expr(pol.polqual, pol.polrelid) ~ 'app_(contact_visible|visible_owner)\('
  LOOP
    EXECUTE format('ALTER POLICY %I ON %s USING (%s)', p.polname, p.tbl, app_visibility_expr(p.tbl, p.qual));
  END LOOP;
END $$;
-- +goose StatementEnd

-- +goose Down
SELECT 1;
