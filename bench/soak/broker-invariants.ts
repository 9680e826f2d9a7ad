// R11, M11: the end-state checks of the soak's RabbitMQ endpoint (bench/soak/broker.ts), read with the HTTP ones once
// nothing moves: every event's delivery to the queue ends DELIVERED or FAILED and no confirmed message is lost; every
// message the consumer received has its attempt row (the attempt that signed it, by its webhook-timestamp), and more
// messages than attempts only within a kill window; a broker that was down shows as failed attempts, never as a
// success or a lost event.
import type { Sql } from 'postgres';
import type { BrokerConsumer, BrokerMessage } from './broker.js';
import type { Check, Fault } from './invariants.js';
import type { SoakEndpoint } from './outbound.js';

interface Attempt {
  n: number;
  at: number;
  ok: boolean;
  kind: string | null;
}

/** An attempt signs at its start: the message's webhook-timestamp (s) is its started_at, give or take the clock's second. */
const signedBy = (m: BrokerMessage, a: Attempt) => Math.abs(Number(m.timestamp) * 1000 - a.at) <= 3_000;

export async function brokerChecks(
  sql: Sql,
  acked: string[],
  endpoint: SoakEndpoint,
  consumer: BrokerConsumer,
  faults: Fault[],
): Promise<Check[]> {
  const rows = await sql<{ id: string; event_public_id: string; status: string; attempts: Attempt[] }[]>`
    select d.id, d.event_public_id, d.status,
           coalesce(json_agg(json_build_object('n', a.attempt_number, 'at', extract(epoch from a.started_at) * 1000,
                                               'ok', a.succeeded, 'kind', a.error_kind) order by a.attempt_number)
                    filter (where a.id is not null), '[]') as attempts
      from deliveries d left join delivery_attempts a on a.delivery_id = d.id
     where d.endpoint_id = ${endpoint.id} and d.event_public_id = any(${acked}) group by d.id`;
  const byEvent = new Map<string, BrokerMessage[]>();
  for (const m of consumer.messages) byEvent.set(m.eventId, [...(byEvent.get(m.eventId) ?? []), m]);
  const nearFault = (from: number, to: number) => faults.some((f) => f.at >= from && f.at <= to);
  const sample = (list: string[]) => (list.length ? ` (e.g. ${list.slice(0, 3).join('; ')})` : '');

  const count = (status: string) => rows.filter((r) => r.status === status).length;
  const notDone = rows.filter((r) => r.status !== 'DELIVERED' && r.status !== 'FAILED');
  const lost: string[] = []; // a confirmed attempt whose message never reached the queue's consumer
  const withoutAttempt: string[] = [];
  const extraUnexplained: string[] = [];
  let extraExplained = 0;
  let totalAttempts = 0;
  for (const r of rows) {
    const received = byEvent.get(r.event_public_id) ?? [];
    byEvent.delete(r.event_public_id);
    totalAttempts += r.attempts.length;
    for (const a of r.attempts.filter((x) => x.ok))
      if (!received.some((m) => signedBy(m, a))) lost.push(`${r.id} attempt ${a.n}`);
    const unmatched = received.filter((m) => !r.attempts.some((a) => signedBy(m, a)));
    const explained = (m: BrokerMessage) => nearFault(m.at - 30_000, m.at + 15_000);
    for (const m of unmatched) if (!explained(m)) withoutAttempt.push(`${r.id}: message signed at ${m.timestamp}`);
    if (received.length > r.attempts.length) {
      if (received.every(explained)) extraExplained += received.length - r.attempts.length;
      else extraUnexplained.push(`${r.id}: ${received.length} messages, ${r.attempts.length} attempts`);
    }
  }
  const strangers = [...byEvent.keys()]; // messages for events that have no delivery to this endpoint

  // The broker down: from its kill (made) until the stack script was asked to bring it back, it cannot answer.
  const brokerFaults = faults.filter((f) => f.target === 'rabbitmq');
  const attempts = rows.flatMap((r) => r.attempts.map((a) => ({ ...a, delivery: r.id })));
  const successWhileDown = attempts.filter(
    (a) => a.ok && brokerFaults.some((f) => a.at > (f.downAt ?? f.at) + 500 && a.at < (f.restartAt ?? f.at)),
  );
  const failedPerKill = brokerFaults.map((f) =>
    attempts.filter((a) => !a.ok && a.at >= f.at && a.at <= (f.backAt ?? f.at + 120_000) + 5_000),
  );
  // A kill while nothing was sent to the queue (e.g. the dispatcher's group still rebalancing after its own kill: soak
  // seed 5150's third broker kill) shows no failure and proves nothing; one during which attempts were made must fail
  // them all, and at least one kill of the run must have been tried.
  const triedWhileDown = brokerFaults.map(
    (f) => attempts.filter((a) => a.at > (f.downAt ?? f.at) + 500 && a.at < (f.restartAt ?? f.at)).length,
  );
  const kinds = new Map<string, number>();
  for (const a of failedPerKill.flat()) kinds.set(a.kind ?? '?', (kinds.get(a.kind ?? '?') ?? 0) + 1);
  return [
    {
      name: 'every event for the RabbitMQ endpoint ends DELIVERED or FAILED, no confirmed message lost (M11)',
      ok: rows.length === acked.length && notDone.length === 0 && lost.length === 0,
      detail:
        `${acked.length} events, ${rows.length} deliveries to ${endpoint.path}: ${count('DELIVERED')} DELIVERED, ${count('FAILED')} FAILED, ` +
        `not finished ${notDone.length}${sample(notDone.map((r) => `${r.id} ${r.status}`))}; confirmed attempts whose message never arrived ${lost.length}${sample(lost)}`,
    },
    {
      name: 'every message received has its attempt row; messages ≤ attempts except within a kill window (M11)',
      ok: withoutAttempt.length === 0 && extraUnexplained.length === 0 && strangers.length === 0,
      detail:
        `${consumer.messages.length} messages received (${consumer.redeliveredSeen} handed out again after a broker restart, counted once; ` +
        `${consumer.reconnects} consumer reconnect tries), ${totalAttempts} attempts; without an attempt that signed them ${withoutAttempt.length}${sample(withoutAttempt)}; ` +
        `extra messages within a kill window (at-least-once) ${extraExplained}; extra with no kill to explain them ${extraUnexplained.length}${sample(extraUnexplained)}; ` +
        `messages for unknown events ${strangers.length}${sample(strangers)}`,
    },
    {
      name: 'a broker that was down shows as failed attempts, never a success (M11)',
      ok:
        successWhileDown.length === 0 &&
        failedPerKill.every((list, i) => list.length > 0 || triedWhileDown[i] === 0) &&
        (brokerFaults.length === 0 || failedPerKill.some((list) => list.length > 0)),
      detail:
        brokerFaults.length === 0
          ? 'no RabbitMQ kill in this run'
          : `${brokerFaults.length} kills of the broker; attempts made while each was down: ${triedWhileDown.join(', ')}; ` +
            `failed attempts while each was down or coming back: ${failedPerKill.map((l) => l.length).join(', ')} ` +
            `(${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}); successes while it was down ${successWhileDown.length}${sample(successWhileDown.map((a) => `${a.delivery} attempt ${a.n}`))}`,
    },
  ];
}
