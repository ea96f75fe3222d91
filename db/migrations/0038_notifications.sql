-- Staff notifications (docs/api.md#notifications): the bell's rows (one unread per staff member and
-- conversation, folded into as more happens), the digests sent, and each staff member's choices.
CREATE TABLE "notification_digests" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "notification_digests_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"staff_id" integer NOT NULL,
	"conversation_ids" integer[] NOT NULL,
	"sent_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "notifications_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"staff_id" integer NOT NULL,
	"kind" text NOT NULL,
	"conversation_id" integer,
	"message_id" bigint,
	"event_id" bigint NOT NULL,
	"count" integer DEFAULT 1 NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"in_app" boolean NOT NULL,
	"browser" boolean NOT NULL,
	"email_due_at" timestamp with time zone,
	"email_state" text,
	"email_detail" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"read_at" timestamp with time zone,
	CONSTRAINT "notifications_kind_check" CHECK ("notifications"."kind" in ('unassigned_waiting', 'client_replied', 'assigned', 'mentioned', 'missed_call', 'webhook_disabled')),
	CONSTRAINT "notifications_email_state_check" CHECK ("notifications"."email_state" in ('pending', 'sent', 'dropped')),
	CONSTRAINT "notifications_email_check" CHECK (("notifications"."email_state" is null) = ("notifications"."email_due_at" is null)),
	CONSTRAINT "notifications_count_check" CHECK ("notifications"."count" >= 1)
);
--> statement-breakpoint
ALTER TABLE "staff" ADD COLUMN "notification_preferences" jsonb;--> statement-breakpoint
ALTER TABLE "notification_digests" ADD CONSTRAINT "notification_digests_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notification_digests" ADD CONSTRAINT "notification_digests_staff_fk" FOREIGN KEY ("business_id","staff_id") REFERENCES "public"."staff"("business_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_staff_fk" FOREIGN KEY ("business_id","staff_id") REFERENCES "public"."staff"("business_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_conversation_fk" FOREIGN KEY ("business_id","conversation_id") REFERENCES "public"."conversations"("business_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "notification_digests_staff_idx" ON "notification_digests" USING btree ("business_id","staff_id","sent_at" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "notifications_unread_conversation_key" ON "notifications" USING btree ("staff_id","conversation_id") WHERE "notifications"."read_at" is null and "notifications"."conversation_id" is not null;--> statement-breakpoint
CREATE INDEX "notifications_staff_idx" ON "notifications" USING btree ("business_id","staff_id","updated_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "notifications_unread_idx" ON "notifications" USING btree ("business_id","staff_id") WHERE "notifications"."read_at" is null and "notifications"."in_app";--> statement-breakpoint
CREATE INDEX "notifications_email_due_idx" ON "notifications" USING btree ("email_due_at") WHERE "notifications"."email_state" = 'pending';--> statement-breakpoint
ALTER TABLE "staff" ADD CONSTRAINT "staff_notification_preferences_shape_check" CHECK ("staff"."notification_preferences" is null or jsonb_typeof("staff"."notification_preferences") = 'object');