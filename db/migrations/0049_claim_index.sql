-- The claim's index of an endpoint's pending deliveries gets a clause (attempts >= 0, always true)
-- that only the endpoint-wide scans state, so that the lookups of one conversation's pending
-- deliveries use the conversation index whatever the statistics say (db/schema/webhook-endpoints.ts).
-- (On a large production table, build the new index CONCURRENTLY first: docs/production.md.)
DROP INDEX "webhook_deliveries_pending_idx";--> statement-breakpoint
CREATE INDEX "webhook_deliveries_pending_idx" ON "webhook_deliveries" USING btree ("endpoint_id","id") WHERE "webhook_deliveries"."status" = 'pending' and "webhook_deliveries"."attempts" >= 0;