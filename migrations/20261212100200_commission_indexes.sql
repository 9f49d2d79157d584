-- Hand-written (issue 24, "Numbers"): covering indexes of the commission reports at 2,000,000
-- entries in one company (docs/decisions/commissions.md "Reports at scale").
--
-- GET /reports/commissions reads a window of booking dates (a year: ~285,000 entries of the
-- benchmark's 2,000,000). Through commissionentry_company_id_booked_on_id every entry of the
-- window was a heap fetch, and the entries of a year lie all over the table (statements of
-- every insurer, parsed as they arrive): 56,675 heap blocks, 630 of the admin's 720 ms.
-- tenant_commission_entries_report_booked holds every column the report and the visibility
-- policy read (contact_id), so the window is an index-only scan (120 ms).
--
-- A restricted credential's entries are read from its visible owners' contacts
-- (app/commissions, commissionEntriesOwnersSQL): tenant_commission_entries_report_contact
-- answers "the entries of this contact in the window" and "the unmatched entries in the window"
-- (contact_id IS NULL) by its index condition, index-only, instead of every entry of the
-- contact (or every unmatched entry) fetched and filtered by date. The cancellation-liability
-- report reads both the same way (booked_on bounded by the longest period).
--
-- Each is ~210 MB at 2,000,000 entries; a statement's parse writes its entries into both.

-- +goose Up
CREATE INDEX tenant_commission_entries_report_booked ON commission_entries (company_id, booked_on)
  INCLUDE (contact_id, contract_id, insurer_id, type, amount);
CREATE INDEX tenant_commission_entries_report_contact ON commission_entries (company_id, contact_id, booked_on)
  INCLUDE (contract_id, insurer_id, type, amount);

-- +goose Down
DROP INDEX tenant_commission_entries_report_contact;
DROP INDEX tenant_commission_entries_report_booked;
