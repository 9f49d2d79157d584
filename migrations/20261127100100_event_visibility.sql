-- Hand-written: an event is no wider than its resource (issue 20 item 3). The policy of
-- 20261124030000_visibility.sql admitted a user-scoped event when its owner_id or its contact
-- was visible, and the events named the assignee of a task (the owner of an appointment) as
-- owner_id even when the task was about a contact: an agent assigned a task about a colleague's
-- customer got 404 on the task (task_visibility: the contact decides) but read its title and
-- contact id in /events and in its webhooks. Lead events named the contact a conversion made,
-- so a colleague who owns that contact read the lead's events; relationship events needed one
-- of the two contacts where the relationship needs both; comment events went by their author.
--
-- Now app/events records what the resource's own rule needs, at the time, and this policy
-- applies that rule: the contact (while it exists) or a user who saw the resource then (the
-- contact's owner; for a task or appointment without a contact its assignee/owner and its
-- creator: co_owner_id); for a relationship also the related contact or its owner then. The
-- ent rule rule.FilterVisibleEvent says the same.

-- +goose Up
DROP POLICY event_visibility ON events;
DROP POLICY event_visibility_update ON events;
DROP POLICY event_visibility_delete ON events;
SELECT app_restrict_visibility('events', 'event_visibility',
  'NOT user_scoped OR (
     ((contact_id IS NOT NULL AND app_contact_visible(contact_id)) OR app_visible_owner(owner_id) OR app_visible_owner(co_owner_id))
     AND (related_contact_id IS NULL OR app_contact_visible(related_contact_id) OR app_visible_owner(related_owner_id)))');

-- Events written before: what they concern, by the new rule, from their data and from the rows
-- that still exist (a task or appointment with a contact: that contact and its owner now, the
-- owner at the time being unknown; a comment: its task's; nothing known: visible to 'all' only).
SET LOCAL ROLE brokerdesk_operator;
UPDATE events SET contact_id = NULL WHERE type LIKE 'lead.%';
UPDATE events e SET owner_id = (SELECT c.owner_id FROM contacts c WHERE c.id = e.contact_id), co_owner_id = NULL
WHERE (e.type LIKE 'task.%' OR e.type LIKE 'appointment.%') AND e.contact_id IS NOT NULL;
UPDATE events SET co_owner_id = nullif(data->>'creatorId', '')::uuid
WHERE (type LIKE 'task.%' OR type IN ('appointment.created', 'appointment.updated', 'appointment.deleted'))
  AND contact_id IS NULL;
UPDATE events e SET co_owner_id = a.creator_id
FROM appointments a
WHERE e.type LIKE 'appointment.occurrence_%' AND e.contact_id IS NULL AND a.id = (e.data->>'id')::uuid;
UPDATE events e SET contact_id = t.contact_id,
  owner_id = CASE WHEN t.contact_id IS NULL THEN t.assignee_id
    ELSE (SELECT c.owner_id FROM contacts c WHERE c.id = t.contact_id) END,
  co_owner_id = CASE WHEN t.contact_id IS NULL THEN t.creator_id END
FROM tasks t
WHERE e.type = 'task_comment.created' AND t.id = (e.data->>'taskId')::uuid;
UPDATE events e SET owner_id = NULL
WHERE e.type = 'task_comment.created' AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = (e.data->>'taskId')::uuid);
UPDATE events e SET related_contact_id = (e.data->>'relatedContactId')::uuid,
  related_owner_id = (SELECT c.owner_id FROM contacts c WHERE c.id = (e.data->>'relatedContactId')::uuid)
WHERE e.type LIKE 'relationship.%';
RESET ROLE;

-- +goose Down
DROP POLICY event_visibility ON events;
DROP POLICY event_visibility_update ON events;
DROP POLICY event_visibility_delete ON events;
SELECT app_restrict_visibility('events', 'event_visibility',
  'NOT user_scoped OR app_visible_owner(owner_id) OR (contact_id IS NOT NULL AND app_contact_visible(contact_id))');
