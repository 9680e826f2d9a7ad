// I4/I5: writes receipts durably. Each receipt is one registry insert (unique provider + event id; the loser of
// a race is a duplicate) and one receipt row, atomically; the caller answers 200 only once it resolved.
// The group-commit writer shares one transaction among all requests that arrive while earlier batches commit,
// so a commit's fsync is paid per batch, not per webhook; the direct writer (one transaction each) is the baseline.
// R5: what it holds in memory is bounded (count and bytes) and every write has a deadline; past either the ingress
// answers 503 + Retry-After instead of queueing. A refused receipt was never acknowledged, so nothing is lost.
import type { Db } from '../db/client.js';
import { isTransientDbError } from '../db/errors.js';
import { providerEventRegistry, webhookReceipts } from '../db/schema/index.js';
import { commitBatch, keyOf, type ReceiptToWrite } from './receipt-batch-statement.js';

export type { ReceiptToWrite } from './receipt-batch-statement.js';

export type WriteOutcome = { duplicate: false; receiptId: number } | { duplicate: true };

export interface ReceiptWriter {
  write(receipt: ReceiptToWrite): Promise<WriteOutcome>;
  /** Transactions committed and receipts they carried, for tests and the benchmark. */
  readonly stats: { transactions: number; receipts: number };
}

export interface GroupCommitOptions {
  db: Db;
  /** Receipts per transaction at most (the statement has 5 array parameters whatever the size). */
  maxBatch?: number;
  /** Raw bytes per statement at most, so a burst of large bodies does not become one huge statement. */
  maxBatchBytes?: number;
  /** Transactions in flight at once; requests arriving meanwhile form the next batch. */
  maxInFlight?: number;
  /** R5: receipts held in memory (waiting or committing) at most; past it write() refuses at once (queue_full). */
  maxPending?: number;
  /** R5: the same bound in raw bytes. */
  maxPendingBytes?: number;
  /** R5: a write not committed within this many ms is refused (deadline); it may still commit (a retry is a duplicate). */
  deadlineMs?: number;
  onCommit?: (size: number, seconds: number) => void;
}

/** R5: the writer refused a receipt to protect the process; the ingress answers 503 with Retry-After. */
export class ReceiptWriterOverloadedError extends Error {
  override name = 'ReceiptWriterOverloadedError';
  constructor(readonly reason: 'queue_full' | 'deadline') {
    super(reason === 'queue_full' ? 'receipt queue full' : 'receipt commit deadline passed');
  }
}

export interface GroupCommitWriter extends ReceiptWriter {
  /** Receipts (and their raw bytes) held in memory now: waiting for a batch or in a committing one. */
  readonly held: { receipts: number; bytes: number };
}

interface Pending {
  receipt: ReceiptToWrite;
  resolve: (outcome: WriteOutcome) => void;
  reject: (error: unknown) => void;
  /** Answered (committed, failed or past its deadline): skipped if still queued, its result ignored if in flight. */
  settled: boolean;
  /** Its batch failed on data: it is retried in a statement of its own (still within maxInFlight). */
  alone: boolean;
  /** R17: its batch already met a lost connection once and was sent again on another (no second time). */
  retried?: boolean;
  timer?: NodeJS.Timeout;
}


