-- MMS uploads (docs/api.md#mms-uploads): pictures a business uploads, bytes kept here so any web
-- process serves them (to Twilio through a signed, expiring URL; to the business's staff). The
-- bounds are CHECKs, so no writer can store what the upload endpoint would refuse.
CREATE TABLE "media_uploads" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_uploads_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"business_id" integer NOT NULL,
	"content_type" text NOT NULL,
	"size_bytes" integer NOT NULL,
	"sha256" text NOT NULL,
	"filename" text,
	"bytes" "bytea" NOT NULL,
	"uploaded_by" text NOT NULL,
	"staff_id" integer,
	"api_key_id" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "media_uploads_content_type_check" CHECK ("media_uploads"."content_type" in ('image/jpeg', 'image/png', 'image/gif')),
	CONSTRAINT "media_uploads_size_check" CHECK ("media_uploads"."size_bytes" between 1 and 5000000 and octet_length("media_uploads"."bytes") = "media_uploads"."size_bytes"),
	CONSTRAINT "media_uploads_sha256_check" CHECK ("media_uploads"."sha256" ~ '^[0-9a-f]{64}$'),
	CONSTRAINT "media_uploads_filename_check" CHECK ("media_uploads"."filename" is null or char_length("media_uploads"."filename") between 1 and 255),
	CONSTRAINT "media_uploads_uploaded_by_check" CHECK ("media_uploads"."uploaded_by" in ('platform', 'api_key', 'staff')),
	CONSTRAINT "media_uploads_staff_check" CHECK (("media_uploads"."uploaded_by" = 'staff') = ("media_uploads"."staff_id" is not null))
);
--> statement-breakpoint
ALTER TABLE "media_uploads" ADD CONSTRAINT "media_uploads_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_uploads" ADD CONSTRAINT "media_uploads_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_uploads" ADD CONSTRAINT "media_uploads_staff_fk" FOREIGN KEY ("business_id","staff_id") REFERENCES "public"."staff"("business_id","id") ON DELETE no action ON UPDATE no action;