-- The events the notifications handler has taken (docs/architecture.md#notifications): an event handed to it
-- again tells nobody twice. Pruned once the log no longer holds the event.
CREATE TABLE "notification_events" (
	"event_id" bigint PRIMARY KEY NOT NULL,
	"business_id" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "notification_events" ADD CONSTRAINT "notification_events_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;