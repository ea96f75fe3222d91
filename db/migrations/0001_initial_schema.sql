CREATE TABLE "business_email_senders" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "business_email_senders_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"is_default" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "business_sms_numbers" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "business_sms_numbers_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"phone_number" text NOT NULL,
	"is_default" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "businesses" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "businesses_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"external_id" text,
	"name" text NOT NULL,
	"timezone" text DEFAULT 'UTC' NOT NULL,
	"country" text DEFAULT 'US' NOT NULL,
	"from_email" text,
	"from_name" text,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"onboarding_status" text DEFAULT 'completed' NOT NULL,
	"onboarding_steps" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "businesses_onboarding_status_check" CHECK ("businesses"."onboarding_status" in ('pending', 'in_progress', 'completed', 'failed')),
	CONSTRAINT "businesses_country_check" CHECK ("businesses"."country" ~ '^[A-Z]{2}$')
);
--> statement-breakpoint
CREATE TABLE "locations" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "locations_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"external_id" text,
	"name" text NOT NULL,
	"address" text,
	"phone_number" text,
	"timezone" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "staff" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "staff_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"external_id" text,
	"name" text NOT NULL,
	"email" text,
	"phone_number" text,
	"gender" text,
	"image_url" text,
	"role" text DEFAULT 'staff' NOT NULL,
	"location_id" integer,
	"active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "staff_role_check" CHECK ("staff"."role" in ('owner', 'manager', 'staff'))
);
--> statement-breakpoint
CREATE TABLE "clients" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "clients_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"external_id" text,
	"name" text,
	"email" text,
	"phone_number" text,
	"gender" text,
	"image_url" text,
	"client_type" text DEFAULT 'lead' NOT NULL,
	"location_id" integer,
	"opted_out_sms" boolean DEFAULT false NOT NULL,
	"opted_out_email" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "clients_client_type_check" CHECK ("clients"."client_type" in ('lead', 'new', 'returning', 'vip'))
);
--> statement-breakpoint
CREATE TABLE "conversations" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "conversations_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"client_id" integer NOT NULL,
	"location_id" integer,
	"status" text DEFAULT 'open' NOT NULL,
	"snoozed_until" timestamp with time zone,
	"assigned_staff_id" integer,
	"resolved_by_staff_id" integer,
	"updated_by_staff_id" integer,
	"label" text,
	"last_message_id" bigint,
	"last_message_content" text,
	"last_channel" text,
	"last_read_message_id" bigint,
	"unread_count" integer DEFAULT 0 NOT NULL,
	"flagged_count" integer DEFAULT 0 NOT NULL,
	"last_activity_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "conversations_status_check" CHECK ("conversations"."status" in ('open', 'pending', 'snoozed', 'resolved')),
	CONSTRAINT "conversations_last_channel_check" CHECK ("conversations"."last_channel" is null or "conversations"."last_channel" in ('sms', 'email', 'voice')),
	CONSTRAINT "conversations_counts_check" CHECK ("conversations"."unread_count" >= 0 and "conversations"."flagged_count" >= 0),
	CONSTRAINT "conversations_label_check" CHECK ("conversations"."label" is null or char_length("conversations"."label") between 1 and 50)
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "messages_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"conversation_id" integer NOT NULL,
	"client_id" integer NOT NULL,
	"channel" text,
	"direction" text NOT NULL,
	"message_type" text NOT NULL,
	"category" text DEFAULT 'conversational' NOT NULL,
	"notification_type" text,
	"sender_type" text NOT NULL,
	"sender_id" integer,
	"receiver_type" text,
	"receiver_id" integer,
	"staff_id" integer,
	"sent_by" integer,
	"wl_user_id" integer,
	"content" text,
	"subject" text,
	"from_address" text,
	"to_address" text,
	"cc" jsonb,
	"bcc" jsonb,
	"attachments" jsonb,
	"status" text NOT NULL,
	"provider" text,
	"provider_message_id" text,
	"provider_metadata" jsonb,
	"email_message_id" text,
	"in_reply_to" text,
	"request_id" uuid,
	"response_id" bigint,
	"is_read" boolean DEFAULT false NOT NULL,
	"flagged" boolean DEFAULT false NOT NULL,
	"recording_url" text,
	"call_duration_seconds" integer,
	"call_outcome" text,
	"error_code" text,
	"error_message" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"segments" integer,
	"encoding" text,
	"sent_at" timestamp with time zone DEFAULT now() NOT NULL,
	"status_updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "messages_channel_check" CHECK ("messages"."channel" is null or "messages"."channel" in ('sms', 'email', 'voice')),
	CONSTRAINT "messages_direction_check" CHECK ("messages"."direction" in ('inbound', 'outbound')),
	CONSTRAINT "messages_message_type_check" CHECK ("messages"."message_type" in ('TEXT', 'EMAIL', 'CALL', 'NOTE')),
	CONSTRAINT "messages_category_check" CHECK ("messages"."category" in ('conversational', 'campaign', 'transactional', 'reminder')),
	CONSTRAINT "messages_notification_type_check" CHECK ("messages"."notification_type" is null or "messages"."notification_type" in ('general', 'notification_opt_in', 'appointment_confirmation', 'appointment_reminder', 'review_request', 'marketing')),
	CONSTRAINT "messages_sender_type_check" CHECK ("messages"."sender_type" in ('client', 'staff', 'system')),
	CONSTRAINT "messages_receiver_type_check" CHECK ("messages"."receiver_type" is null or "messages"."receiver_type" in ('client', 'staff', 'system')),
	CONSTRAINT "messages_status_check" CHECK ("messages"."status" in ('initiated', 'queued', 'sending', 'sent', 'delivered', 'read', 'received', 'undelivered', 'failed', 'bounced', 'canceled', 'ringing', 'in_progress', 'completed', 'busy', 'no_answer')),
	CONSTRAINT "messages_provider_check" CHECK ("messages"."provider" is null or "messages"."provider" in ('twilio', 'smtp', 'sendgrid', 'sandbox')),
	CONSTRAINT "messages_note_channel_check" CHECK (("messages"."message_type" = 'NOTE') = ("messages"."channel" is null))
);
--> statement-breakpoint
CREATE TABLE "webhook_events" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "webhook_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"provider" text NOT NULL,
	"kind" text NOT NULL,
	"dedupe_key" text NOT NULL,
	"business_id" integer,
	"headers" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"payload" jsonb NOT NULL,
	"outcome" text DEFAULT 'pending' NOT NULL,
	"error" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"processed_at" timestamp with time zone,
	CONSTRAINT "webhook_events_outcome_check" CHECK ("webhook_events"."outcome" in ('pending', 'processed', 'ignored', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "api_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"key_hash" text NOT NULL,
	"prefix" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "idempotency_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer,
	"caller_scope" text NOT NULL,
	"path" text NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"state" text DEFAULT 'running' NOT NULL,
	"response_status" integer,
	"response_body" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "idempotency_keys_state_check" CHECK ("idempotency_keys"."state" in ('running', 'completed'))
);
--> statement-breakpoint
CREATE TABLE "rate_limit_buckets" (
	"caller_scope" text NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"count" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "sessions_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"staff_id" integer NOT NULL,
	"token_hash" text NOT NULL,
	"ttl_seconds" integer NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sessions_ttl_check" CHECK ("sessions"."ttl_seconds" between 60 and 604800)
);
--> statement-breakpoint
ALTER TABLE "business_email_senders" ADD CONSTRAINT "business_email_senders_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "business_sms_numbers" ADD CONSTRAINT "business_sms_numbers_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "locations" ADD CONSTRAINT "locations_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "staff" ADD CONSTRAINT "staff_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "staff" ADD CONSTRAINT "staff_location_id_locations_id_fk" FOREIGN KEY ("location_id") REFERENCES "public"."locations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "clients" ADD CONSTRAINT "clients_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "clients" ADD CONSTRAINT "clients_location_id_locations_id_fk" FOREIGN KEY ("location_id") REFERENCES "public"."locations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_location_id_locations_id_fk" FOREIGN KEY ("location_id") REFERENCES "public"."locations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_assigned_staff_id_staff_id_fk" FOREIGN KEY ("assigned_staff_id") REFERENCES "public"."staff"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_resolved_by_staff_id_staff_id_fk" FOREIGN KEY ("resolved_by_staff_id") REFERENCES "public"."staff"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_updated_by_staff_id_staff_id_fk" FOREIGN KEY ("updated_by_staff_id") REFERENCES "public"."staff"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_staff_id_staff_id_fk" FOREIGN KEY ("staff_id") REFERENCES "public"."staff"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_events" ADD CONSTRAINT "webhook_events_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_staff_id_staff_id_fk" FOREIGN KEY ("staff_id") REFERENCES "public"."staff"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "business_email_senders_email_key" ON "business_email_senders" USING btree (lower("email"));--> statement-breakpoint
CREATE INDEX "business_email_senders_business_id_idx" ON "business_email_senders" USING btree ("business_id");--> statement-breakpoint
CREATE UNIQUE INDEX "business_sms_numbers_phone_number_key" ON "business_sms_numbers" USING btree ("phone_number");--> statement-breakpoint
CREATE INDEX "business_sms_numbers_business_id_idx" ON "business_sms_numbers" USING btree ("business_id");--> statement-breakpoint
CREATE UNIQUE INDEX "businesses_external_id_key" ON "businesses" USING btree ("external_id");--> statement-breakpoint
CREATE UNIQUE INDEX "locations_business_external_id_key" ON "locations" USING btree ("business_id","external_id");--> statement-breakpoint
CREATE INDEX "locations_business_id_idx" ON "locations" USING btree ("business_id");--> statement-breakpoint
CREATE UNIQUE INDEX "staff_business_external_id_key" ON "staff" USING btree ("business_id","external_id");--> statement-breakpoint
CREATE INDEX "staff_business_name_idx" ON "staff" USING btree ("business_id",lower("name"));--> statement-breakpoint
CREATE UNIQUE INDEX "clients_business_external_id_key" ON "clients" USING btree ("business_id","external_id");--> statement-breakpoint
CREATE INDEX "clients_business_phone_idx" ON "clients" USING btree ("business_id","phone_number");--> statement-breakpoint
CREATE INDEX "clients_business_email_idx" ON "clients" USING btree ("business_id",lower("email"));--> statement-breakpoint
CREATE INDEX "clients_search_trgm_idx" ON "clients" USING gin ((coalesce("name", '') || ' ' || coalesce("email", '') || ' ' || coalesce("phone_number", '')) gin_trgm_ops);--> statement-breakpoint
CREATE UNIQUE INDEX "conversations_business_client_key" ON "conversations" USING btree ("business_id","client_id");--> statement-breakpoint
CREATE INDEX "conversations_business_activity_idx" ON "conversations" USING btree ("business_id","last_activity_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "conversations_business_status_activity_idx" ON "conversations" USING btree ("business_id","status","last_activity_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "conversations_business_assignee_activity_idx" ON "conversations" USING btree ("business_id","assigned_staff_id","last_activity_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "conversations_business_unread_idx" ON "conversations" USING btree ("business_id","last_activity_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "conversations"."unread_count" > 0;--> statement-breakpoint
CREATE INDEX "conversations_snoozed_until_idx" ON "conversations" USING btree ("snoozed_until") WHERE "conversations"."status" = 'snoozed';--> statement-breakpoint
CREATE INDEX "messages_conversation_sent_idx" ON "messages" USING btree ("conversation_id","sent_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "messages_business_request_idx" ON "messages" USING btree ("business_id","request_id") WHERE "messages"."request_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "messages_provider_id_key" ON "messages" USING btree ("provider","provider_message_id");--> statement-breakpoint
CREATE INDEX "messages_business_email_message_id_idx" ON "messages" USING btree ("business_id","email_message_id") WHERE "messages"."email_message_id" is not null;--> statement-breakpoint
CREATE INDEX "messages_content_trgm_idx" ON "messages" USING gin ("business_id","content" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "messages_subject_trgm_idx" ON "messages" USING gin ("business_id","subject" gin_trgm_ops);--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_events_dedupe_key" ON "webhook_events" USING btree ("provider","kind","dedupe_key");--> statement-breakpoint
CREATE INDEX "webhook_events_outcome_idx" ON "webhook_events" USING btree ("outcome","received_at");--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_business_id_idx" ON "api_keys" USING btree ("business_id");--> statement-breakpoint
CREATE UNIQUE INDEX "idempotency_keys_scope_key" ON "idempotency_keys" USING btree ("caller_scope","path","key");--> statement-breakpoint
CREATE INDEX "idempotency_keys_expires_idx" ON "idempotency_keys" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "rate_limit_buckets_pkey_idx" ON "rate_limit_buckets" USING btree ("caller_scope","window_start");--> statement-breakpoint
CREATE INDEX "rate_limit_buckets_window_idx" ON "rate_limit_buckets" USING btree ("window_start");--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_token_hash_key" ON "sessions" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "sessions_staff_idx" ON "sessions" USING btree ("business_id","staff_id");