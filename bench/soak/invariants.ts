// The end-state checks of the soak (R11), run once traffic stopped, the settle period ended and the app processes
// shut down (so nothing moves while they run). Each returns a line for the report and whether it held.
import type { Sql } from 'postgres';
import type { MerchantPost } from './merchants.js';
import type { AckedWebhook } from './inbound.js';
import type { SoakEndpoint } from './outbound.js';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface Fault {
  target: string;
  at: number;
  /** A service: when its kill was made, when the stack script was asked to bring it back, and when it answered again. */
  downAt?: number;
  restartAt?: number;
  backAt?: number;
}

export const FAULTS_INTERRUPTING_ATTEMPTS = new Set(['worker', 'dispatcher', 'postgresql', 'temporal']);

export async function inboundChecks(sql: Sql, acked: AckedWebhook[]): Promise<Check[]> {
  const ids = acked.map((a) => `reconcile:${a.provider}:${a.eventId}`);
  const rows = await sql<{ id: string; state: string; payment_reference: string; ledger_transaction_id: string | null; terminal: number; postings: number }[]>`
    select r.id, r.state, r.payment_reference, r.ledger_transaction_id,
           (select count(*)::int from reconciliation_transitions t where t.reconciliation_id = r.id
              and t.to_state in ('applied', 'rejected', 'manual_review')) as terminal,
           (select count(*)::int from ledger_transactions l where l.payment_reference = r.payment_reference) as postings
      from reconciliations r where r.id = any(${ids})`;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const missing = ids.filter((id) => !byId.has(id)).length;
  const unsettled = rows.filter((r) => !['applied', 'rejected', 'manual_review'].includes(r.state));
  const notOnce = rows.filter((r) => r.terminal !== 1 && ['applied', 'rejected', 'manual_review'].includes(r.state));
  const badPostings = rows.filter((r) => (r.state === 'applied' ? r.postings !== 1 || !r.ledger_transaction_id : r.postings !== 0));
  const count = (state: string) => rows.filter((r) => r.state === state).length;
  return [
    {
      name: 'every acknowledged webhook reconciled or in manual review exactly once',
      ok: missing === 0 && unsettled.length === 0 && notOnce.length === 0 && badPostings.length === 0,
      detail: `${acked.length} acknowledged: ${count('applied')} applied, ${count('rejected')} rejected, ${count('manual_review')} manual_review; ` +
        `missing ${missing}, unsettled ${unsettled.length}, terminal state reached ≠ once ${notOnce.length}, wrong number of postings ${badPostings.length}` +
        (badPostings.length ? ` (e.g. ${badPostings[0]!.payment_reference}: ${badPostings[0]!.postings} postings, state ${badPostings[0]!.state})` : ''),
    },
  ];
}

export async function ledgerChecks(sql: Sql): Promise<Check[]> {
  const currencies = await sql<{ currency: string; total: string; entries: number }[]>`
    select currency, sum(amount_minor)::text as total, count(*)::int as entries from ledger_entries group by currency order by currency`;
  const [keys] = await sql<{ n: number }[]>`
    select count(*)::int as n from (select idempotency_key from ledger_transactions group by idempotency_key having count(*) > 1) t`;
  const [unbalanced] = await sql<{ n: number }[]>`
    select count(*)::int as n from (select transaction_id from ledger_entries group by transaction_id having sum(amount_minor) <> 0) t`;
  const [unaudited] = await sql<{ n: number }[]>`
    select count(*)::int as n from ledger_transactions l
     where not exists (select 1 from reconciliations r where r.ledger_transaction_id = l.id)
       and not exists (select 1 from operator_resolutions o where o.ledger_transaction_id = l.id)`;
  const [transactions] = await sql<{ n: number }[]>`select count(*)::int as n from ledger_transactions`;
  return [
    {
      name: 'ledger balanced per currency',
      ok: currencies.every((c) => c.total === '0') && unbalanced!.n === 0,
      detail: currencies.map((c) => `${c.currency} ${c.total} over ${c.entries} entries`).join(', ') + `; unbalanced transactions ${unbalanced!.n}`,
    },
    { name: 'every idempotency key posted once', ok: keys!.n === 0, detail: `${transactions!.n} transactions, keys posted twice ${keys!.n}` },
    { name: 'every ledger transaction has its audit (reconciliation or resolution)', ok: unaudited!.n === 0, detail: `unaudited ${unaudited!.n}` },
  ];
}

