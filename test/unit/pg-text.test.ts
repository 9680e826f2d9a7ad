// R1 text PostgreSQL can store: examples, and fast-check properties against the definition (UTF-8 round trip).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPgText, jsonPgProblem, pgTextProblem, toPgText } from '../../src/shared/pg-text.js';

const roundTrips = (s: string) => Buffer.from(s, 'utf8').toString('utf8') === s;
const storable = (s: string) => !s.includes('\u0000') && roundTrips(s);
const FC = { seed: 20261201, numRuns: 500 };
/** Strings over every UTF-16 code unit, so NULs and lone surrogates of both kinds are common. */
const anyUnits = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 12 });
const spiced = fc.array(fc.oneof(anyUnits, fc.constantFrom('\u0000', '\ud800', '\udfff', '\ud83d\ude00', 'é')), { maxLength: 4 }).map((p) => p.join(''));

describe('R1 pgTextProblem', () => {
  it.each([
    ['acct_1', null],
    ['', null],
    ['emoji \ud83d\ude00', null],
    ['a\u0000b', 'nul'],
    ['\ud800', 'lone_surrogate'],
    ['x\udc00', 'lone_surrogate'],
    ['\ude00\ud83d', 'lone_surrogate'],
  ])('R1 %j → %s', (input, problem) => {
    expect(pgTextProblem(input)).toBe(problem);
  });

  it('R1 too_long past maxLength, after the character checks', () => {
    expect(pgTextProblem('abc', 2)).toBe('too_long');
    expect(pgTextProblem('ab', 2)).toBeNull();
    expect(pgTextProblem('a\u0000c', 2)).toBe('nul');
  });

  it('R1 property: storable exactly when free of U+0000 and surviving a UTF-8 round trip', () => {
    fc.assert(fc.property(fc.oneof(anyUnits, spiced, fc.string()), (s) => isPgText(s) === storable(s)), FC);
  });

  it('R1 property: toPgText always yields storable text and leaves storable text unchanged', () => {
    fc.assert(
      fc.property(fc.oneof(anyUnits, spiced), (s) => {
        const out = toPgText(s);
        expect(isPgText(out)).toBe(true);
        expect(out.length).toBe(s.length);
        if (isPgText(s)) expect(out).toBe(s);
      }),
      FC,
    );
  });
});

describe('R1 jsonPgProblem', () => {
  it.each([
    [{ a: 1, b: ['x', { c: null }] }, null],
    [{ 'k\u0000': 1 }, 'nul'],
    [{ k: ['ok', 'v\u0000'] }, 'nul'],
    [{ k: { deep: '\udc00' } }, 'lone_surrogate'],
    [JSON.parse('{"n": 1e400}'), 'non_finite_number'],
    [JSON.parse('[' + '['.repeat(70) + ']'.repeat(70) + ']'), 'too_deep'],
  ])('R1 %j → %s', (input, problem) => {
    expect(jsonPgProblem(input)).toBe(problem);
  });

  it('R1 property: a JSON value passes exactly when every key and string in it is storable', () => {
    const strings = (v: unknown): string[] =>
      typeof v === 'string' ? [v] : Array.isArray(v) ? v.flatMap(strings) : v && typeof v === 'object' ? Object.entries(v).flatMap(([k, x]) => [k, ...strings(x)]) : [];
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, spiced, fc.integer(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 3 }),
      object: fc.dictionary(spiced, tie('value'), { maxKeys: 3 }),
    })).value;
    fc.assert(fc.property(json, (v) => (jsonPgProblem(v) === null) === strings(v).every(storable)), FC);
  });
});
