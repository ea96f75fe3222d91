-- Availability and assignment (docs/api.md#staff-availability, #auto-assignment) and waiting for a
-- reply (#waiting-for-a-reply): staff Away switch, schedule, capacity and round-robin turn; a location's own
-- assignment policy; a conversation's waiting_since, with the partial index assignment counts by; the
-- log's new type staff.availability_changed (partitioned events: the check names the column bare).
ALTER TABLE "events" DROP CONSTRAINT "events_type_check";--> statement-breakpoint
ALTER TABLE "locations" ADD COLUMN "assignment_policy" text;--> statement-breakpoint
ALTER TABLE "staff" ADD COLUMN "away" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "staff" ADD COLUMN "away_changed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "staff" ADD COLUMN "schedule" jsonb;--> statement-breakpoint
ALTER TABLE "staff" ADD COLUMN "capacity" smallint;--> statement-breakpoint
ALTER TABLE "staff" ADD COLUMN "last_assigned_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "waiting_since" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "conversations_waiting_idx" ON "conversations" USING btree ("business_id","assigned_staff_id","waiting_since") WHERE "conversations"."status" = 'open' and "conversations"."waiting_since" is not null;--> statement-breakpoint
ALTER TABLE "locations" ADD CONSTRAINT "locations_assignment_policy_check" CHECK ("locations"."assignment_policy" is null or "locations"."assignment_policy" in ('off', 'round_robin', 'balanced'));--> statement-breakpoint
ALTER TABLE "staff" ADD CONSTRAINT "staff_capacity_check" CHECK ("staff"."capacity" is null or "staff"."capacity" between 0 and 1000);--> statement-breakpoint
ALTER TABLE "staff" ADD CONSTRAINT "staff_schedule_shape_check" CHECK ("staff"."schedule" is null or jsonb_typeof("staff"."schedule") = 'object');--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_type_check" CHECK ("type" in ('message.received', 'message.created', 'message.status_updated', 'message.flagged', 'message.rescheduled', 'message.edited', 'conversation.created', 'conversation.assigned', 'conversation.status_changed', 'conversation.snoozed', 'conversation.woke', 'conversation.labeled', 'conversation.read', 'note.created', 'client.updated', 'client.opted_out', 'client.opted_in', 'consent.recorded', 'call.started', 'call.completed', 'voicemail.received', 'staff.availability_changed', 'webhook_endpoint.disabled'));
--> statement-breakpoint
-- Waiting for a reply (server/services/conversations/waiting.ts) for the conversations that exist:
-- the client's first text or email after the last reply, if any came after it.
UPDATE "conversations" c SET "waiting_since" = w.since
FROM (
  SELECT m.conversation_id, min(m.sent_at) AS since
  FROM "messages" m
  LEFT JOIN LATERAL (
    SELECT max(r.sent_at) AS at FROM "messages" r
    WHERE r.conversation_id = m.conversation_id AND r.direction = 'outbound' AND r.message_type IN ('TEXT', 'EMAIL')
      AND r.sender_type <> 'system' AND r.status NOT IN ('scheduled', 'canceled')
  ) last_reply ON true
  WHERE m.direction = 'inbound' AND m.message_type IN ('TEXT', 'EMAIL')
    AND (last_reply.at IS NULL OR m.sent_at > last_reply.at)
  GROUP BY m.conversation_id
) w
WHERE c.id = w.conversation_id;