export function createGroupCommitWriter(options: GroupCommitOptions): GroupCommitWriter {
  const maxBatch = options.maxBatch ?? 500;
  const maxInFlight = options.maxInFlight ?? 8;
  const maxBatchBytes = options.maxBatchBytes ?? 4 * 1024 * 1024;
  const maxPending = options.maxPending ?? 10_000;
  const maxPendingBytes = options.maxPendingBytes ?? 64 * 1024 * 1024;
  const queue: Pending[] = [];
  const stats = { transactions: 0, receipts: 0 };
  const held = { receipts: 0, bytes: 0 };
  let inFlight = 0;
  let scheduled = false;

  const answer = (p: Pending, outcome: { value: WriteOutcome } | { error: unknown }) => {
    if (p.settled) return;
    p.settled = true;
    clearTimeout(p.timer);
    if ('value' in outcome) p.resolve(outcome.value);
    else p.reject(outcome.error);
  };
  const release = (p: Pending) => {
    clearTimeout(p.timer);
    held.receipts -= 1;
    held.bytes -= p.receipt.rawBody.length;
  };

  async function run(batch: Pending[]): Promise<void> {
    // Concurrent deliveries of one event in one batch: the first carries it, the rest wait for its commit.
    const leaders = new Map<string, Pending>();
    for (const p of batch) {
      const k = keyOf(p.receipt.provider, p.receipt.providerEventId);
      if (!leaders.has(k)) leaders.set(k, p);
    }
    const started = process.hrtime.bigint();
    let ids: Map<string, number>;
    try {
      ids = await commitBatch(options.db, [...leaders.values()].map((p) => p.receipt));
    } catch (error) {
      if (isTransientDbError(error) && batch.every((p) => !p.retried)) {
        // R17: a connection PostgreSQL had closed (a terminated backend, a failover) fails the batch before anything
        // is known to be committed; it goes again once, on another connection, within the same deadline. A commit
        // that had landed answers the second time as a duplicate, and the receipt is stored either way.
        for (const p of batch) p.retried = true;
        queue.unshift(...batch);
        return;
      }
      if (batch.length > 1 && !isTransientDbError(error)) {
        // One bad receipt must not fail its neighbours: each goes back to the front to be committed alone, through
        // the same in-flight slots as every batch (R5), and only the bad one fails.
        for (const p of batch) p.alone = true;
        queue.unshift(...batch);
        return;
      }
      for (const p of batch) {
        answer(p, { error });
        release(p);
      }
      return;
    }
    stats.transactions += 1;
    stats.receipts += ids.size;
    options.onCommit?.(leaders.size, Number(process.hrtime.bigint() - started) / 1e9);
    for (const p of batch) {
      const k = keyOf(p.receipt.provider, p.receipt.providerEventId);
      const id = ids.get(k);
      answer(p, { value: id !== undefined && leaders.get(k) === p ? { duplicate: false, receiptId: id } : { duplicate: true } });
      release(p);
    }
  }

  function pump(): void {
    scheduled = false;
    while (inFlight < maxInFlight && queue.length > 0) {
      let take = 0;
      let count = 0;
      let bytes = 0;
      if (queue[0]!.alone) take = 1;
      // At least one receipt per batch, whatever its size (the ingress has already bounded it); answered ones
      // (past their deadline) are dropped without taking room.
      else
        while (take < queue.length && count < maxBatch && !queue[take]!.alone) {
          const p = queue[take]!;
          if (!p.settled) {
            if (count > 0 && bytes + p.receipt.rawBody.length > maxBatchBytes) break;
            bytes += p.receipt.rawBody.length;
            count += 1;
          }
          take += 1;
        }
      const batch: Pending[] = [];
      for (const p of queue.splice(0, take)) {
        if (p.settled) release(p);
        else batch.push(p);
      }
      if (batch.length === 0) continue;
      inFlight += 1;
      void run(batch).finally(() => {
        inFlight -= 1;
        schedule();
      });
    }
  }

  // setImmediate gathers the requests of the same I/O turn into one batch before a slot is taken.
  function schedule(): void {
    if (!scheduled && queue.length > 0 && inFlight < maxInFlight) {
      scheduled = true;
      setImmediate(pump);
    }
  }

  return {
    stats,
    held,
    write(receipt) {
      const size = receipt.rawBody.length;
      if (held.receipts >= maxPending || (held.receipts > 0 && held.bytes + size > maxPendingBytes)) {
        return Promise.reject(new ReceiptWriterOverloadedError('queue_full'));
      }
      return new Promise<WriteOutcome>((resolve, reject) => {
        const p: Pending = { receipt, resolve, reject, settled: false, alone: false };
        if (options.deadlineMs !== undefined) {
          p.timer = setTimeout(() => answer(p, { error: new ReceiptWriterOverloadedError('deadline') }), options.deadlineMs);
        }
        held.receipts += 1;
        held.bytes += size;
        queue.push(p);
        schedule();
      });
    },
  };
}

/** One statement per receipt, no batching: the benchmark's middle line (statement shape without group commit). */
export function createSingleStatementWriter(options: { db: Db }): ReceiptWriter {
  const stats = { transactions: 0, receipts: 0 };
  return {
    stats,
    async write(receipt) {
      const ids = await commitBatch(options.db, [receipt]);
      stats.transactions += 1;
      stats.receipts += ids.size;
      const id = ids.get(keyOf(receipt.provider, receipt.providerEventId));
      return id === undefined ? { duplicate: true } : { duplicate: false, receiptId: id };
    },
  };
}

/**
 * The naive baseline for the benchmark: what a handler written the obvious way does — its own transaction per
 * request (BEGIN, registry insert, receipt insert, COMMIT), with exactly the same rows and answers.
 */
export function createDirectWriter(options: { db: Db }): ReceiptWriter {
  const stats = { transactions: 0, receipts: 0 };
  return {
    stats,
    async write(receipt) {
      const receiptId = await options.db.transaction(async (tx) => {
        const [registered] = await tx
          .insert(providerEventRegistry)
          .values({ provider: receipt.provider, providerEventId: receipt.providerEventId })
          .onConflictDoNothing()
          .returning({ provider: providerEventRegistry.provider });
        if (!registered) return undefined;
        const [row] = await tx.insert(webhookReceipts).values({ ...receipt, workflowStartedAt: null }).returning({ id: webhookReceipts.id });
        return row!.id;
      });
      stats.transactions += 1;
      if (receiptId === undefined) return { duplicate: true };
      stats.receipts += 1;
      return { duplicate: false, receiptId };
    },
  };
}
