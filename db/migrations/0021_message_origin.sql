-- How each message came to be (db/schema/enums.ts MESSAGE_ORIGINS, docs/api.md#record-mode): the
-- send claim and the recovery sweep take only `send` and `system` messages, so a recorded message
-- never becomes a send, whatever its status says. Added with a default so the table is not
-- rewritten, the existing rows classified below, then the default dropped: every writer must say.
ALTER TABLE "messages" ADD COLUMN "origin" text DEFAULT 'send' NOT NULL;--> statement-breakpoint
-- Provider webhooks wrote inbound texts, emails and calls (record mode's inbound items are
-- indistinguishable, and are never sent either way).
UPDATE "messages" SET "origin" = 'webhook' WHERE "direction" = 'inbound' OR "message_type" = 'CALL';--> statement-breakpoint
-- Record mode stores outbound texts and emails with no attempt, whatever its sender_type (a caller
-- may record as `system`); every send stores 1 or more, except one it refused at once (opted out, no
-- marketing consent), which is failed and never in flight.
UPDATE "messages" SET "origin" = 'record'
WHERE "direction" = 'outbound' AND "message_type" IN ('TEXT', 'EMAIL') AND "attempts" = 0
  AND "error_code" IS DISTINCT FROM 'opted_out' AND "error_code" IS DISTINCT FROM 'no_marketing_consent';--> statement-breakpoint
-- Notes and automatic answers (server/services/compliance/auto-replies.ts) are the product's own.
UPDATE "messages" SET "origin" = 'system'
WHERE "direction" = 'outbound' AND ("message_type" = 'NOTE' OR ("provider_metadata" ? 'auto_reply' AND "attempts" > 0));--> statement-breakpoint
ALTER TABLE "messages" ALTER COLUMN "origin" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_origin_check" CHECK ("messages"."origin" in ('send', 'system', 'record', 'webhook'));
