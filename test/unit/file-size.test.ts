// Small files with one job (issue 31, docs/architecture.md): no source file under src/ is longer than 250 lines.
// Only generated files (`*.generated.ts`, written by a script and checked by their own test) are exempt.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/import-graph.js';

const MAX_LINES = 250;
const GENERATED = /\.generated\.ts$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(ROOT, path)] : [];
  });
}

const lineCount = (path: string) => readFileSync(join(ROOT, path), 'utf8').replace(/\n$/, '').split('\n').length;

describe('file size', () => {
  const files = sourceFiles(join(ROOT, 'src'));

  it('finds the source files, the generated ones among them', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.some((f) => GENERATED.test(f))).toBe(true);
  });

  it(`no src/**/*.ts but *.generated.ts is longer than ${MAX_LINES} lines`, () => {
    const long = files
      .filter((f) => !GENERATED.test(f))
      .map((f) => ({ file: f, lines: lineCount(f) }))
      .filter((f) => f.lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
