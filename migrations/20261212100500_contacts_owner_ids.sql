-- Hand-written (issue 24, "Numbers"): tenant_contacts_company_owner carries the contact ids, so
-- "the contacts of these owners" is an index-only scan (docs/decisions/commissions.md "Reports
-- at scale").
--
-- Every report of a restricted credential starts from its visible owners' contacts
-- (tenancy.VisibleOwners: the commission reports, the liability report, the portfolio and
-- activity reports, the search) and reads only their ids, then the rows that hang off them.
-- Through (company_id, owner_id) each contact was a heap fetch: agent A's 19,021 contacts of
-- the benchmark's million lie all over the table, ~17,000 heap blocks, 80-230 ms of the agent's
-- commission report by month. The visibility policy on contacts reads owner_id and id only, so
-- with id in the index both the condition and the policy are answered from it.
--
-- Replaced, not added: the same key serves every query the old index served (the contacts
-- list of an agent, the policies' owner filter), so a contact's write still updates one btree
-- for its owner. It is larger: a btree with INCLUDE columns is not deduplicated, and the old
-- index stored each owner's many contacts as posting lists (6.9 MB at a million contacts, now
-- 65 MB, one entry per contact, as contacts_pkey has).

-- +goose Up
DROP INDEX tenant_contacts_company_owner;
CREATE INDEX tenant_contacts_company_owner ON contacts (company_id, owner_id) INCLUDE (id);

-- +goose Down
DROP INDEX tenant_contacts_company_owner;
CREATE INDEX tenant_contacts_company_owner ON contacts (company_id, owner_id);
