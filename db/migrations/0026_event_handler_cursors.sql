-- Event handlers read the log in (tx_id, id) order, only below the oldest transaction still running
-- (server/services/events/dispatch.ts): ids are taken at insert, so an event's id can be lower than
-- one that committed before it, and reading by id alone would skip it. Each handler's cursor is a
-- row of event_handler_cursors, moved in the transaction of the handler's own writes.
CREATE TABLE "event_handler_cursors" (
	"handler" text PRIMARY KEY NOT NULL,
	"tx_id" "xid8" DEFAULT '0'::xid8 NOT NULL,
	"event_id" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "tx_id" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
CREATE INDEX "events_tx_id_idx" ON "events" USING btree ("tx_id","id");