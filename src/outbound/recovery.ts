// P12: an endpoint's recovery ramp. When an endpoint whose every attempt failed for outbound.recovery.ramp_after
// answers 2xx again, recovering_since is set (in the statement that ends its O13 streak); from then its send rate is
// ramp_start_per_second, doubled every ramp_interval, until it reaches the endpoint's configured or learnt rate (M5,
// O18) or, unthrottled, ramp_max_per_second, where the ramp ends. The ramp is a rate like the throttle's: M5's durable
// slots (./throttle.ts) space the backlog's attempts by it, evaluated at each slot's time, so slots booked ahead
// follow the doubling. rampRate is the rule in TypeScript; the SQL below is the same rule on the endpoint row.
import { sql, type SQL } from 'drizzle-orm';
import type { Profile } from '../config/profile.js';
import { webhookEndpoints } from '../db/schema/index.js';
import { throttleRateSql } from './receiver-signals.js';

export type RecoverySettings = Profile['outbound']['recovery'];

/** Doublings past this change nothing (2^40 × the smallest start is past any cap) and keep power() finite. */
const MAX_STEPS = 40;

/**
 * The rate `elapsedMs` after recovery with `capPerSecond` the endpoint's own rate (null = unthrottled): the ramp's
 * rate while it is below the cap (ramp_max_per_second when unthrottled), then the cap itself (null: unthrottled again).
 */
export function rampRate(elapsedMs: number, r: RecoverySettings, capPerSecond: number | null): number | null {
  const steps = Math.min(MAX_STEPS, Math.floor(Math.max(0, elapsedMs) / r.ramp_interval));
  const rate = r.ramp_start_per_second * 2 ** steps;
  return rate < (capPerSecond ?? r.ramp_max_per_second) ? rate : capPerSecond;
}

/** When the ramp ends (ms after recovery): the first doubling that reaches the cap. */
export function rampLengthMs(r: RecoverySettings, capPerSecond: number | null): number {
  const cap = capPerSecond ?? r.ramp_max_per_second;
  let steps = 0; // counted as rampRate doubles (no log2 rounding)
  while (steps < MAX_STEPS && r.ramp_start_per_second * 2 ** steps < cap) steps += 1;
  return steps * r.ramp_interval;
}

/** The ramp's rate at `at` (a timestamptz expression), or null when the endpoint is not recovering (or the ramp is off). */
function rampAt(at: SQL, r: RecoverySettings): SQL {
  if (!r.ramp) return sql`null::float8`;
  return sql`(case when ${webhookEndpoints.recoveringSince} is not null then ${r.ramp_start_per_second}::float8 * power(2::float8, least(${MAX_STEPS}, floor(greatest(0, extract(epoch from (${at} - ${webhookEndpoints.recoveringSince})) * 1000) / ${r.ramp_interval}))::float8) end)`;
}

/** The ramp at `at` below `cap` (an expression, null = unthrottled), else `cap`. */
function capped(at: SQL, r: RecoverySettings, cap: SQL): SQL {
  const ramp = rampAt(at, r);
  return sql`(case when ${ramp} < coalesce(${cap}, ${r.ramp_max_per_second}::float8) then ${ramp} else (${cap})::float8 end)`;
}

/**
 * M5 with O18 and P12: the rate the throttle applies at `at` (default now): the operator's rate, a running 429
 * backoff (both as of now) and the recovery ramp (as of `at`); null = unthrottled.
 */
export const sendRateSql = (r: RecoverySettings, at: SQL = sql`clock_timestamp()`): SQL<number | null> =>
  capped(at, r, throttleRateSql()) as SQL<number | null>;

/** P1 routing: the configured rate, or the ramp's while it runs (a ramping endpoint's first attempts need a workflow). */
export const routingRateSql = (r: RecoverySettings): SQL<number | null> =>
  capped(sql`clock_timestamp()`, r, sql`${webhookEndpoints.rateLimitPerSecond}`) as SQL<number | null>;

/**
 * The assignment that starts a ramp, for the statement that ends an O13 streak (the SET list sees the row as it was:
 * `failing_since` is the streak's start). Empty when the ramp is off.
 */
export function recoveryStartSql(r: RecoverySettings | undefined): SQL {
  if (!r?.ramp) return sql``;
  return sql`, recovering_since = case when failing_since <= clock_timestamp() - make_interval(secs => ${r.ramp_after / 1000}) then clock_timestamp() else recovering_since end`;
}