interface DeliveryRow {
  id: string;
  event_public_id: string;
  endpoint_id: string;
  status: string;
  attempt_count: number;
  next_attempt_at: Date | null;
  /** P13/P15: parked for its endpoint's probe (no next attempt scheduled). */
  parked: boolean;
  attempts: number;
  max_number: number | null;
  distinct_numbers: number;
  successes: number;
  interrupted: number;
  last_succeeded: boolean | null;
}

export async function outboundChecks(sql: Sql, acked: string[], endpoints: SoakEndpoint[], posts: MerchantPost[], faults: Fault[]): Promise<Check[]> {
  const [events] = await sql<{ n: number }[]>`select count(*)::int as n from events where event_public_id = any(${acked})`;
  const rows = await sql<DeliveryRow[]>`
    select d.id, d.event_public_id, d.endpoint_id, d.status, d.attempt_count, d.next_attempt_at, d.parked_since is not null as parked,
           count(a.id)::int as attempts, max(a.attempt_number)::int as max_number,
           count(distinct a.attempt_number)::int as distinct_numbers,
           count(*) filter (where a.succeeded)::int as successes,
           count(*) filter (where a.error_kind = 'interrupted')::int as interrupted,
           bool_or(a.succeeded and a.attempt_number = (select max(b.attempt_number) from delivery_attempts b where b.delivery_id = d.id)) as last_succeeded
      from deliveries d left join delivery_attempts a on a.delivery_id = d.id
     where d.event_public_id = any(${acked}) group by d.id`;
  const perEvent = new Map<string, number>();
  for (const r of rows) perEvent.set(r.event_public_id, (perEvent.get(r.event_public_id) ?? 0) + 1);
  const fanOutWrong = acked.filter((id) => perEvent.get(id) !== endpoints.length).length;
  const done = rows.filter((r) => r.status === 'DELIVERED' || r.status === 'FAILED');
  // Waiting for a retry's timer, or parked for the endpoint's probe (P13: a fan-out's, no attempt yet; P15: a retry's).
  const scheduled = rows.filter(
    (r) => (r.status === 'RETRYING' || r.status === 'PENDING') && ((r.attempts > 0 && r.next_attempt_at) || r.parked),
  );
  const stuck = rows.length - done.length - scheduled.length;
  const countMismatch = rows.filter((r) => r.attempt_count !== r.attempts || (r.attempts > 0 && r.max_number !== r.attempts));
  const twice = rows.filter((r) => r.distinct_numbers !== r.attempts);
  const deliveredWrong = rows.filter((r) => r.status === 'DELIVERED' && (r.successes !== 1 || !r.last_succeeded));

  // POSTs the merchants received, per delivery (endpoint path + event id), against attempts recorded.
  const pathOf = new Map(endpoints.map((e) => [e.id, e.path]));
  const postsBy = new Map<string, number[]>();
  for (const p of posts) postsBy.set(`${p.path} ${p.eventId}`, [...(postsBy.get(`${p.path} ${p.eventId}`) ?? []), p.at]);
  let extraExplained = 0;
  const extraUnexplained: string[] = [];
  const fewer: string[] = [];
  let totalPosts = 0;
  let totalAttempts = 0;
  let interrupted = 0;
  let interruptedUnsent = 0;
  const byDelivery = new Map<string, MerchantPost[]>();
  for (const p of posts) byDelivery.set(`${p.path} ${p.eventId}`, [...(byDelivery.get(`${p.path} ${p.eventId}`) ?? []), p]);
  const faultNear = (from: number, to: number) => faults.some((f) => FAULTS_INTERRUPTING_ATTEMPTS.has(f.target) && f.at >= from && f.at <= to);
  // R3: a merchant that answered 2xx at once is never POSTed again and its delivery is DELIVERED.
  const againAfter2xx: string[] = [];
  for (const r of rows) {
    const received = byDelivery.get(`${pathOf.get(r.endpoint_id)} ${r.event_public_id}`) ?? [];
    const first2xx = received.findIndex((p) => p.answered2xx);
    if (first2xx === -1) continue;
    const later = received.length - first2xx - 1;
    if ((later > 0 || r.status !== 'DELIVERED') && !faultNear(received[first2xx]!.at - 15_000, received[first2xx]!.at + 15_000)) {
      againAfter2xx.push(`${r.id} (${pathOf.get(r.endpoint_id)}): ${later} POSTs after a 2xx, ${r.status}`);
    }
  }
  const interruptedRows = await sql<{ delivery_id: string; at: number }[]>`
    select a.delivery_id, (extract(epoch from a.started_at) * 1000)::float8 as at from delivery_attempts a join deliveries d on d.id = a.delivery_id
     where a.error_kind = 'interrupted' and d.event_public_id = any(${acked})`;
  const interruptedUnexplained = interruptedRows.filter((a) => !faultNear(a.at - 15_000, a.at + 60_000));
  const brokerIds = new Set(endpoints.filter((e) => e.broker).map((e) => e.id));
  for (const r of rows) {
    if (brokerIds.has(r.endpoint_id)) continue; // its messages: bench/soak/broker-invariants.ts
    const times = postsBy.get(`${pathOf.get(r.endpoint_id)} ${r.event_public_id}`) ?? [];
    totalPosts += times.length;
    totalAttempts += r.attempts;
    interrupted += r.interrupted;
    // An attempt recorded `interrupted` (its process died in flight) may or may not have reached the merchant.
    if (times.length < r.attempts && times.length >= r.attempts - r.interrupted) interruptedUnsent += r.attempts - times.length;
    else if (times.length < r.attempts) fewer.push(`${r.id}: ${times.length} POSTs, ${r.attempts} attempts`);
    if (times.length > r.attempts) {
      // At-least-once: an attempt interrupted by a kill (POST sent, not recorded) is made again by the retried activity.
      const from = Math.min(...times) - 15_000;
      const to = Math.max(...times);
      const fault = faultNear(from, to);
      if (fault) extraExplained += times.length - r.attempts;
      else extraUnexplained.push(`${r.id}: ${times.length} POSTs, ${r.attempts} attempts`);
    }
  }
  const sample = (list: string[]) => (list.length ? ` (e.g. ${list.slice(0, 3).join('; ')})` : '');
  return [
    {
      name: "every Kafka event's deliveries DELIVERED or FAILED (or scheduled for a retry, attempts recorded, or parked for its probe)",
      ok: events!.n === acked.length && fanOutWrong === 0 && stuck === 0,
      detail: `${acked.length} events acknowledged by Kafka, ${events!.n} stored, fan-out ≠ ${endpoints.length} for ${fanOutWrong}; ` +
        `${rows.length} deliveries: ${rows.filter((r) => r.status === 'DELIVERED').length} DELIVERED, ${rows.filter((r) => r.status === 'FAILED').length} FAILED, ` +
        `${scheduled.length} scheduled for a retry or parked (${rows.filter((r) => r.parked).length} parked), stuck ${stuck}`,
    },
    {
      name: 'attempts recorded = attempt_count, numbered 1..n, no attempt number twice, DELIVERED ends in its one 2xx',
      ok: countMismatch.length === 0 && twice.length === 0 && deliveredWrong.length === 0,
      detail: `count mismatch ${countMismatch.length}, number twice ${twice.length}, DELIVERED without exactly one final success ${deliveredWrong.length}`,
    },
    {
      name: 'POSTs received by the HTTP merchants = attempts recorded',
      ok: fewer.length === 0 && extraUnexplained.length === 0,
      detail: `${totalPosts} POSTs, ${totalAttempts} attempts; ${interrupted} attempts recorded interrupted by a kill, ` +
        `${interruptedUnsent} of them never reached the merchant; other attempts without a POST ${fewer.length}${sample(fewer)}; ` +
        `extra POSTs within 15 s of a worker/dispatcher/PostgreSQL/Temporal kill (at-least-once, documented) ${extraExplained}; ` +
        `extra POSTs with no fault to explain them ${extraUnexplained.length}${sample(extraUnexplained)}`,
    },
    {
      name: 'a merchant answering 2xx at once is POSTed no more and its delivery DELIVERED (R3)',
      ok: againAfter2xx.length === 0,
      detail: `deliveries POSTed again or not DELIVERED after a prompt 2xx, with no kill to explain it: ${againAfter2xx.length}${sample(againAfter2xx)}`,
    },
    {
      name: 'every attempt recorded interrupted lies within a kill of a process or service it depends on',
      ok: interruptedUnexplained.length === 0,
      detail: `${interruptedRows.length} interrupted, ${interruptedUnexplained.length} with no kill within -15 s/+60 s` +
        sample(interruptedUnexplained.map((a) => a.delivery_id)),
    },
  ];
}

/** R1: every poison message Kafka acknowledged is quarantined once (a resend may add one at another offset). */
export async function quarantineChecks(sql: Sql, poisonAcked: number): Promise<Check[]> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from quarantined_messages`;
  return [
    {
      name: 'every poison message quarantined with a reason, its partition moving on',
      ok: row!.n >= poisonAcked,
      detail: `${poisonAcked} poison messages acknowledged by Kafka, ${row!.n} quarantined (the other events of their partitions: see fan-out above)`,
    },
  ];
}
