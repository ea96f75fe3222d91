-- Saved replies (docs/api.md#saved-replies): per business, a title unique ignoring case, a body with
-- {{variables}}, an optional channel, and a subject for email-only replies. Bounds are CHECKs so
-- no writer can store a reply the API would refuse.
CREATE TABLE "saved_replies" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "saved_replies_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"channel" text,
	"subject" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "saved_replies_channel_check" CHECK ("saved_replies"."channel" is null or "saved_replies"."channel" in ('sms', 'email')),
	CONSTRAINT "saved_replies_title_check" CHECK (char_length("saved_replies"."title") between 1 and 100),
	CONSTRAINT "saved_replies_body_check" CHECK (char_length("saved_replies"."body") between 1 and (case when "saved_replies"."channel" = 'email' then 20000 else 1600 end)),
	CONSTRAINT "saved_replies_subject_check" CHECK ("saved_replies"."subject" is null or ("saved_replies"."channel" = 'email' and char_length("saved_replies"."subject") between 1 and 998))
);
--> statement-breakpoint
ALTER TABLE "saved_replies" ADD CONSTRAINT "saved_replies_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "saved_replies_business_title_key" ON "saved_replies" USING btree ("business_id",lower("title"));