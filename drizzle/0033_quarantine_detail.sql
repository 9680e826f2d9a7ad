-- O21: the schema path and message of a message the catalog check refused (src/catalog/validate.ts).
ALTER TABLE "quarantined_messages" ADD COLUMN IF NOT EXISTS "detail" text;
