-- Consent records (docs/api.md#consent) and the conversation's pending possible opt-out
-- (docs/api.md#opt-out-wording). Texts already flagged as likely opt-outs become pending.
CREATE TABLE "consents" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "consents_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"client_id" integer NOT NULL,
	"channel" text NOT NULL,
	"purpose" text NOT NULL,
	"status" text NOT NULL,
	"source" text NOT NULL,
	"note" text,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	"recorded_by_staff_id" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "consents_channel_check" CHECK ("consents"."channel" in ('sms', 'email')),
	CONSTRAINT "consents_purpose_check" CHECK ("consents"."purpose" in ('transactional', 'marketing')),
	CONSTRAINT "consents_status_check" CHECK ("consents"."status" in ('given', 'withdrawn')),
	CONSTRAINT "consents_source_check" CHECK ("consents"."source" in ('web_form', 'in_person', 'phone_call', 'paper_form', 'keyword', 'import', 'api', 'staff')),
	CONSTRAINT "consents_note_check" CHECK ("consents"."note" is null or char_length("consents"."note") <= 2000)
);
--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "possible_opt_out_message_id" bigint;--> statement-breakpoint
ALTER TABLE "consents" ADD CONSTRAINT "consents_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "consents" ADD CONSTRAINT "consents_client_fk" FOREIGN KEY ("business_id","client_id") REFERENCES "public"."clients"("business_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "consents" ADD CONSTRAINT "consents_recorded_by_staff_fk" FOREIGN KEY ("business_id","recorded_by_staff_id") REFERENCES "public"."staff"("business_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "consents_current_idx" ON "consents" USING btree ("business_id","client_id","channel","purpose","recorded_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "conversations_business_possible_opt_out_idx" ON "conversations" USING btree ("business_id","last_activity_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "conversations"."possible_opt_out_message_id" is not null;--> statement-breakpoint
UPDATE "conversations" c SET "possible_opt_out_message_id" = latest.id
FROM (
  SELECT DISTINCT ON (m.conversation_id) m.conversation_id, m.id FROM "messages" m
  WHERE m.flagged AND m.direction = 'inbound' AND m.provider_metadata->>'keyword_class' = 'likely_opt_out'
  ORDER BY m.conversation_id, m.id DESC
) latest
WHERE latest.conversation_id = c.id;
