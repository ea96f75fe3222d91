-- The timeline's activity lines (docs/architecture.md#event-log): written by the event log's
-- activity handler from the events of assignments, status changes, snoozes, labels, opt-outs and
-- consent, and kept as long as their conversation, while the log itself is pruned after its
-- retention. (event_id, conversation_id) is unique: a handler that sees an event again writes
-- nothing more. The conversation index serves the timeline's read, newest first.
CREATE TABLE "conversation_activities" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "conversation_activities_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"conversation_id" integer NOT NULL,
	"event_id" bigint NOT NULL,
	"type" text NOT NULL,
	"actor_type" text NOT NULL,
	"actor_staff_id" integer,
	"data" jsonb NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	CONSTRAINT "conversation_activities_type_check" CHECK ("conversation_activities"."type" in ('conversation.assigned', 'conversation.status_changed', 'conversation.snoozed', 'conversation.woke', 'conversation.labeled', 'client.opted_out', 'client.opted_in', 'consent.recorded')),
	CONSTRAINT "conversation_activities_actor_type_check" CHECK ("conversation_activities"."actor_type" in ('staff', 'client', 'system', 'api', 'provider'))
);
--> statement-breakpoint
ALTER TABLE "conversation_activities" ADD CONSTRAINT "conversation_activities_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversation_activities" ADD CONSTRAINT "conversation_activities_conversation_fk" FOREIGN KEY ("business_id","conversation_id") REFERENCES "public"."conversations"("business_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "conversation_activities_event_key" ON "conversation_activities" USING btree ("event_id","conversation_id");--> statement-breakpoint
CREATE INDEX "conversation_activities_conversation_idx" ON "conversation_activities" USING btree ("business_id","conversation_id","occurred_at" DESC NULLS LAST,"id" DESC NULLS LAST);