-- The bulk write path (bench:send): checks and index entries every inserted row paid for nothing.
--
-- message_search rows are taken by a trigger from the messages just inserted: the foreign key back to
-- them checked each one (~4 ms per 1,000) and only served to delete a text with its message, which a
-- statement-level trigger does once per DELETE (cascades from clients and conversations included).
ALTER TABLE "message_search" DROP CONSTRAINT "message_search_message_fk";
--> statement-breakpoint
CREATE FUNCTION message_search_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM message_search s USING removed r WHERE s.message_id = r.id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER message_search_delete AFTER DELETE ON messages
  REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION message_search_removed();--> statement-breakpoint
CREATE FUNCTION message_search_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE message_search;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER message_search_truncate AFTER TRUNCATE ON messages
  FOR EACH STATEMENT EXECUTE FUNCTION message_search_truncated();--> statement-breakpoint
-- Texts whose message is already gone (none, while the foreign key held): kept exact from here on.
DELETE FROM message_search s WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = s.message_id);--> statement-breakpoint
-- A message gets its provider id when sent: a queued one (a bulk request's thousand) has no entry
-- to write until then. NULLs never conflicted in a unique index, so what is unique is unchanged.
-- (On a large production table, build the new index CONCURRENTLY first: docs/production.md.)
DROP INDEX "messages_provider_id_key";--> statement-breakpoint
CREATE UNIQUE INDEX "messages_provider_id_key" ON "messages" USING btree ("provider","provider_message_id","business_id") WHERE "messages"."provider_message_id" is not null;
