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
-- The dimensions of db/schema/conversation-counts.ts, and one conversation's value in each (null:
-- none, so no key there), the same meaning as the list's filters (server/services/conversations.ts
-- listConditions). The one place that says what is counted: the triggers below use only these.
CREATE FUNCTION conversation_count_dimensions() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ARRAY['status', 'assignee', 'channel', 'location', 'label', 'unread', 'flagged', 'possible_opt_out']
$$;--> statement-breakpoint
CREATE FUNCTION conversation_count_values(c conversations) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ARRAY[
    c.status,
    coalesce(c.assigned_staff_id::text, ''),
    c.last_channel,
    c.location_id::text,
    c.label,
    CASE WHEN c.unread_count > 0 THEN '' END,
    CASE WHEN c.flagged_count > 0 THEN '' END,
    CASE WHEN c.possible_opt_out_message_id IS NOT NULL THEN '' END]
$$;--> statement-breakpoint
CREATE FUNCTION conversation_count_keys(c conversations) RETURNS TABLE (dimension text, value text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT k.dimension, k.value FROM unnest(conversation_count_dimensions(), conversation_count_values(c)) AS k(dimension, value)
  WHERE k.value IS NOT NULL
$$;--> statement-breakpoint
-- Once per statement, over its transition tables (not per row): a statement changing a thousand
-- conversations writes one delta per key it moved, not one per row and key (bench: a 1,000-row
-- UPDATE moving every row costs ~4 ms more with this trigger, ~30 ms more with a per-row one).
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
-- Each changed row, dimension by dimension: where its value moved, −1 for the old value and +1 for
-- the new one (the updates that move nothing, most of them, write nothing).
CREATE FUNCTION conversation_counts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO conversation_count_deltas (business_id, dimension, value, n)
  SELECT x.business_id, d.dimension, x.value, sum(x.n)::int
  FROM changed_from o JOIN changed_to c ON c.id = o.id
  CROSS JOIN LATERAL unnest(conversation_count_dimensions(), conversation_count_values(o::conversations),
                            conversation_count_values(c::conversations)) AS d(dimension, before, after)
  CROSS JOIN LATERAL (VALUES (o.business_id, d.before, -1), (c.business_id, d.after, 1)) AS x(business_id, value, n)
  WHERE (d.before IS DISTINCT FROM d.after OR o.business_id <> c.business_id) AND x.value IS NOT NULL
  GROUP BY 1, 2, 3
  HAVING sum(x.n) <> 0;
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
CREATE TRIGGER conversation_counts_update AFTER UPDATE ON conversations
  REFERENCING OLD TABLE AS changed_from NEW TABLE AS changed_to FOR EACH STATEMENT EXECUTE FUNCTION conversation_counts_changed();--> statement-breakpoint
CREATE TRIGGER conversation_counts_delete AFTER DELETE ON conversations
  REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION conversation_counts_removed();--> statement-breakpoint
CREATE TRIGGER conversation_counts_truncate AFTER TRUNCATE ON conversations
  FOR EACH STATEMENT EXECUTE FUNCTION conversation_counts_truncated();--> statement-breakpoint
-- The counts of the conversations that exist. CREATE TRIGGER above took a lock on conversations
-- that conflicts with every writer and is held until this migration commits, so no change can fall
-- between this count and the triggers.
INSERT INTO conversation_counts (business_id, dimension, value, n)
SELECT c.business_id, k.dimension, k.value, count(*)::int
FROM conversations c CROSS JOIN LATERAL conversation_count_keys(c) k
GROUP BY 1, 2, 3;
