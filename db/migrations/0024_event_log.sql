-- The event log (docs/architecture.md#event-log): one row per change, in the change's transaction.
-- Partitioned by UTC day so that retention drops whole partitions (no row-by-row deletes, no long
-- locks). The worker's maintenance creates each day's partition ahead of time
-- (server/services/events/partitions.ts); the default partition takes a row whose day has none yet,
-- so a write never fails for want of a partition, and maintenance moves such rows into their day.
CREATE SEQUENCE "public"."events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "events" (
	"id" bigint DEFAULT nextval('events_id_seq') NOT NULL,
	"business_id" integer NOT NULL,
	"type" text NOT NULL,
	"conversation_id" integer,
	"message_id" bigint,
	"client_id" integer,
	"actor_type" text NOT NULL,
	"actor_staff_id" integer,
	"data" jsonb NOT NULL,
	"occurred_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "events_id_occurred_at_pk" PRIMARY KEY("id","occurred_at"),
	CONSTRAINT "events_type_check" CHECK ("events"."type" in ('message.received', 'message.created', 'message.status_updated', 'conversation.created', 'conversation.assigned', 'conversation.status_changed', 'conversation.snoozed', 'conversation.woke', 'conversation.labeled', 'note.created', 'client.updated', 'client.opted_out', 'client.opted_in', 'consent.recorded', 'call.completed', 'voicemail.received', 'webhook_endpoint.disabled')),
	CONSTRAINT "events_actor_type_check" CHECK ("events"."actor_type" in ('staff', 'client', 'system', 'api', 'provider'))
) PARTITION BY RANGE ("occurred_at");
--> statement-breakpoint
CREATE INDEX "events_business_id_idx" ON "events" USING btree ("business_id","id");;
--> statement-breakpoint
CREATE TABLE "events_default" PARTITION OF "events" DEFAULT;
--> statement-breakpoint
-- Today's partition and the next week's, so the log works before the worker first runs.
DO $$
DECLARE d date;
BEGIN
  FOR d IN SELECT generate_series((now() at time zone 'UTC')::date - 1, (now() at time zone 'UTC')::date + 7, interval '1 day')::date LOOP
    EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF "events" FOR VALUES FROM (%L) TO (%L)',
                   'events_p' || to_char(d, 'YYYYMMDD'), d::timestamp AT TIME ZONE 'UTC', (d + 1)::timestamp AT TIME ZONE 'UTC');
  END LOOP;
END $$;