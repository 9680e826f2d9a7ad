// P1: the record step of the batched first attempts (./first-attempts.ts): every 2xx of a chunk and its DELIVERED
// row in one statement, the failures in one transaction (P21; O13 streak, RETRYING), and what
// each delivery that did not end DELIVERED needs: its workflow, from where its row stands (P23: none for a failure its
// endpoint's circuit parks). P13: also run later for the POSTs of a chunk that outlasted outbound.batched.patience, so
// that a hanging endpoint holds no chunk.
import type { Logger } from '../lib/logger.js';
import type { AttemptOutcome } from './attempt-record.js';
import type { AttemptPath } from './attempt-path.js';
import type { Delivered, createFirstAttemptStore } from './first-attempt-store.js';
import { fromRow, type DeliveryToStart, type Owned } from './delivery-start.js';

export interface RecordDeps {
  path: Pick<AttemptPath, 'attempts' | 'counted' | 'observed'>;
  store: ReturnType<typeof createFirstAttemptStore>;
  logger: Logger;
  firstRetryMs: number;
  /** P23 (./failed-parking.ts): parks the failures whose endpoint's circuit parks them; resolves to the rest. */
  parkOrStart: (workflows: DeliveryToStart[]) => Promise<DeliveryToStart[]>;
}

/** Records the outcomes of `mine` (null: the POST threw); resolves to how many ended DELIVERED and the workflows. */
export function createRecorder(deps: RecordDeps) {
  const { store, logger, firstRetryMs } = deps;
  const { attempts, counted, observed } = deps.path;
  const input = (deliveryId: string, at: Date) => ({
    deliveryId,
    attemptNumber: 1,
    scheduledAt: at.getTime(),
    retryInMs: firstRetryMs,
  });
  return async function record(
    mine: Owned[],
    attemptIds: Map<string, number>,
    outcomes: (AttemptOutcome | null | undefined)[],
    at: Date,
  ): Promise<{ delivered: number; workflows: DeliveryToStart[] }> {
    const workflows: DeliveryToStart[] = [];
    const succeeded: Delivered[] = [];
    const failed: [Owned, AttemptOutcome][] = [];
    mine.forEach((d, i) => {
      const outcome = outcomes[i];
      if (outcome === null || outcome === undefined) workflows.push(fromRow(d, d.handoff));
      else if (outcome.succeeded)
        succeeded.push({
          deliveryId: d.deliveryId,
          attemptId: attemptIds.get(d.deliveryId)!,
          endpointId: d.endpointId,
          outcome,
        });
      else failed.push([d, outcome]);
    });
    const marked = await store.markDelivered(succeeded, new Date()).catch(async (error: unknown) => {
      // R3: one refused row must not lose the others; the per-row path records each, without details if it must.
      logger.warn({ error: (error as Error).name }, 'batched DELIVERED statement failed; recording one by one');
      const one = new Set<string>();
      for (const s of succeeded) {
        const applied = await attempts.record(input(s.deliveryId, at), s.attemptId, s.endpointId, s.outcome);
        if (applied.status === 'DELIVERED') one.add(s.deliveryId);
      }
      return one;
    });
    for (const s of succeeded) {
      if (marked.has(s.deliveryId))
        observed(input(s.deliveryId, at), s.endpointId, { recorded: s.outcome, status: 'DELIVERED', disabledNow: false });
      else {
        counted(s.outcome); // not marked here: its workflow records it from the row
        workflows.push(
          fromRow(
            mine.find((d) => d.deliveryId === s.deliveryId)!,
            { status: 'PENDING', attemptCount: 0, nextAttemptAt: null },
          ),
        );
      }
    }
    // P21: the chunk's failures in one transaction (one commit), else one by one.
    const items = failed.map(([d, outcome]) => ({
      input: input(d.deliveryId, at),
      attemptId: attemptIds.get(d.deliveryId)!,
      endpointId: d.endpointId,
      outcome,
    }));
    const recorded = await attempts.recordFailures(items);
    for (const [i, [d]] of failed.entries()) {
      const attempt = items[i]!.input;
      const applied = recorded[i]!;
      observed(attempt, d.endpointId, applied);
      if (applied.status === 'DELIVERED') continue; // an earlier execution's 2xx, re-applied: nothing left to do
      workflows.push(
        // O18: a Retry-After longer than the first wait moves the workflow's first timer too.
        fromRow(d, {
          status: applied.status,
          attemptCount: 1,
          nextAttemptAt: new Date(at.getTime() + (applied.retryInMs ?? firstRetryMs)),
        }),
      );
    }
    return { delivered: marked.size, workflows: await deps.parkOrStart(workflows) };
  };
}
