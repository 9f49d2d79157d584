-- Hand-written: row-level security, the credential lookup and composite tenant keys.
-- Every tenant table gets ENABLE + FORCE ROW LEVEL SECURITY and the company_isolation policy
-- through app_enable_tenant_rls(); later migrations that create tenant tables call it too.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION app_current_company() RETURNS uuid
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT NULLIF(current_setting('app.company_id', true), '')::uuid $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION app_enable_tenant_rls(tbl regclass, col text DEFAULT 'company_id') RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', tbl);
  EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', tbl);
  -- With no company set, app_current_company() is NULL and the policy matches no row.
  EXECUTE format('CREATE POLICY company_isolation ON %s USING (%I = app_current_company()) WITH CHECK (%I = app_current_company())', tbl, col, col);
  EXECUTE format('CREATE POLICY operator_access ON %s TO brokerdesk_operator USING (true) WITH CHECK (true)', tbl);
  EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO brokerdesk_app, brokerdesk_operator', tbl);
END $$;
-- +goose StatementEnd

SELECT app_enable_tenant_rls('companies', 'id');
SELECT app_enable_tenant_rls('users');
SELECT app_enable_tenant_rls('api_keys');
SELECT app_enable_tenant_rls('external_refs');

-- Companies are activated and changed by the operator only.
REVOKE INSERT, UPDATE, DELETE ON companies FROM brokerdesk_app;

-- Composite keys: a key's user must belong to the key's company (single-column foreign keys
-- are checked without row-level security and would cross tenants).
CREATE UNIQUE INDEX tenant_users_company_id_id ON users (company_id, id);
ALTER TABLE api_keys ADD CONSTRAINT tenant_api_keys_user
  FOREIGN KEY (company_id, user_id) REFERENCES users (company_id, id) ON DELETE CASCADE;

-- Credential lookup, before any company is known. brokerdesk_auth owns the function and may read
-- the three tables of every company through its own policy; the app role may only call it.
GRANT USAGE, CREATE ON SCHEMA public TO brokerdesk_auth;
GRANT SELECT ON companies, users, api_keys TO brokerdesk_auth;
CREATE POLICY auth_lookup ON companies FOR SELECT TO brokerdesk_auth USING (true);
CREATE POLICY auth_lookup ON users FOR SELECT TO brokerdesk_auth USING (true);
CREATE POLICY auth_lookup ON api_keys FOR SELECT TO brokerdesk_auth USING (true);

-- +goose StatementBegin
CREATE FUNCTION auth_credential(p_hash bytea) RETURNS TABLE (
  key_id uuid, key_prefix text, key_hash bytea, kind text, env text, scopes jsonb, allowed_domains jsonb,
  company_id uuid, live_company_id uuid, sandbox boolean, features jsonb,
  user_id uuid, user_role text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
  SELECT k.id, k.prefix, k.hash, k.kind, k.env, k.scopes, k.allowed_domains,
         c.id, coalesce(c.live_company_id, c.id), c.sandbox, c.features,
         u.id, u.role
  FROM api_keys k
  JOIN companies c ON c.id = k.company_id AND c.status = 'active'
  LEFT JOIN users u ON u.company_id = k.company_id AND u.id = k.user_id
  WHERE k.hash = p_hash AND k.status = 'active'
    AND (k.user_id IS NULL OR u.status = 'active')
$$;
-- +goose StatementEnd
ALTER FUNCTION auth_credential(bytea) OWNER TO brokerdesk_auth;
REVOKE ALL ON FUNCTION auth_credential(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_credential(bytea) TO brokerdesk_app;

-- +goose Down
DROP FUNCTION auth_credential(bytea);
DROP POLICY auth_lookup ON api_keys;
DROP POLICY auth_lookup ON users;
DROP POLICY auth_lookup ON companies;
ALTER TABLE api_keys DROP CONSTRAINT tenant_api_keys_user;
DROP INDEX tenant_users_company_id_id;
DROP FUNCTION app_enable_tenant_rls(regclass, text);
