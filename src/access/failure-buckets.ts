// A23: token buckets of failures shared by every API replica through PostgreSQL (auth_failure_buckets, migration
// 0030), so N replicas allow the profile's budget once, not N times. One statement per take: an upsert that refills
// the bucket by the time since its last write (the database's clock, the same for every replica), takes a token if
// one is there and says whether it did. A take that finds none changes nothing (the refill it stores is what the
// next take would compute anyway), so this process remembers a refused key until a token is due and answers from
// memory meanwhile: a flood from one blocked address costs no writes. Rows whose bucket is full again are pruned.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import type { RateLimit, Take } from '../lib/token-bucket.js';

export interface FailureBuckets {
  /** Spends one token of `scope`'s bucket for `key`, or answers how long until one is there. */
  take(scope: string, key: string, limit: RateLimit): Promise<Take>;
  /** What `take` would answer, without taking. */
  peek(scope: string, key: string, limit: RateLimit): Promise<Take>;
}

const PRUNE_EVERY_MS = 60_000;
const REMEMBERED_MAX = 10_000;

export function createFailureBuckets(deps: { db: Db; namespace?: string; now?: () => number }): FailureBuckets {
  const { db } = deps;
  const namespace = deps.namespace ?? '';
  const now = deps.now ?? (() => performance.now());
  const refusedUntil = new Map<string, number>(); // `${scope}\n${key}` → when this process may ask again
  let prunedAt = -Infinity;

  const prune = () => {
    prunedAt = now();
    db.execute(
      sql`delete from auth_failure_buckets where ctid = any(array(select ctid from auth_failure_buckets where expires_at < now() limit 1000))`,
    ).catch(() => {}); // a missed prune only leaves rows that mean nothing
  };

  return {
    async peek(scope, key, limit) {
      const until = refusedUntil.get(`${scope}\n${key}`);
      if (until !== undefined && until > now()) return { allowed: false, retryAfterMs: Math.ceil(until - now()) };
      const [row] = await db.execute<{ tokens: number }>(sql`
        select least(${limit.burst}::float8, tokens + greatest(0, extract(epoch from now() - updated_at)) * ${limit.per_second}::float8) as tokens
          from auth_failure_buckets where scope = ${namespace + scope} and key = ${key}`);
      const tokens = row ? Number(row.tokens) : limit.burst;
      return tokens >= 1
        ? { allowed: true }
        : { allowed: false, retryAfterMs: Math.max(1, Math.ceil(((1 - tokens) / limit.per_second) * 1000)) };
    },

    async take(scope, key, limit) {
      const remembered = `${scope}\n${key}`;
      const until = refusedUntil.get(remembered);
      if (until !== undefined && until > now()) return { allowed: false, retryAfterMs: Math.ceil(until - now()) };
      refusedUntil.delete(remembered);
      if (now() - prunedAt > PRUNE_EVERY_MS) prune();
      const rate = limit.per_second;
      const burst = limit.burst;
      const refilled = sql`least(${burst}::float8, b.tokens + greatest(0, extract(epoch from now() - b.updated_at)) * ${rate}::float8)`;
      const after = sql`(case when ${refilled} >= 1 then ${refilled} - 1 else ${refilled} end)`;
      const [row] = await db.execute<{ refused: boolean; tokens: number }>(sql`
        insert into auth_failure_buckets as b (scope, key, tokens, updated_at, expires_at, last_refused)
        values (${namespace + scope}, ${key}, ${burst - 1}::float8, now(), now() + make_interval(secs => 1 / ${rate}::float8), false)
        on conflict (scope, key) do update set
          tokens = ${after},
          last_refused = ${refilled} < 1,
          updated_at = now(),
          expires_at = now() + make_interval(secs => (${burst}::float8 - ${after}) / ${rate}::float8)
        returning last_refused as refused, tokens`);
      if (!row || !row.refused) return { allowed: true };
      const retryAfterMs = Math.max(1, Math.ceil(((1 - Number(row.tokens)) / rate) * 1000));
      if (refusedUntil.size >= REMEMBERED_MAX) refusedUntil.delete(refusedUntil.keys().next().value!);
      refusedUntil.set(remembered, now() + retryAfterMs);
      return { allowed: false, retryAfterMs };
    },
  };
}
