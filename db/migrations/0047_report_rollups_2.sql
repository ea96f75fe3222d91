-- Reports read from rollups instead of every row of their range (docs/architecture.md#reports,
-- docs/performance.md#benchreports): per-day counts for volumes, per-day and per-week histograms of
-- the time figures for medians and p90, each day's and week's exact figures, the messages counted
-- (so a change is counted once), and per business the zones they are counted in. report_bucket is
-- the histogram bucket of a time figure: the value's IEEE 754 bits shifted right by 46 (sign,
-- exponent and the first 6 bits of the mantissa: 64 buckets per doubling, monotone in the value),
-- 0 for zero. SQL-standard body, so the indexes on it match the reads that use it. The open cycle
-- gets where its recount resumes.
CREATE FUNCTION report_bucket(v double precision) RETURNS integer LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN CASE WHEN v > 0 THEN (('x' || encode(float8send(v), 'hex'))::bit(64)::bigint >> 46)::integer ELSE 0 END;
--> statement-breakpoint
CREATE TABLE "report_day_counts" (
	"business_id" integer NOT NULL,
	"local" boolean NOT NULL,
	"day" date NOT NULL,
	"location_id" integer NOT NULL,
	"staff_id" integer NOT NULL,
	"channel" text NOT NULL,
	"opened" integer DEFAULT 0 NOT NULL,
	"resolved" integer DEFAULT 0 NOT NULL,
	"messages_in" integer DEFAULT 0 NOT NULL,
	"messages_out" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "report_histograms" (
	"business_id" integer NOT NULL,
	"local" boolean NOT NULL,
	"dims" smallint NOT NULL,
	"week" boolean NOT NULL,
	"period" date NOT NULL,
	"figure" text NOT NULL,
	"business" boolean NOT NULL,
	"location_id" integer NOT NULL,
	"staff_id" integer NOT NULL,
	"channel" text NOT NULL,
	"bucket" integer NOT NULL,
	"n" integer NOT NULL,
	CONSTRAINT "report_histograms_figure_check" CHECK ("report_histograms"."figure" in ('first_response', 'reply', 'resolution'))
);
--> statement-breakpoint
CREATE TABLE "report_messages" (
	"message_id" bigint PRIMARY KEY NOT NULL,
	"business_id" integer NOT NULL,
	"conversation_id" integer NOT NULL,
	"location_id" integer,
	"staff_id" integer,
	"channel" text NOT NULL,
	"inbound" boolean NOT NULL,
	"sent_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "report_period_stats" (
	"business_id" integer NOT NULL,
	"week" boolean NOT NULL,
	"period" date NOT NULL,
	"figure" text NOT NULL,
	"count" integer NOT NULL,
	"median_seconds" double precision NOT NULL,
	"p90_seconds" double precision NOT NULL,
	"median_business_seconds" double precision NOT NULL,
	"p90_business_seconds" double precision NOT NULL,
	CONSTRAINT "report_period_stats_business_id_week_period_figure_pk" PRIMARY KEY("business_id","week","period","figure"),
	CONSTRAINT "report_period_stats_figure_check" CHECK ("report_period_stats"."figure" in ('first_response', 'reply', 'resolution'))
);
--> statement-breakpoint
CREATE TABLE "report_rollups" (
	"business_id" integer PRIMARY KEY NOT NULL,
	"zones" text NOT NULL,
	"ready" boolean NOT NULL,
	"built_until" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "report_cycles" ADD COLUMN "last_message_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "report_cycles" ADD COLUMN "last_message_id" bigint;--> statement-breakpoint
ALTER TABLE "report_cycles" ADD COLUMN "waiting_message_id" bigint;--> statement-breakpoint
ALTER TABLE "report_cycles" ADD COLUMN "waiting_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "report_cycles" ADD COLUMN "waiting_channel" text;--> statement-breakpoint
ALTER TABLE "report_day_counts" ADD CONSTRAINT "report_day_counts_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "report_histograms" ADD CONSTRAINT "report_histograms_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "report_messages" ADD CONSTRAINT "report_messages_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "report_messages" ADD CONSTRAINT "report_messages_conversation_fk" FOREIGN KEY ("business_id","conversation_id") REFERENCES "public"."conversations"("business_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "report_period_stats" ADD CONSTRAINT "report_period_stats_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "report_rollups" ADD CONSTRAINT "report_rollups_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "report_day_counts_key" ON "report_day_counts" USING btree ("business_id","local","day","location_id","staff_id","channel");--> statement-breakpoint
CREATE UNIQUE INDEX "report_histograms_key" ON "report_histograms" USING btree ("business_id","local","dims","week","period","figure","business","location_id","staff_id","channel","bucket");--> statement-breakpoint
CREATE INDEX "report_messages_business_sent_idx" ON "report_messages" USING btree ("business_id","sent_at","location_id","staff_id","channel","inbound");--> statement-breakpoint
CREATE INDEX "report_messages_conversation_idx" ON "report_messages" USING btree ("business_id","conversation_id");--> statement-breakpoint
CREATE INDEX "report_cycles_business_resolved_idx" ON "report_cycles" USING btree ("business_id","resolved_at") WHERE "report_cycles"."resolved_at" is not null;--> statement-breakpoint
CREATE INDEX "report_cycles_first_response_bucket_idx" ON "report_cycles" USING btree ("business_id",report_bucket("first_response_seconds"),"first_response_seconds","started_at","location_id","first_reply_staff_id","channel") WHERE "report_cycles"."first_response_seconds" is not null;--> statement-breakpoint
CREATE INDEX "report_cycles_first_response_business_bucket_idx" ON "report_cycles" USING btree ("business_id",report_bucket("first_response_business_seconds"),"first_response_business_seconds","started_at","location_id","first_reply_staff_id","channel") WHERE "report_cycles"."first_response_business_seconds" is not null;--> statement-breakpoint
CREATE INDEX "report_cycles_resolution_bucket_idx" ON "report_cycles" USING btree ("business_id",report_bucket("resolution_seconds"),"resolution_seconds","started_at","location_id","resolved_by_staff_id","channel") WHERE "report_cycles"."resolution_seconds" is not null;--> statement-breakpoint
CREATE INDEX "report_cycles_resolution_business_bucket_idx" ON "report_cycles" USING btree ("business_id",report_bucket("resolution_business_seconds"),"resolution_business_seconds","started_at","location_id","resolved_by_staff_id","channel") WHERE "report_cycles"."resolution_business_seconds" is not null;--> statement-breakpoint
CREATE INDEX "report_replies_bucket_idx" ON "report_replies" USING btree ("business_id",report_bucket("seconds"),"seconds","waiting_since","location_id","staff_id","channel");--> statement-breakpoint
CREATE INDEX "report_replies_business_bucket_idx" ON "report_replies" USING btree ("business_id",report_bucket("business_seconds"),"business_seconds","waiting_since","location_id","staff_id","channel");--> statement-breakpoint
ALTER TABLE "report_cycles" ADD CONSTRAINT "report_cycles_waiting_channel_check" CHECK ("report_cycles"."waiting_channel" is null or "report_cycles"."waiting_channel" in ('sms', 'email'));--> statement-breakpoint
-- Every business there is has its rollups to count: until `npm run reports:recount` has, its
-- reports read the rows themselves (exact, slower). A business made later starts with empty ones.
INSERT INTO "report_rollups" ("business_id", "zones", "ready") SELECT "id", '', false FROM "businesses";
