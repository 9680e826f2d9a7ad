// Issue 33 item 2: the bytes the Temporal dev server keeps, per table, read from its SQLite file with SQLite's dbstat
// (pages in use, payload bytes) by Python's standard sqlite3 module (read-only; the server keeps writing in WAL mode).
// A benchmark reads it before and after it creates N things, and divides the difference by N.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface StoreBytes {
  /** Payload bytes per table (rows' data, no page slack). */
  payload: Record<string, number>;
  totalPayload: number;
  /** Bytes of the pages in use (what a disk holds, before compaction). */
  totalPages: number;
}

const SCRIPT = `
import json, sqlite3, sys
c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)
rows = c.execute('select name, sum(payload), sum(pgsize) from dbstat group by name').fetchall()
print(json.dumps({r[0]: [r[1] or 0, r[2] or 0] for r in rows}))
`;

export const TEMPORAL_DB = process.env.TEMPORAL_DB_FILE ?? '.data/temporal/temporal.db';

/** The store's bytes now, or null when the dev server's file is not here (e.g. Temporal server on PostgreSQL). */
export function temporalStoreBytes(file = TEMPORAL_DB): StoreBytes | null {
  if (!existsSync(file)) return null;
  const out = spawnSync('python3', ['-c', SCRIPT, file], { encoding: 'utf8', maxBuffer: 16 << 20 });
  if (out.status !== 0) return null;
  const tables = JSON.parse(out.stdout) as Record<string, [number, number]>;
  const payload = Object.fromEntries(Object.entries(tables).map(([t, [p]]) => [t, p]));
  return {
    payload,
    totalPayload: Object.values(tables).reduce((n, [p]) => n + p, 0),
    totalPages: Object.values(tables).reduce((n, [, g]) => n + g, 0),
  };
}

/** Per-table payload growth between two readings, largest first (tables that grew only). */
export function growth(before: StoreBytes, after: StoreBytes): [string, number][] {
  return Object.entries(after.payload)
    .map(([t, b]): [string, number] => [t, b - (before.payload[t] ?? 0)])
    .filter(([, d]) => d > 0)
    .sort((a, b) => b[1] - a[1]);
}
