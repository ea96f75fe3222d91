-- Calls' events (docs/api.md#events), from the one writer of CALL rows (recordCall: an insert or
-- its ON CONFLICT update, in any order of Twilio's callbacks): `call.completed` once, when the
-- call's status first reaches a final one, and `voicemail.received` once, when its outcome becomes
-- voicemail. Row triggers whose WHEN is checked in C, so texts and emails (and their bulk inserts)
-- never run them.
CREATE FUNCTION call_events() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  final text[] := ARRAY['completed', 'busy', 'no_answer', 'failed', 'canceled'];
  summary jsonb := jsonb_build_object(
    'message_id', NEW.id, 'conversation_id', NEW.conversation_id, 'client_id', NEW.client_id,
    'channel', NEW.channel, 'message_type', NEW.message_type, 'direction', NEW.direction,
    'status', NEW.status, 'duration_seconds', NEW.call_duration_seconds);
BEGIN
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
--> statement-breakpoint
CREATE TRIGGER messages_call_events_insert AFTER INSERT ON messages
  FOR EACH ROW WHEN (NEW.message_type = 'CALL') EXECUTE FUNCTION call_events();
--> statement-breakpoint
CREATE TRIGGER messages_call_events_update AFTER UPDATE ON messages
  FOR EACH ROW WHEN (NEW.message_type = 'CALL'
    AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.call_outcome IS DISTINCT FROM NEW.call_outcome))
  EXECUTE FUNCTION call_events();
