-- The inbox's live streams are fed from the event log (docs/architecture.md#realtime), so every
-- change they show is an event: read marks (`conversation.read`), flags (`message.flagged`), a
-- scheduled message moved or sent now (`message.rescheduled`) and a call that starts
-- (`call.started`) join the types. A stream that resumes reads its business's events in the log's
-- (tx_id, id) order after its last one: the business index is in that order.
ALTER TABLE "events" DROP CONSTRAINT "events_type_check";--> statement-breakpoint
DROP INDEX "events_business_id_idx";--> statement-breakpoint
CREATE INDEX "events_business_tx_idx" ON "events" USING btree ("business_id","tx_id","id");--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_type_check" CHECK ("type" in ('message.received', 'message.created', 'message.status_updated', 'message.flagged', 'message.rescheduled', 'conversation.created', 'conversation.assigned', 'conversation.status_changed', 'conversation.snoozed', 'conversation.woke', 'conversation.labeled', 'conversation.read', 'note.created', 'client.updated', 'client.opted_out', 'client.opted_in', 'consent.recorded', 'call.started', 'call.completed', 'voicemail.received', 'webhook_endpoint.disabled'));
--> statement-breakpoint
-- Migration 0027's call events, and `call.started` when a call row is first written short of a final
-- status (a ringing or answered call appears in the inbox as it happens). Its intermediate steps
-- (ringing to in progress) are not logged, as a text's `sending` is not.
CREATE OR REPLACE FUNCTION call_events() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  final text[] := ARRAY['completed', 'busy', 'no_answer', 'failed', 'canceled'];
  summary jsonb := jsonb_build_object(
    'message_id', NEW.id, 'conversation_id', NEW.conversation_id, 'client_id', NEW.client_id,
    'channel', NEW.channel, 'message_type', NEW.message_type, 'direction', NEW.direction,
    'status', NEW.status, 'duration_seconds', NEW.call_duration_seconds);
BEGIN
  IF TG_OP = 'INSERT' AND NOT NEW.status = ANY(final) THEN
    INSERT INTO events (business_id, type, conversation_id, message_id, client_id, actor_type, data)
    VALUES (NEW.business_id, 'call.started', NEW.conversation_id, NEW.id, NEW.client_id, 'provider', summary);
  END IF;
  IF NEW.status = ANY(final) AND (TG_OP = 'INSERT' OR NOT OLD.status = ANY(final)) THEN
    INSERT INTO events (business_id, type, conversation_id, message_id, client_id, actor_type, data)
    VALUES (NEW.business_id, 'call.completed', NEW.conversation_id, NEW.id, NEW.client_id, 'provider', summary);
  END IF;
  IF NEW.call_outcome = 'voicemail' AND (TG_OP = 'INSERT' OR OLD.call_outcome IS DISTINCT FROM 'voicemail') THEN
    INSERT INTO events (business_id, type, conversation_id, message_id, client_id, actor_type, data)
    VALUES (NEW.business_id, 'voicemail.received', NEW.conversation_id, NEW.id, NEW.client_id, 'client', summary);
  END IF;
  RETURN NULL;
END $$;
