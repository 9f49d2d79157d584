-- Hand-written (issue 20 §5 meets §3): an event about a webhook endpoint (webhook_endpoint.*,
-- today only webhook_endpoint.disabled, whose data is the endpoint with its URL) is exactly as
-- visible as the endpoint (docs/decisions/webhooks-and-events.md, "Webhook endpoints belong to
-- their credential"). Such events are not user-scoped; owner_id holds the user the endpoint's
-- credential acted for (its credential_user_id at the time), and the RESTRICTIVE policy
-- event_endpoint_owner applies the endpoints' own rule (app_webhook_endpoint_visible) to it.
-- The ent rule rule.FilterOwnCredentialEvents decides by credential (the data's credentialId
-- or oauthClientId).
--
-- SELECT only: these events are recorded by the delivery worker, pinned to no user, which sees
-- them all (events_assign_seq's UPDATE must see the row it numbers).

-- +goose Up
CREATE POLICY event_endpoint_owner ON events AS RESTRICTIVE FOR SELECT TO brokerdesk_app
  USING (type NOT LIKE 'webhook\_endpoint.%' OR public.app_webhook_endpoint_visible(owner_id));

-- Events recorded before: the endpoint's credential user, while the endpoint exists (none:
-- admins and company-level credentials only).
SET LOCAL ROLE brokerdesk_operator;
UPDATE events e SET user_scoped = false, contact_id = NULL, co_owner_id = NULL, related_contact_id = NULL,
  related_owner_id = NULL,
  owner_id = (SELECT w.credential_user_id FROM webhook_endpoints w
              WHERE w.company_id = e.company_id AND w.id = (e.data->>'id')::uuid)
WHERE e.type LIKE 'webhook\_endpoint.%';
RESET ROLE;

-- +goose Down
DROP POLICY event_endpoint_owner ON events;
