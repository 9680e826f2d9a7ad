// I5: the fast dedupe cache in front of the registry: provider event ids recently committed, kept for
// `dedupe_store_ttl_days` (bounded in size, least recently seen evicted first). A miss is never an answer:
// the durable registry decides, so expiry or eviction only costs one database round trip.
export interface DedupeCacheOptions {
  ttlMs: number;
  maxEntries?: number;
  now?: () => number;
}

export interface DedupeCache {
  has(provider: string, providerEventId: string): boolean;
  add(provider: string, providerEventId: string): void;
  readonly size: number;
}

export function createDedupeCache(options: DedupeCacheOptions): DedupeCache {
  const maxEntries = options.maxEntries ?? 200_000;
  const now = options.now ?? Date.now;
  // A Map iterates in insertion order: re-inserting on a hit makes the first key the least recently seen.
  const expiresAt = new Map<string, number>();
  const key = (provider: string, id: string) => `${provider}\u0000${id}`;
  return {
    has(provider, providerEventId) {
      const k = key(provider, providerEventId);
      const expiry = expiresAt.get(k);
      if (expiry === undefined) return false;
      expiresAt.delete(k);
      if (expiry <= now()) return false;
      expiresAt.set(k, expiry);
      return true;
    },
    add(provider, providerEventId) {
      const k = key(provider, providerEventId);
      expiresAt.delete(k);
      expiresAt.set(k, now() + options.ttlMs);
      while (expiresAt.size > maxEntries) expiresAt.delete(expiresAt.keys().next().value!);
    },
    get size() {
      return expiresAt.size;
    },
  };
}
