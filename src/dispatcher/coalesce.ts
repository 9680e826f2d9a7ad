// P9: the partitions of one Kafka fetch reach the handler as concurrent batches (partitionsConsumedConcurrently), and
// at a steady rate each holds an event or two: each was a fan-out transaction and a send of its own, about ten
// statements per event, and the dispatcher's time went to writing them (docs/benchmarks.md, "The tails"). The
// batches that arrive in the same turn of the event loop are handled together: one call over all of them, and each
// batch resolves when that call does, so O5 holds as before (a batch's offsets wait for the commit that holds its
// events). When the joint call fails, each batch is handled again alone: one partition's bad data or failure never
// fails another's (R1), and what the joint call committed is found again by the fan-out's dedupe (O3, O5).
import type { MessageBatch } from '../kafka/types.js';

export interface CoalesceOptions {
  /** A batch at least this large is handled alone; batches are joined while the total stays under it. */
  maxMessages: number;
}

export function coalesceBatches(
  handleMany: (batches: MessageBatch[]) => Promise<void>,
  options: CoalesceOptions,
): (batch: MessageBatch) => Promise<void> {
  let gathering: { batch: MessageBatch; resolve: () => void; reject: (error: unknown) => void }[] = [];
  let size = 0;
  let scheduled = false;

  const alone = (entry: (typeof gathering)[number]) => handleMany([entry.batch]).then(entry.resolve, entry.reject);

  const flush = () => {
    const group = gathering;
    gathering = [];
    size = 0;
    if (group.length === 0) return;
    if (group.length === 1) return void alone(group[0]!);
    handleMany(group.map((g) => g.batch)).then(
      () => group.forEach((g) => g.resolve()),
      () => group.forEach((g) => void alone(g)),
    );
  };

  return (batch) =>
    new Promise<void>((resolve, reject) => {
      const entry = { batch, resolve, reject };
      if (batch.messages.length >= options.maxMessages) return void alone(entry);
      if (size + batch.messages.length > options.maxMessages) flush();
      if (!scheduled) {
        scheduled = true;
        setImmediate(() => ((scheduled = false), flush()));
      }
      gathering.push(entry);
      size += batch.messages.length;
    });
}
