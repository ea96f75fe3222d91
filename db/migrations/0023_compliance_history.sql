-- Compliance records keep their history and their dates.
--
-- Opt-out history (docs/api.md#opt-out): every opt-out and opt-in of an address, with who, when,
-- how and why. opt_outs stays the current state the send path probes (one row per opted-out
-- address); suppression.ts appends here in the statement that changes it. The opt-outs in place
-- become the first records of their addresses.
CREATE TABLE "opt_out_events" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "opt_out_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"channel" text NOT NULL,
	"address" text NOT NULL,
	"action" text NOT NULL,
	"source" text NOT NULL,
	"note" text,
	"staff_id" integer,
	"message_id" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "opt_out_events_channel_check" CHECK ("opt_out_events"."channel" in ('sms', 'email')),
	CONSTRAINT "opt_out_events_action_check" CHECK ("opt_out_events"."action" in ('opt_out', 'opt_in')),
	CONSTRAINT "opt_out_events_source_check" CHECK ("opt_out_events"."source" in ('keyword', 'staff', 'provider_error', 'api', 'import', 'migrated', 'in_person', 'phone_call', 'paper_form', 'web_form', 'email', 'text_message')),
	CONSTRAINT "opt_out_events_note_check" CHECK ("opt_out_events"."note" is null or char_length("opt_out_events"."note") <= 2000)
);
--> statement-breakpoint
ALTER TABLE "opt_out_events" ADD CONSTRAINT "opt_out_events_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "opt_out_events" ADD CONSTRAINT "opt_out_events_staff_fk" FOREIGN KEY ("business_id","staff_id") REFERENCES "public"."staff"("business_id","id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
-- SET NULL of message_id only, as for opt_outs (0010): the record outlives the message it names.
ALTER TABLE "opt_out_events" ADD CONSTRAINT "opt_out_events_message_fk" FOREIGN KEY ("business_id","message_id") REFERENCES "public"."messages"("business_id","id") ON DELETE SET NULL ("message_id") ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "opt_out_events_address_idx" ON "opt_out_events" USING btree ("business_id","channel","address","id" DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX "opt_out_events_message_idx" ON "opt_out_events" USING btree ("business_id","message_id") WHERE "opt_out_events"."message_id" is not null;
--> statement-breakpoint
INSERT INTO "opt_out_events" ("business_id", "channel", "address", "action", "source", "message_id", "created_at")
SELECT "business_id", "channel", "address", 'opt_out', "source", "message_id", "created_at" FROM "opt_outs" ORDER BY "created_at", "id";
--> statement-breakpoint
-- A consent record dated after it was made (up to 5 minutes of "clock skew" used to be accepted)
-- outranked every withdrawal made until its date, for good: such records are dated when they were
-- made, and the database refuses them from now on (docs/api.md#consent).
UPDATE "consents" SET "recorded_at" = "created_at" WHERE "recorded_at" > "created_at";
--> statement-breakpoint
ALTER TABLE "consents" ADD CONSTRAINT "consents_recorded_at_check" CHECK ("consents"."recorded_at" <= "consents"."created_at");
