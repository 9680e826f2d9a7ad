// C12: the charts' per-minute cache: one answer per (query, range, scope) per wall-clock minute, shared by
// concurrent requests (one query in flight per key), at most MAX_ENTRIES kept (answers of past minutes go first).
// The scope is what the caller was already allowed to read (an endpoint id it found, a merchant account, or "all"
// for staff-wide figures), so a cached answer never reaches a caller who could not have asked for it.
export const MAX_ENTRIES = 2000;

export interface MinuteCache {
  get<T>(key: string, load: () => Promise<T>): Promise<T>;
  size(): number;
}

export function createMinuteCache(now: () => Date = () => new Date(), max = MAX_ENTRIES): MinuteCache {
  const entries = new Map<string, { minute: number; value: Promise<unknown> }>();
  return {
    get<T>(key: string, load: () => Promise<T>): Promise<T> {
      const minute = Math.floor(now().getTime() / 60_000);
      const hit = entries.get(key);
      if (hit && hit.minute === minute) return hit.value as Promise<T>;
      if (entries.size >= max) {
        for (const [k, e] of entries) if (e.minute !== minute) entries.delete(k);
        for (const k of entries.keys()) {
          if (entries.size < max) break;
          entries.delete(k); // the oldest inserted first
        }
      }
      const value = load();
      const entry = { minute, value: value as Promise<unknown> };
      entries.delete(key);
      entries.set(key, entry);
      value.catch(() => {
        if (entries.get(key) === entry) entries.delete(key); // a failed query is not remembered
      });
      return value;
    },
    size: () => entries.size,
  };
}
