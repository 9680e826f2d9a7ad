-- P13: a delivery fanned out while its endpoint's circuit is open waits here, with no workflow and no POST, until the
-- endpoint's probe workflow (src/workflows/endpoint-probe.ts) releases it at the recovery ramp's rate.
ALTER TABLE "deliveries" ADD COLUMN IF NOT EXISTS "parked_since" timestamptz;
CREATE INDEX IF NOT EXISTS "deliveries_parked_idx" ON "deliveries" ("endpoint_id", "created_at") WHERE parked_since IS NOT NULL;
