// R3: reads at most `maxBytes` of a merchant's response body before a deadline, then stops reading: a huge,
// endless or dripping body costs a bounded amount of memory and time, and a body that breaks off keeps what came.

export interface BodyRead {
  bytes: Buffer;
  /** The body went on past `maxBytes` (we stopped reading; nothing is wrong with that). */
  truncated: boolean;
  /** Why the body could not be read up to `maxBytes` or its end, or null when it could. */
  cutShort: string | null;
}

/** Resolves when `signal` aborts: the total deadline of the exchange, not a per-chunk one. */
function aborted(signal: AbortSignal): Promise<'deadline'> {
  if (signal.aborted) return Promise.resolve('deadline');
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve('deadline'), { once: true }));
}

function reasonOf(error: unknown): string {
  const err = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  // fetch wraps the socket's error in `cause`; undici's request throws its own error with the code on it.
  return err.cause?.code ?? err.cause?.message ?? err.code ?? err.message ?? err.name ?? 'unknown error';
}

/** A response body: undici's (a Node stream) or any async iterable of chunks with a way to stop it. */
export type BodySource = AsyncIterable<Uint8Array> & { destroy?: (error?: Error) => unknown };

export async function readBody(body: BodySource | null, maxBytes: number, deadline: AbortSignal): Promise<BodyRead> {
  if (!body) return { bytes: Buffer.alloc(0), truncated: false, cutShort: null };
  const reader = body[Symbol.asyncIterator]();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  let cutShort: string | null = null;
  const timeUp = aborted(deadline);
  try {
    for (;;) {
      if (size >= maxBytes) {
        // Anything more is past the cap; do not wait for it (an endless body has no end to wait for).
        truncated = true;
        break;
      }
      const next = await Promise.race([reader.next(), timeUp]);
      if (next === 'deadline') {
        cutShort = `still arriving at the deadline after ${size} bytes`;
        break;
      }
      if (next.done) break;
      chunks.push(next.value);
      size += next.value.byteLength;
    }
  } catch (error) {
    cutShort = deadline.aborted ? `still arriving at the deadline after ${size} bytes` : `cut short after ${size} bytes (${reasonOf(error)})`;
  } finally {
    // Closes the connection when the body is not finished; never awaited (a broken peer must not hold us here).
    body.destroy?.();
    reader.return?.()?.catch(() => {});
  }
  const all = Buffer.concat(chunks);
  if (all.length > maxBytes) truncated = true;
  return { bytes: all.subarray(0, maxBytes), truncated, cutShort };
}
