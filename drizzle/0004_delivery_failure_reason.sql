-- R4: why a delivery cycle stopped without a merchant answer (a non-retryable error such as a missing signing secret).
ALTER TABLE "deliveries" ADD COLUMN "failure_reason" text;
