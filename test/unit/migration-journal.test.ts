// A6, P11: drizzle's migrator applies a migration only when its `when` is later than the last one applied, so a
// journal entry whose `when` is not above every earlier one is skipped for good on a database that already has the
// later ones (merging branches out of order left a test database with 0026 but not 0021–0023). Every entry's `when`
// grows with its place in the journal (the order the migrator applies them), and every entry has its SQL file and every SQL file its entry.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const folder = new URL('../../drizzle/', import.meta.url).pathname;
const journal = JSON.parse(readFileSync(`${folder}meta/_journal.json`, 'utf8')) as {
  entries: { idx: number; when: number; tag: string }[];
};

describe('drizzle migration journal (A6)', () => {
  it('has entries in the order they apply, each `when` later than the one before (idx numbers may interleave)', () => {
    expect(journal.entries.length).toBeGreaterThan(20);
    const late = journal.entries.filter((e, i) => i > 0 && e.when <= journal.entries[i - 1]!.when);
    expect(late.map((e) => e.tag)).toEqual([]);
  });

  it('matches the SQL files one to one', () => {
    const files = readdirSync(folder)
      .filter((f) => f.endsWith('.sql'))
      .map((f) => f.replace(/\.sql$/, ''))
      .sort();
    expect(journal.entries.map((e) => e.tag).sort()).toEqual(files);
  });
});
