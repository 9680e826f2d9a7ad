// Every requirement id or section the repository cites is defined in docs/requirements.md, once, with a status.
//
// A citation is one of the prefixes O I R A C M P L (upper case) followed by a number from 1 to 19 without a
// leading zero, standing alone: not glued to a word character on either side (hex like 0xA1, `SC1090`,
// `evt_A1`), not after `#` (CSS colours), not followed by `.<digit>`. Two-digit numbers from 20 up are
// percentiles (P50, P95, P99), never ids, and lower case (p99) is never an id. Spreadsheet formulas such as
// =SUM(A1) in the CSV tests are not citations either. A section citation is `requirements §N` or
// `requirements.md §N`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;
const REQUIREMENTS = 'docs/requirements.md';
const SCANNED = ['src', 'test', 'bench', 'scripts', 'docs', 'config', 'drizzle', 'README.md'];
const SKIPPED_DIRS = new Set(['node_modules', '.data', '.git']);

const ID = /(?<![\w#])[OIRACMPL](?:[1-3]\d|[1-9])(?![\w]|\.\d)/g; // issues take families past 29 (A30); P50, P99 are percentiles
const FORMULA = /=[A-Z]+\([^)]*\)/g;
const SECTION = /requirements(?:\.md)? §(\d+)/g;
// Built from parts so that this file does not match itself.
const WORD = ['S', 'P', 'E', 'C'].join('');
const EXTERNAL_SPEC = new RegExp(`\\b${WORD}\\b|/work/${'shared'}|shared/${WORD}`);

function citedIds(line: string): string[] {
  return line.replace(FORMULA, '').match(ID) ?? [];
}

function files(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full)
    .filter((name) => !SKIPPED_DIRS.has(name))
    .flatMap((name) => files(join(path, name)));
}

interface Line {
  where: string;
  text: string;
}

function scannedLines(): Line[] {
  return SCANNED.flatMap(files).flatMap((path) => {
    const content = readFileSync(join(ROOT, path));
    if (content.includes(0)) return []; // binary
    return content
      .toString('utf8')
      .split('\n')
      .map((text, i) => ({ where: `${path}:${i + 1}`, text }));
  });
}

const requirements = readFileSync(join(ROOT, REQUIREMENTS), 'utf8');
/** `### O1 — Title` lines, in order. */
const definedIds = [...requirements.matchAll(/^### (\S+) — \S/gm)].map((m) => m[1]!);
const definedSections = new Set([...requirements.matchAll(/^## (\d+)\. /gm)].map((m) => m[1]!));
const lines = scannedLines();

describe('requirement ids (docs/requirements.md)', () => {
  it('the citation form finds ids and ignores percentiles, hex, CSS colours, formulas and glued words', () => {
    expect(citedIds('see O1, I14 and O7–O9; R12.')).toEqual(['O1', 'I14', 'O7', 'O9', 'R12']);
    expect(citedIds('p99 P99 P50 0xA1 #C1 SC1090 evt_A1 A1b =SUM(A1) v1.5 P1.5')).toEqual([]);
  });

  it('defines every id of the spec: O1–O15, I1–I14, R1–R12, A1–A9, M1–M7, P1–P7, C1–C10, L1–L7, and later ids of each family without a gap', () => {
    const expected = Object.entries({ O: 15, I: 14, R: 12, A: 9, M: 7, P: 7, C: 10, L: 7 }).flatMap(([prefix, count]) =>
      Array.from({ length: count }, (_, i) => `${prefix}${i + 1}`),
    );
    expect(definedIds).toEqual(expect.arrayContaining(expected));
    // Issues continue a family past the spec: each family is numbered 1..n without a gap.
    for (const family of new Set(definedIds.map((id) => id.replace(/\d+$/, '')))) {
      const numbers = definedIds.filter((id) => id.replace(/\d+$/, '') === family).map((id) => Number(id.slice(family.length)));
      expect(
        [...numbers].sort((a, b) => a - b),
        `${family} ids`,
      ).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1));
    }
    for (const id of definedIds) expect(citedIds(id), `${id} is not in the citation form`).toEqual([id]);
  });

  it('defines each id once', () => {
    const seen = new Set<string>();
    const repeated = definedIds.filter((id) => seen.has(id) || !seen.add(id));
    expect(repeated).toEqual([]);
  });

  it('gives each id a status: built, partly or not yet', () => {
    const sections = requirements.split(/^### /m).slice(1);
    const missing = sections
      .filter((section) => !/^Status: \*\*(built|partly|not yet)\*\*/m.test(section))
      .map((section) => section.split(' ')[0]);
    expect(missing).toEqual([]);
  });

  it('every id cited in src, test, bench, scripts, docs, config, drizzle and the README is defined', () => {
    const defined = new Set(definedIds);
    const undefinedCitations = lines.flatMap(({ where, text }) =>
      citedIds(text)
        .filter((id) => !defined.has(id))
        .map((id) => `${where}: ${id}`),
    );
    expect(undefinedCitations).toEqual([]);
  });

  it('every cited section (requirements §N) exists', () => {
    const bad = lines.flatMap(({ where, text }) =>
      [...text.matchAll(SECTION)].filter((m) => !definedSections.has(m[1]!)).map((m) => `${where}: §${m[1]}`),
    );
    expect(bad).toEqual([]);
  });

  it('nothing points at a spec outside the repository', () => {
    expect(lines.filter(({ text }) => EXTERNAL_SPEC.test(text)).map(({ where, text }) => `${where}: ${text.trim()}`)).toEqual([]);
  });

  it('an id the spec does not have is still a citation, so the scan above would report it', () => {
    const unknown = ['O', '29'].join('');
    expect(citedIds(`covers ${unknown}`)).toEqual([unknown]);
    expect(definedIds).not.toContain(unknown);
  });
});
