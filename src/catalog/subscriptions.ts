// M8: what an endpoint may subscribe to. A pattern is `*` (every type), a prefix wildcard `payment.*` (every type
// below it), a type `payment.succeeded` (every version of it) or a type pinned to one version
// `payment.succeeded@1` (M9). Each must name something in the catalog: a typo is refused with the nearest name,
// because a subscription that never matches is silent data loss for the merchant.
import type { Catalog } from './catalog.js';

export const PATTERN_SYNTAX = /^(\*|[a-z][a-z0-9_]*(\.[a-z0-9_]+)*(\.\*|@[1-9][0-9]{0,2})?)$/;

export type PatternCheck = { ok: true } | { ok: false; message: string; suggestion?: string };

interface Parsed {
  kind: 'all' | 'prefix' | 'type';
  name: string;
  version?: number;
}

function parse(pattern: string): Parsed {
  if (pattern === '*') return { kind: 'all', name: '' };
  if (pattern.endsWith('.*')) return { kind: 'prefix', name: pattern.slice(0, -1) };
  const at = pattern.indexOf('@');
  return at < 0
    ? { kind: 'type', name: pattern }
    : { kind: 'type', name: pattern.slice(0, at), version: Number(pattern.slice(at + 1)) };
}

/**
 * M9: does this one pattern take an event of `type` in `version`? A pinned pattern (`payment.succeeded@1`) takes that
 * version only; every other pattern takes the type's `latest` catalog version (any version when the type is not in
 * the catalog: `latest` undefined). Patterns are stored as checked, so no catalog here.
 */
export function patternMatches(pattern: string, type: string, version: number, latest?: number): boolean {
  const p = parse(pattern);
  const current = latest === undefined || version === latest;
  if (p.kind === 'all') return current;
  if (p.kind === 'prefix') return type.startsWith(p.name) && current;
  return p.name === type && (p.version === undefined ? current : p.version === version);
}

export const subscribesTo = (patterns: readonly string[], type: string, version = 1, latest?: number): boolean =>
  patterns.some((pattern) => patternMatches(pattern, type, version, latest));

/** M9: the patterns name the type but not this version of it (the event is not theirs: counted, not delivered). */
export const namesOtherVersion = (patterns: readonly string[], type: string, version: number, latest?: number): boolean =>
  !subscribesTo(patterns, type, version, latest) &&
  patterns.some((pattern) => patternMatches(pattern, type, latest ?? version, latest) || pinnedTo(pattern, type));

const pinnedTo = (pattern: string, type: string) => pattern.startsWith(`${type}@`);

export function checkPattern(catalog: Catalog, pattern: string): PatternCheck {
  if (!PATTERN_SYNTAX.test(pattern))
    return {
      ok: false,
      message: `"${pattern}" is not an event type pattern (payment.succeeded, payment.succeeded@1, payment.* or *)`,
    };
  const p = parse(pattern);
  if (p.kind === 'all') return { ok: true };
  if (p.kind === 'prefix') {
    if (catalog.types.some((t) => t.startsWith(p.name))) return { ok: true };
    const suggestion = nearest(p.name.slice(0, -1), [...new Set(catalog.types.map((t) => t.split('.')[0]!))]);
    return refusal(`no event type starts with ${p.name}`, suggestion === undefined ? undefined : `${suggestion}.*`);
  }
  const versions = catalog.versions(p.name);
  if (versions.length === 0) return refusal(`${p.name} is not an event type`, nearest(p.name, catalog.types));
  if (p.version !== undefined && !versions.some((v) => v.version === p.version))
    return refusal(
      `${p.name} has no version ${p.version} (it has ${versions.map((v) => v.version).join(', ')})`,
      `${p.name}@${versions.at(-1)!.version}`,
    );
  return { ok: true };
}

function refusal(message: string, suggestion: string | undefined): PatternCheck {
  return suggestion === undefined
    ? { ok: false, message }
    : { ok: false, message: `${message}; did you mean ${suggestion}?`, suggestion };
}

/** The candidate closest to `name` by edit distance, when it is close enough to be a typo of it. */
export function nearest(name: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate);
    if (!best || distance < best.distance) best = { candidate, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(name.length / 3)) ? best.candidate : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

export interface DeprecatedSubscription {
  pattern: string;
  type: string;
  on: string;
  replacedBy?: string;
}

/** M8: the deprecated types an endpoint's named patterns take (not `*`: it asked for everything, not for these). */
export function deprecatedSubscriptions(catalog: Catalog, patterns: readonly string[]): DeprecatedSubscription[] {
  const out: DeprecatedSubscription[] = [];
  for (const pattern of patterns) {
    if (pattern === '*') continue;
    for (const type of catalog.types) {
      const latest = catalog.get(type)!;
      if (latest.deprecated && catalog.versions(type).some((v) => patternMatches(pattern, type, v.version, latest.version)))
        out.push({ pattern, type, ...latest.deprecated });
    }
  }
  return out;
}
