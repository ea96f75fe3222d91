-- Kept filter counts (docs/architecture.md#kept-counts): GET /conversations/filters reads
-- per-business counts instead of grouping every conversation of the business. Triggers on
-- `conversations` write each change's −1/+1 per (dimension, value) into conversation_count_deltas
-- in the writer's own transaction; nothing in the application has to remember to. Writers only ever
-- INSERT deltas, so no two of them wait on a shared counter row; the compaction
-- (server/services/conversation-counts.ts) folds the deltas into conversation_counts, and a read is
-- the sum of both, exact at its snapshot.
CREATE TABLE "conversation_count_deltas" (
	"business_id" integer NOT NULL,
	"dimension" text NOT NULL,
	"value" text NOT NULL,
	"n" integer NOT NULL,
	CONSTRAINT "conversation_count_deltas_dimension_check" CHECK ("conversation_count_deltas"."dimension" in ('status', 'assignee', 'channel', 'location', 'label', 'unread', 'flagged', 'possible_opt_out'))
);
--> statement-breakpoint
CREATE TABLE "conversation_counts" (
	"business_id" integer NOT NULL,
	"dimension" text NOT NULL,
	"value" text NOT NULL,
	"n" integer NOT NULL,
	CONSTRAINT "conversation_counts_pkey" PRIMARY KEY("business_id","dimension","value"),
	CONSTRAINT "conversation_counts_dimension_check" CHECK ("conversation_counts"."dimension" in ('status', 'assignee', 'channel', 'location', 'label', 'unread', 'flagged', 'possible_opt_out'))
);
--> statement-breakpoint
CREATE INDEX "conversation_count_deltas_business_idx" ON "conversation_count_deltas" USING btree ("business_id");--> statement-breakpoint
-- The keys one conversation counts under: the dimensions of db/schema/conversation-counts.ts, the
-- same meaning as the list's filters (server/services/conversations.ts listConditions). A dimension
-- where the conversation has no value gives no key.
CREATE FUNCTION conversation_count_keys(c conversations) RETURNS TABLE (dimension text, value text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT k.dimension, k.value FROM (VALUES
    ('status', c.status),
    ('assignee', coalesce(c.assigned_staff_id::text, '')),
    ('channel', c.last_channel),
    ('location', c.location_id::text),
    ('label', c.label),
    ('unread', CASE WHEN c.unread_count > 0 THEN '' END),
    ('flagged', CASE WHEN c.flagged_count > 0 THEN '' END),
    ('possible_opt_out', CASE WHEN c.possible_opt_out_message_id IS NOT NULL THEN '' END)
  ) AS k(dimension, value)
  WHERE k.value IS NOT NULL
$$;--> statement-breakpoint
-- New and deleted conversations: once per statement over its transition table, so a statement
-- creating thousands of conversations writes one delta per key, not one per row and key.
CREATE FUNCTION conversation_counts_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO conversation_count_deltas (business_id, dimension, value, n)
  SELECT r.business_id, k.dimension, k.value, count(*)::int
  FROM added r CROSS JOIN LATERAL conversation_count_keys(r::conversations) k
  GROUP BY 1, 2, 3;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION conversation_counts_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO conversation_count_deltas (business_id, dimension, value, n)
  SELECT r.business_id, k.dimension, k.value, -count(*)::int
  FROM removed r CROSS JOIN LATERAL conversation_count_keys(r::conversations) k
  GROUP BY 1, 2, 3;
  RETURN NULL;
END $$;--> statement-breakpoint
-- A changed conversation: −1 for each key it left, +1 for each key it entered (keys it kept net to
-- nothing and are not written).
CREATE FUNCTION conversation_counts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO conversation_count_deltas (business_id, dimension, value, n)
  SELECT d.business_id, d.dimension, d.value, sum(d.n)::int
  FROM (
    SELECT NEW.business_id AS business_id, k.dimension, k.value, 1 AS n FROM conversation_count_keys(NEW) k
    UNION ALL
    SELECT OLD.business_id, k.dimension, k.value, -1 FROM conversation_count_keys(OLD) k
  ) d
  GROUP BY 1, 2, 3
  HAVING sum(d.n) <> 0;
  RETURN NULL;
END $$;--> statement-breakpoint
-- TRUNCATE conversations (never done by the application) empties the counts with it.
CREATE FUNCTION conversation_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM conversation_count_deltas;
  DELETE FROM conversation_counts;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER conversation_counts_insert AFTER INSERT ON conversations
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION conversation_counts_added();--> statement-breakpoint
CREATE TRIGGER conversation_counts_delete AFTER DELETE ON conversations
  REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION conversation_counts_removed();--> statement-breakpoint
-- Per row, and only for an UPDATE that moves a conversation between keys: the WHEN is evaluated
-- without calling the function, so the hot updates that move no key (a new message in a
-- conversation already unread, last_activity_at, last_message_*) cost nothing here. It must name
-- every column conversation_count_keys() reads (the workload test in
-- server/services/conversation-counts.test.ts fails when it misses one).
CREATE TRIGGER conversation_counts_update AFTER UPDATE ON conversations FOR EACH ROW
  WHEN (OLD.business_id IS DISTINCT FROM NEW.business_id
    OR OLD.status IS DISTINCT FROM NEW.status
    OR OLD.assigned_staff_id IS DISTINCT FROM NEW.assigned_staff_id
    OR OLD.last_channel IS DISTINCT FROM NEW.last_channel
    OR OLD.location_id IS DISTINCT FROM NEW.location_id
    OR OLD.label IS DISTINCT FROM NEW.label
    OR (OLD.unread_count > 0) IS DISTINCT FROM (NEW.unread_count > 0)
    OR (OLD.flagged_count > 0) IS DISTINCT FROM (NEW.flagged_count > 0)
    OR (OLD.possible_opt_out_message_id IS NULL) IS DISTINCT FROM (NEW.possible_opt_out_message_id IS NULL))
  EXECUTE FUNCTION conversation_counts_changed();--> statement-breakpoint
CREATE TRIGGER conversation_counts_truncate AFTER TRUNCATE ON conversations
  FOR EACH STATEMENT EXECUTE FUNCTION conversation_counts_truncated();--> statement-breakpoint
-- The counts of the conversations that exist. CREATE TRIGGER above took a lock on conversations
-- that conflicts with every writer and is held until this migration commits, so no change can fall
-- between this count and the triggers.
INSERT INTO conversation_counts (business_id, dimension, value, n)
SELECT c.business_id, k.dimension, k.value, count(*)::int
FROM conversations c CROSS JOIN LATERAL conversation_count_keys(c) k
GROUP BY 1, 2, 3;
