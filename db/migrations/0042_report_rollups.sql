-- The deliverability report's reads on their own indexes (docs/performance.md#benchreports).
-- Partial, so the write path pays little: only a failed text or email has an entry in the first
-- (a status update is not HOT anyway: messages_in_flight_idx keys status_updated_at, which every
-- status update writes), only an opt-out in the second. Not a (business_id, sent_at) index on all
-- messages: 0019 dropped that one from every insert, and the volume report reads the whole range
-- whatever the index (measured: docs/performance.md#benchreports).
CREATE INDEX "messages_business_failed_idx" ON "messages" USING btree ("business_id","sent_at") WHERE "messages"."direction" = 'outbound' and "messages"."status" in ('failed', 'undelivered', 'bounced');--> statement-breakpoint
CREATE INDEX "opt_out_events_business_created_idx" ON "opt_out_events" USING btree ("business_id","created_at") WHERE "opt_out_events"."action" = 'opt_out';
