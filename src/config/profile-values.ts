// The value types of the adoption profile (requirements §5): durations, secret references (env:NAME), amounts in
// major units (A22) and token buckets (A7), each a zod schema whose message names what is wrong.
import { z } from 'zod';
import { MAJOR_AMOUNT } from '../shared/currency.js';
import { parseDuration } from './duration.js';

export const duration = z.string().transform((text, ctx) => {
  try {
    return parseDuration(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});

/** `env:NAME` → the value of that environment variable, resolved at load time so a missing secret stops the start. */
export const secretRef = z.string().transform((ref, ctx) => {
  const match = /^env:([A-Z_][A-Z0-9_]*)$/.exec(ref);
  if (!match) {
    ctx.addIssue({ code: 'custom', message: `"${ref}" is not a secret reference (use env:NAME)` });
    return z.NEVER;
  }
  const value = process.env[match[1]!];
  if (!value) {
    ctx.addIssue({ code: 'custom', message: `environment variable ${match[1]} is not set` });
    return z.NEVER;
  }
  return value;
});

/** A22: a non-negative amount in major units, as a YAML number or a decimal string (1000, 1000.50, "250.125"). */
export const majorAmount = z.unknown().transform((value, ctx) => {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  if (!MAJOR_AMOUNT.test(text)) {
    ctx.addIssue({ code: 'custom', message: 'must be a non-negative amount in major units with at most 6 decimals (e.g. 1000)' });
    return z.NEVER;
  }
  return text;
});

/** A7: a token bucket, `per_second` refill up to `burst` requests at once. */
export const rateLimit = z.strictObject({ per_second: z.number().positive(), burst: z.number().int().min(1) });
