-- A business's messages newest first. Business-wide search walks it for terms common among the
-- newest messages (server/services/search.ts, shape `walk`), stopping once it has the page and the
-- capped total; rare terms keep using the trigram indexes.
CREATE INDEX "messages_business_sent_idx" ON "messages" USING btree ("business_id","sent_at" DESC NULLS LAST,"id" DESC NULLS LAST);
