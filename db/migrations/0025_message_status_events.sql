-- Every status change of a text or an email is a `message.status_updated` event
-- (docs/architecture.md#event-log), whoever writes it: the send workers, provider callbacks (the
-- group-commit statement of Twilio's), SendGrid's events, the API, staff. One statement-level
-- trigger with transition tables, so a statement that moves a thousand messages writes their
-- thousand events in one insert. Not a change the log carries: into `sending` (the send worker
-- claimed it) and `sending` back to `queued` (a transient error, retried); calls have their own
-- events. The actor is the one the writing transaction named (app.event_actor, set by
-- setEventActor in server/services/events/record.ts), else the system.
CREATE FUNCTION messages_status_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (business_id, type, conversation_id, message_id, client_id, actor_type, actor_staff_id, data)
  SELECT n.business_id, 'message.status_updated', n.conversation_id, n.id, n.client_id,
         coalesce(nullif(current_setting('app.event_actor', true), ''), 'system'),
         nullif(current_setting('app.event_actor_staff_id', true), '')::int,
         jsonb_build_object(
           'message_id', n.id, 'conversation_id', n.conversation_id, 'client_id', n.client_id,
           'channel', n.channel, 'message_type', n.message_type, 'direction', n.direction,
           'status', n.status, 'previous_status', o.status,
           'error_code', left(n.error_code, 64), 'error_message', left(n.error_message, 1000))
  FROM new_rows n JOIN old_rows o ON o.id = n.id
  WHERE n.status IS DISTINCT FROM o.status
    AND n.message_type IN ('TEXT', 'EMAIL')
    AND n.status <> 'sending'
    AND NOT (o.status = 'sending' AND n.status = 'queued')
  ORDER BY n.id;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER messages_status_events AFTER UPDATE ON messages
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION messages_status_events();
