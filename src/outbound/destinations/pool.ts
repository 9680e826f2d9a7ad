// M11: open broker connections kept per destination (the endpoint and a digest of its settings and credentials, so a
// changed destination opens anew), at most `max` of them: past the bound the least recently used one is closed. An
// opening is shared by concurrent attempts; a failed or broken connection is dropped, the next attempt opens another.
// close() ends every connection (process shutdown); the pool stays usable afterwards.
import { createHash } from 'node:crypto';

export interface Pooled {
  /** False once the broker closed the connection or it failed: the pool drops it at the next lookup. */
  usable(): boolean;
  close(): Promise<void>;
}

export interface ConnectionPool<T extends Pooled> {
  get(key: string, open: () => Promise<T>): Promise<T>;
  /** Forgets and closes one connection (after a timeout, the connection's state is unknown). */
  drop(key: string): Promise<void>;
  close(): Promise<void>;
  size(): number;
}

/** The pool key of a destination: never the credentials themselves, only a digest of them. */
export function poolKey(endpointId: string, config: Record<string, string>, credentials: Record<string, string>): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([config, credentials]))
    .digest('base64url')
    .slice(0, 22);
  return `${endpointId}:${digest}`;
}

export function createConnectionPool<T extends Pooled>(options: { max: number }): ConnectionPool<T> {
  const open = new Map<string, Promise<T>>(); // insertion order = recency
  // Bounded: closing a connection whose broker vanished may never get its close-ok.
  const closeQuietly = (p: Promise<T>) =>
    Promise.race([p.then((c) => c.close()).catch(() => {}), new Promise<void>((resolve) => setTimeout(resolve, 2_000).unref())]);

  async function drop(key: string): Promise<void> {
    const entry = open.get(key);
    if (!entry) return;
    open.delete(key);
    await closeQuietly(entry);
  }

  return {
    async get(key, opener) {
      const existing = open.get(key);
      if (existing) {
        const connection = await existing.catch(() => null);
        if (connection?.usable()) {
          open.delete(key);
          open.set(key, existing);
          return connection;
        }
        if (open.get(key) === existing) await drop(key);
      }
      const opening = opener();
      open.set(key, opening);
      opening.catch(() => {
        if (open.get(key) === opening) open.delete(key);
      });
      while (open.size > options.max) {
        const oldest = open.keys().next().value as string;
        void drop(oldest);
      }
      return opening;
    },
    drop,
    async close() {
      const all = [...open.values()];
      open.clear();
      await Promise.all(all.map(closeQuietly));
    },
    size: () => open.size,
  };
}
