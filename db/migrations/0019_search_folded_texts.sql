-- Search reads folded texts in the order it answers (docs/architecture.md#search-texts).
--
-- A common term's search walked the business's messages newest first and ILIKE folded every row it
-- read (lower() of each content, ~6,000 rows for the capped total): most of its ~13 ms. message_search
-- now stores lower(content) and lower(subject) (ILIKE folds both sides with lower(), so
-- `content_lower LIKE lower(pattern)` answers exactly what `content ILIKE pattern` did), and the
-- walk reads it through its own (business_id, sent_at, message_id) index: a narrow row, no folding.
-- With sent_at and the note flag here, the trigram bitmap no longer looks up each match's message.
-- messages_business_sent_idx served only that walk: every message insert and every non-HOT status
-- update no longer writes it.
--
-- No message is written until this migration commits (the lock below), so none falls between the
-- copy and the triggers.
LOCK TABLE "messages" IN SHARE ROW EXCLUSIVE MODE;--> statement-breakpoint
DROP INDEX "messages_business_sent_idx";--> statement-breakpoint
DROP INDEX "message_search_content_trgm_idx";--> statement-breakpoint
DROP INDEX "message_search_subject_trgm_idx";--> statement-breakpoint
TRUNCATE "message_search";--> statement-breakpoint
ALTER TABLE "message_search" DROP COLUMN "content";--> statement-breakpoint
ALTER TABLE "message_search" DROP COLUMN "subject";--> statement-breakpoint
ALTER TABLE "message_search" ADD COLUMN "sent_at" timestamp with time zone NOT NULL;--> statement-breakpoint
ALTER TABLE "message_search" ADD COLUMN "is_note" boolean NOT NULL;--> statement-breakpoint
ALTER TABLE "message_search" ADD COLUMN "content_lower" text;--> statement-breakpoint
ALTER TABLE "message_search" ADD COLUMN "subject_lower" text;--> statement-breakpoint
CREATE OR REPLACE FUNCTION message_search_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO message_search (message_id, business_id, sent_at, is_note, content_lower, subject_lower)
  SELECT a.id, a.business_id, a.sent_at, a.message_type = 'NOTE', lower(a.content), lower(a.subject) FROM added a
  WHERE a.content IS NOT NULL OR a.subject IS NOT NULL;
  RETURN NULL;
END $$;--> statement-breakpoint
-- A message with neither text has no row (it matches nothing): one that loses both loses its row.
CREATE OR REPLACE FUNCTION message_search_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.content IS NULL AND NEW.subject IS NULL THEN
    DELETE FROM message_search WHERE message_id = NEW.id;
  ELSE
    INSERT INTO message_search (message_id, business_id, sent_at, is_note, content_lower, subject_lower)
    VALUES (NEW.id, NEW.business_id, NEW.sent_at, NEW.message_type = 'NOTE', lower(NEW.content), lower(NEW.subject))
    ON CONFLICT (message_id) DO UPDATE SET sent_at = excluded.sent_at, is_note = excluded.is_note,
      content_lower = excluded.content_lower, subject_lower = excluded.subject_lower;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
-- Also when sent_at changes (a scheduled message gets the moment it is sent) or the type does (never
-- today): a status change still writes nothing here.
DROP TRIGGER "message_search_update" ON "messages";--> statement-breakpoint
CREATE TRIGGER message_search_update AFTER UPDATE OF content, subject, sent_at, message_type ON messages
  FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content OR OLD.subject IS DISTINCT FROM NEW.subject
                     OR OLD.sent_at IS DISTINCT FROM NEW.sent_at OR OLD.message_type IS DISTINCT FROM NEW.message_type)
  EXECUTE FUNCTION message_search_changed();--> statement-breakpoint
INSERT INTO message_search (message_id, business_id, sent_at, is_note, content_lower, subject_lower)
SELECT id, business_id, sent_at, message_type = 'NOTE', lower(content), lower(subject) FROM messages
WHERE content IS NOT NULL OR subject IS NOT NULL;--> statement-breakpoint
CREATE INDEX "message_search_business_sent_idx" ON "message_search" USING btree ("business_id","sent_at" DESC NULLS LAST,"message_id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "message_search_content_trgm_idx" ON "message_search" USING gin ("business_id","content_lower" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "message_search_subject_trgm_idx" ON "message_search" USING gin ("business_id","subject_lower" gin_trgm_ops) WHERE "message_search"."subject_lower" is not null;
