-- A wake-up for the log's readers (the live inbox streams, the event handlers' dispatcher:
-- docs/architecture.md#event-log): every statement that appends events notifies `events_appended`
-- when its transaction commits. The payload is empty on purpose: PostgreSQL folds identical
-- notifications of one transaction into one, so a bulk send's thousand events wake each listener
-- once, and a reader learns what was appended from the log itself, in the log's order, never from
-- the notification (which is lost if nobody listened).
CREATE FUNCTION events_appended_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('events_appended', '');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER events_appended_notify AFTER INSERT ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_appended_notify();
