-- Reports (docs/api.md#reports): durable cycles, reply times and missed calls, written by the event
-- log's `reports` handler (server/services/reports/handler.ts). History that predates the handler is
-- recounted from messages and conversation_activities by recountBusinessReports (the same code).
CREATE TABLE "report_cycles" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "report_cycles_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"conversation_id" integer NOT NULL,
	"location_id" integer,
	"channel" text NOT NULL,
	"start_message_id" bigint NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"client_messages" integer NOT NULL,
	"replies" integer NOT NULL,
	"first_reply_message_id" bigint,
	"first_reply_at" timestamp with time zone,
	"first_reply_staff_id" integer,
	"first_response_seconds" double precision,
	"first_response_business_seconds" double precision,
	"resolved_at" timestamp with time zone,
	"resolved_by_staff_id" integer,
	"resolution_seconds" double precision,
	"resolution_business_seconds" double precision,
	CONSTRAINT "report_cycles_channel_check" CHECK ("report_cycles"."channel" in ('sms', 'email'))
);
--> statement-breakpoint
CREATE TABLE "report_missed_calls" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "report_missed_calls_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"conversation_id" integer NOT NULL,
	"location_id" integer,
	"call_message_id" bigint NOT NULL,
	"called_at" timestamp with time zone NOT NULL,
	"outcome" text NOT NULL,
	"answered_message_id" bigint,
	"answered_at" timestamp with time zone,
	"answered_by" text,
	"answered_staff_id" integer,
	"seconds" double precision,
	"business_seconds" double precision,
	CONSTRAINT "report_missed_calls_outcome_check" CHECK ("report_missed_calls"."outcome" in ('missed', 'voicemail')),
	CONSTRAINT "report_missed_calls_answered_by_check" CHECK ("report_missed_calls"."answered_by" is null or "report_missed_calls"."answered_by" in ('call', 'sms', 'email'))
);
--> statement-breakpoint
CREATE TABLE "report_replies" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "report_replies_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"cycle_id" bigint NOT NULL,
	"conversation_id" integer NOT NULL,
	"location_id" integer,
	"channel" text NOT NULL,
	"waiting_message_id" bigint NOT NULL,
	"waiting_since" timestamp with time zone NOT NULL,
	"reply_message_id" bigint NOT NULL,
	"replied_at" timestamp with time zone NOT NULL,
	"staff_id" integer,
	"seconds" double precision NOT NULL,
	"business_seconds" double precision NOT NULL
);
--> statement-breakpoint
ALTER TABLE "report_cycles" ADD CONSTRAINT "report_cycles_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "report_cycles" ADD CONSTRAINT "report_cycles_conversation_fk" FOREIGN KEY ("business_id","conversation_id") REFERENCES "public"."conversations"("business_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "report_missed_calls" ADD CONSTRAINT "report_missed_calls_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "report_missed_calls" ADD CONSTRAINT "report_missed_calls_conversation_fk" FOREIGN KEY ("business_id","conversation_id") REFERENCES "public"."conversations"("business_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "report_replies" ADD CONSTRAINT "report_replies_cycle_id_report_cycles_id_fk" FOREIGN KEY ("cycle_id") REFERENCES "public"."report_cycles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "report_cycles_business_started_idx" ON "report_cycles" USING btree ("business_id","started_at");--> statement-breakpoint
CREATE INDEX "report_cycles_conversation_idx" ON "report_cycles" USING btree ("business_id","conversation_id","started_at");--> statement-breakpoint
CREATE INDEX "report_missed_calls_business_called_idx" ON "report_missed_calls" USING btree ("business_id","called_at");--> statement-breakpoint
CREATE INDEX "report_missed_calls_conversation_idx" ON "report_missed_calls" USING btree ("business_id","conversation_id","called_at");--> statement-breakpoint
CREATE INDEX "report_replies_business_waiting_idx" ON "report_replies" USING btree ("business_id","waiting_since");--> statement-breakpoint
CREATE INDEX "report_replies_cycle_idx" ON "report_replies" USING btree ("cycle_id");