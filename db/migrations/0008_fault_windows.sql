ALTER TABLE "messages" ADD COLUMN "previous_provider_message_ids" text[];--> statement-breakpoint
ALTER TABLE "webhook_events" ADD COLUMN "processing_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD COLUMN "locked_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD COLUMN "holder" text;--> statement-breakpoint
CREATE INDEX "messages_previous_provider_ids_idx" ON "messages" USING gin ("previous_provider_message_ids") WHERE "messages"."previous_provider_message_ids" is not null;--> statement-breakpoint
CREATE INDEX "messages_in_flight_idx" ON "messages" USING btree ("status_updated_at") WHERE "messages"."status" in ('queued', 'sending');