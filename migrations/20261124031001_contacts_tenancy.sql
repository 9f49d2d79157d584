-- Hand-written: RLS for custom field definitions, and the search indexes of GET /contacts.
--
-- q searches search_text (names, company name, e-mail, city, street, profession, tags, lower
-- case) by substring: pg_trgm's GIN index serves ILIKE '%müll%' for any term of 3 or more
-- characters, in any position of any word, which is what a broker types (part of a surname,
-- a street, a town). Full-text search (tsvector) would need whole words or prefixes and a
-- dictionary that stems German names wrongly; it cannot find "üller" in "Müller".

-- +goose Up
CREATE EXTENSION IF NOT EXISTS pg_trgm;
SELECT app_enable_tenant_rls('custom_field_definitions');
CREATE INDEX tenant_contacts_search ON contacts USING gin (search_text gin_trgm_ops);
CREATE INDEX tenant_contacts_tags ON contacts USING gin (tags jsonb_path_ops);
CREATE INDEX tenant_contacts_labels ON contacts USING gin (labels jsonb_path_ops);

-- +goose Down
DROP INDEX tenant_contacts_labels;
DROP INDEX tenant_contacts_tags;
DROP INDEX tenant_contacts_search;
