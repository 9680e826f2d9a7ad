-- P14: a merchant's deliveries in id order. Without it a merchant-scoped list (the portal, a merchant key, a count of
-- one merchant's deliveries) walked the whole table: with 5.8 M deliveries a count for one merchant was a parallel
-- sequential scan (bench:outage's sampler, once a second, cost PostgreSQL half a core).
CREATE INDEX IF NOT EXISTS "deliveries_merchant_idx" ON "deliveries" ("merchant_account", "id");
