CREATE TABLE "review_request_cooldowns" (
	"business_id" integer NOT NULL,
	"client_id" integer NOT NULL,
	"requested_at" timestamp with time zone NOT NULL,
	"message_id" bigint,
	CONSTRAINT "review_request_cooldowns_pkey" PRIMARY KEY("business_id","client_id")
);
--> statement-breakpoint
CREATE TABLE "review_requests" (
	"business_id" integer NOT NULL,
	"message_id" bigint PRIMARY KEY NOT NULL,
	"appointment_id" integer NOT NULL,
	"client_id" integer NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "review_request_cooldowns" ADD CONSTRAINT "review_request_cooldowns_client_fk" FOREIGN KEY ("business_id","client_id") REFERENCES "public"."clients"("business_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_requests" ADD CONSTRAINT "review_requests_appointment_fk" FOREIGN KEY ("business_id","appointment_id") REFERENCES "public"."appointments"("business_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_requests" ADD CONSTRAINT "review_requests_message_fk" FOREIGN KEY ("business_id","message_id") REFERENCES "public"."messages"("business_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "review_requests_once_key" ON "review_requests" USING btree ("business_id","appointment_id") WHERE "review_requests"."active";--> statement-breakpoint
CREATE INDEX "review_requests_appointment_idx" ON "review_requests" USING btree ("business_id","appointment_id");