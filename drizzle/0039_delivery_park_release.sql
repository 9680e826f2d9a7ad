-- P15/R20: the attempt number of a parked retry that the endpoint's probe released, written before the probe signals
-- the retry's workflow. The attempt is sent without parking only when this matches its number, so a `parkReleased`
-- signal sent straight to Temporal (not the probe's) wakes the workflow and releases nothing.
ALTER TABLE "deliveries" ADD COLUMN IF NOT EXISTS "released_attempt" integer;
