-- MMS uploads get a meter (docs/api.md#mms-uploads): their bytes are stored once per business and
-- content (media_contents, keyed by SHA-256; each upload keeps its own id and refers to them),
-- what a business stores is counted against MEDIA_STORAGE_QUOTA_BYTES (media_storage, whose row is
-- also the lock every writer of the business's contents takes first), and an upload no message has
-- named (attached_at null) is deleted by the worker's maintenance a day after it was made.
CREATE TABLE "media_contents" (
	"business_id" integer NOT NULL,
	"sha256" text NOT NULL,
	"size_bytes" integer NOT NULL,
	"bytes" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "media_contents_pkey" PRIMARY KEY("business_id","sha256"),
	CONSTRAINT "media_contents_size_check" CHECK ("media_contents"."size_bytes" between 1 and 5000000 and octet_length("media_contents"."bytes") = "media_contents"."size_bytes"),
	CONSTRAINT "media_contents_sha256_check" CHECK ("media_contents"."sha256" ~ '^[0-9a-f]{64}$')
);
--> statement-breakpoint
ALTER TABLE "media_contents" ADD CONSTRAINT "media_contents_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE TABLE "media_storage" (
	"business_id" integer PRIMARY KEY NOT NULL,
	"stored_bytes" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "media_storage_stored_bytes_check" CHECK ("media_storage"."stored_bytes" >= 0)
);
--> statement-breakpoint
ALTER TABLE "media_storage" ADD CONSTRAINT "media_storage_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- The uploads so far: each distinct content once (the bytes of equal hashes are equal), counted.
INSERT INTO "media_contents" ("business_id", "sha256", "size_bytes", "bytes", "created_at")
  SELECT DISTINCT ON ("business_id", "sha256") "business_id", "sha256", "size_bytes", "bytes", "created_at"
  FROM "media_uploads" ORDER BY "business_id", "sha256", "created_at";--> statement-breakpoint
INSERT INTO "media_storage" ("business_id", "stored_bytes")
  SELECT "business_id", sum("size_bytes") FROM "media_contents" GROUP BY "business_id";--> statement-breakpoint
ALTER TABLE "media_uploads" ADD COLUMN "attached_at" timestamp with time zone;--> statement-breakpoint
-- Uploads a message already names are attached (one pass over the messages that have attachments),
-- so the cleanup deletes only those never sent.
UPDATE "media_uploads" u SET "attached_at" = u."created_at"
  FROM (
    SELECT DISTINCT m."business_id", (a->>'media_id')::integer AS "media_id"
    FROM "messages" m, jsonb_array_elements(m."attachments") a
    WHERE m."attachments" IS NOT NULL AND jsonb_typeof(m."attachments") = 'array' AND a ? 'media_id'
  ) named
  WHERE u."business_id" = named."business_id" AND u."id" = named."media_id";--> statement-breakpoint
ALTER TABLE "media_uploads" DROP CONSTRAINT "media_uploads_size_check";--> statement-breakpoint
ALTER TABLE "media_uploads" ADD CONSTRAINT "media_uploads_size_check" CHECK ("media_uploads"."size_bytes" between 1 and 5000000);--> statement-breakpoint
ALTER TABLE "media_uploads" DROP COLUMN "bytes";--> statement-breakpoint
ALTER TABLE "media_uploads" ADD CONSTRAINT "media_uploads_content_fk" FOREIGN KEY ("business_id","sha256") REFERENCES "public"."media_contents"("business_id","sha256") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "media_uploads_content_idx" ON "media_uploads" USING btree ("business_id","sha256");--> statement-breakpoint
-- The cleanup's scan: uploads no message has named, oldest first.
CREATE INDEX "media_uploads_unattached_idx" ON "media_uploads" USING btree ("created_at") WHERE "media_uploads"."attached_at" is null;
