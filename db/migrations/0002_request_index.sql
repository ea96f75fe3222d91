DROP INDEX "messages_business_request_idx";--> statement-breakpoint
CREATE INDEX "messages_request_idx" ON "messages" USING btree ("request_id") WHERE "messages"."request_id" is not null;