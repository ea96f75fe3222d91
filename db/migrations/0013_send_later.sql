-- Send later (docs/api.md#send-later): a message stored `scheduled` waits for its send_at, then goes
-- the normal way (a pg-boss send job started after send_at claims it). cancel_on_reply: the
-- client's next inbound message cancels it.
ALTER TABLE "messages" DROP CONSTRAINT "messages_status_check";--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "send_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "cancel_on_reply" boolean DEFAULT true NOT NULL;--> statement-breakpoint
-- Cancel on reply: every inbound message looks up its conversation's scheduled messages.
CREATE INDEX "messages_scheduled_conversation_idx" ON "messages" USING btree ("business_id","conversation_id") WHERE "messages"."status" = 'scheduled';--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_status_check" CHECK ("messages"."status" in ('initiated', 'scheduled', 'queued', 'sending', 'sent', 'delivered', 'read', 'received', 'undelivered', 'failed', 'bounced', 'canceled', 'ringing', 'in_progress', 'completed', 'busy', 'no_answer'));--> statement-breakpoint
-- 0003's function with `scheduled` ranked between `initiated` and `queued`: scheduled → queued,
-- sending or canceled all move forward; nothing moves a message back to `scheduled`.
CREATE OR REPLACE FUNCTION message_status_rank(status text, message_type text) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN status = 'received' THEN 100
    WHEN message_type = 'CALL' THEN CASE status
      WHEN 'initiated' THEN 0
      WHEN 'ringing' THEN 1
      WHEN 'in_progress' THEN 2
      WHEN 'completed' THEN 3 WHEN 'busy' THEN 3 WHEN 'no_answer' THEN 3 WHEN 'canceled' THEN 3 WHEN 'failed' THEN 3
    END
    ELSE CASE status
      WHEN 'initiated' THEN 0
      WHEN 'scheduled' THEN 1
      WHEN 'queued' THEN 2
      WHEN 'sending' THEN 3
      WHEN 'sent' THEN 4
      WHEN 'delivered' THEN 5 WHEN 'undelivered' THEN 5 WHEN 'failed' THEN 5 WHEN 'bounced' THEN 5 WHEN 'canceled' THEN 5
      WHEN 'read' THEN 6
    END
  END
$$;
