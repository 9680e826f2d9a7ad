// R12: every workflow patch id lives in src/workflows/patches.ts (issue 31): no workflow file spells one inline, each
// id there is used by some workflow, and no two share a value (two changes behind one marker would replay as one).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as PATCHES from '../../src/workflows/patches.js';
import { ROOT, sourceFiles } from '../helpers/import-graph.js';

const files = sourceFiles('src/workflows').filter((f) => !f.endsWith('patches.ts'));
const text = files.map((f) => readFileSync(join(ROOT, f), 'utf8')).join('\n');

describe('workflow patch ids (R12)', () => {
  it('no workflow passes a string literal to patched() or deprecatePatch()', () => {
    expect(text.match(/(patched|deprecatePatch)\(\s*['"`]/g) ?? []).toEqual([]);
  });

  it('every id in patches.ts is used, and the ids are distinct', () => {
    const names = Object.keys(PATCHES);
    expect(names.length).toBeGreaterThanOrEqual(6);
    expect(names.filter((name) => !new RegExp(`(patched|deprecatePatch)\\(\\s*${name}\\b`).test(text))).toEqual([]);
    expect(new Set(Object.values(PATCHES)).size).toBe(names.length);
  });
});
