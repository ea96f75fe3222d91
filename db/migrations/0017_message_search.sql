-- Searchable texts in a table of their own (docs/architecture.md#search-texts). A message's status
-- changes are non-HOT updates (status is in partial index predicates), and each re-inserted the
-- message's ~60 content trigrams into the GIN index on `messages`: a send does two or more. Here the
-- trigram indexes are written when a message is, and again only when its content or subject change.
-- Triggers on `messages` keep the table; nothing in the application has to remember to.
CREATE TABLE "message_search" (
	"message_id" bigint PRIMARY KEY NOT NULL,
	"business_id" integer NOT NULL,
	"content" text,
	"subject" text
);
--> statement-breakpoint
-- Once per statement, over its transition table: a 1,000-message insert writes its texts in one INSERT.
-- A message without text (most calls) has no row.
CREATE FUNCTION message_search_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO message_search (message_id, business_id, content, subject)
  SELECT a.id, a.business_id, a.content, a.subject FROM added a
  WHERE a.content IS NOT NULL OR a.subject IS NOT NULL;
  RETURN NULL;
END $$;--> statement-breakpoint
-- Only an UPDATE that sets content or subject (never a status change) and changes one of them.
CREATE FUNCTION message_search_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO message_search (message_id, business_id, content, subject)
  VALUES (NEW.id, NEW.business_id, NEW.content, NEW.subject)
  ON CONFLICT (message_id) DO UPDATE SET content = excluded.content, subject = excluded.subject;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER message_search_insert AFTER INSERT ON messages
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION message_search_added();--> statement-breakpoint
CREATE TRIGGER message_search_update AFTER UPDATE OF content, subject ON messages
  FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content OR OLD.subject IS DISTINCT FROM NEW.subject)
  EXECUTE FUNCTION message_search_changed();--> statement-breakpoint
-- The texts of the messages that exist. CREATE TRIGGER above took a lock on messages that conflicts
-- with every writer and is held until this migration commits, so no message can fall between this
-- copy and the triggers.
INSERT INTO message_search (message_id, business_id, content, subject)
SELECT id, business_id, content, subject FROM messages WHERE content IS NOT NULL OR subject IS NOT NULL;--> statement-breakpoint
ALTER TABLE "message_search" ADD CONSTRAINT "message_search_message_fk" FOREIGN KEY ("business_id","message_id") REFERENCES "public"."messages"("business_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "message_search_content_trgm_idx" ON "message_search" USING gin ("business_id","content" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "message_search_subject_trgm_idx" ON "message_search" USING gin ("business_id","subject" gin_trgm_ops) WHERE "message_search"."subject" is not null;--> statement-breakpoint
DROP INDEX "messages_content_trgm_idx";--> statement-breakpoint
DROP INDEX "messages_subject_trgm_idx";
