-- Hand-written: a contract is as visible as its contact (issue 12): the RESTRICTIVE policies
-- beside company_isolation, as for the contact's other rows (ent: VisibleByContact). contact_id
-- is NOT NULL on contracts, so no NULL branch.

-- +goose Up
SELECT app_restrict_visibility('contracts', 'contact_visibility', 'app_contact_visible(contact_id)');

-- +goose Down
DROP POLICY contact_visibility_delete ON contracts;
DROP POLICY contact_visibility_update ON contracts;
DROP POLICY contact_visibility ON contracts;
