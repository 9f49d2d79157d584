-- auth_credential as plpgsql: a SQL-language function with SET search_path is planned again on
-- every call (PostgreSQL 15); plpgsql caches the plan per session. Same query, same contract.

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION auth_credential(p_hash bytea) RETURNS TABLE (
  key_id uuid, key_prefix text, key_hash bytea, kind text, env text, scopes jsonb, allowed_domains jsonb,
  company_id uuid, live_company_id uuid, sandbox boolean, features jsonb,
  user_id uuid, user_role text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
BEGIN
  RETURN QUERY
  SELECT k.id, k.prefix::text, k.hash, k.kind::text, k.env::text, k.scopes, k.allowed_domains,
         c.id, coalesce(c.live_company_id, c.id), c.sandbox, c.features,
         u.id, u.role::text
  FROM api_keys k
  JOIN companies c ON c.id = k.company_id AND c.status = 'active'
  LEFT JOIN users u ON u.company_id = k.company_id AND u.id = k.user_id
  WHERE k.hash = p_hash AND k.status = 'active'
    AND (k.user_id IS NULL OR u.status = 'active');
END $$;
-- +goose StatementEnd

-- +goose Down
SELECT 1;
