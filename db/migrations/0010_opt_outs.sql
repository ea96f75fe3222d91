-- Opt-outs by business and address (docs/api.md#opt-out): a number or email address that opted
-- out stays suppressed whichever client row carries it. The old per-client flags are carried over
-- (source 'migrated'), then dropped: the API and the inbox derive them from opt_outs by address.
--
-- messages gets its (business_id, id) key first, for opt_outs.message_id. On a large production
-- messages table, build it beforehand without blocking writes:
--   CREATE UNIQUE INDEX CONCURRENTLY messages_business_id_id_key ON messages (business_id, id);
-- and this ADD CONSTRAINT becomes ... UNIQUE USING INDEX messages_business_id_id_key.
ALTER TABLE "messages" ADD CONSTRAINT "messages_business_id_id_key" UNIQUE("business_id","id");
--> statement-breakpoint
CREATE TABLE "opt_outs" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "opt_outs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"channel" text NOT NULL,
	"address" text NOT NULL,
	"source" text NOT NULL,
	"message_id" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "opt_outs_channel_check" CHECK ("opt_outs"."channel" in ('sms', 'email')),
	CONSTRAINT "opt_outs_source_check" CHECK ("opt_outs"."source" in ('keyword', 'staff', 'provider_error', 'api', 'import', 'migrated'))
);
--> statement-breakpoint
ALTER TABLE "opt_outs" ADD CONSTRAINT "opt_outs_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- SET NULL of message_id only (PostgreSQL 15+): the opt-out outlives the message that caused it
-- (deleted with its client), and business_id stays.
ALTER TABLE "opt_outs" ADD CONSTRAINT "opt_outs_message_fk" FOREIGN KEY ("business_id","message_id") REFERENCES "public"."messages"("business_id","id") ON DELETE SET NULL ("message_id") ON UPDATE no action;
--> statement-breakpoint
CREATE UNIQUE INDEX "opt_outs_business_channel_address_key" ON "opt_outs" USING btree ("business_id","channel","address");
--> statement-breakpoint
CREATE INDEX "opt_outs_message_idx" ON "opt_outs" USING btree ("business_id","message_id") WHERE "opt_outs"."message_id" is not null;
--> statement-breakpoint
INSERT INTO "opt_outs" ("business_id", "channel", "address", "source")
SELECT DISTINCT "business_id", 'sms', "phone_number", 'migrated' FROM "clients"
WHERE "opted_out_sms" AND "phone_number" IS NOT NULL AND "phone_number" <> ''
UNION
SELECT DISTINCT "business_id", 'email', lower("email"), 'migrated' FROM "clients"
WHERE "opted_out_email" AND "email" IS NOT NULL AND "email" <> ''
ON CONFLICT DO NOTHING;
--> statement-breakpoint
ALTER TABLE "clients" DROP COLUMN "opted_out_sms";
--> statement-breakpoint
ALTER TABLE "clients" DROP COLUMN "opted_out_email";
