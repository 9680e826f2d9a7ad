// The Kafka envelope of an outbound event (O1), its validation with a quarantine reason (O2), and the body that
// is serialized once for every attempt to every endpoint (O4).
import { z } from 'zod';
import { jsonPgProblem, PG_TEXT_MESSAGES, pgTextProblem } from '../shared/pg-text.js';

export const EVENT_ID_PATTERN = /^evt_[A-Za-z0-9_]{1,200}$/;
/** R1: the longest merchant account we store (and index); longer ones are quarantined, never truncated. */
export const MAX_MERCHANT_ACCOUNT_LENGTH = 200;
/** R1: `created` is unix seconds up to 9999-12-31, so it is a valid timestamp wherever it is turned into one. */
export const MAX_CREATED_UNIX = 253_402_300_799;

/** R1: a string PostgreSQL can store (no U+0000, no lone surrogate), at most `max` UTF-16 units. */
const pgString = (max: number) =>
  z
    .string()
    .max(max)
    .superRefine((value, ctx) => {
      const problem = pgTextProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: PG_TEXT_MESSAGES[problem] });
    });

export const envelopeSchema = z.object({
  id: z.string().regex(EVENT_ID_PATTERN),
  object: z.literal('event'),
  type: z.string().regex(/^[a-z0-9_]+(\.[a-z0-9_]+)*$/).max(200),
  created: z.number().int().positive().max(MAX_CREATED_UNIX),
  /** M9: the catalog version of the type that `data.object` follows; absent means 1. */
  version: z.number().int().min(1).max(999).optional(),
  livemode: z.boolean(),
  // Loose: data.previous_attributes and other siblings of data.object are kept in the body. R1: every key and
  // string in it must be storable text and every number finite (1e400 would silently become null in the body).
  data: z.looseObject({ object: z.record(z.string(), z.unknown()) }).superRefine((data, ctx) => {
    const problem = jsonPgProblem(data);
    if (!problem) return;
    const message = problem === 'non_finite_number' ? 'contains a number out of range' : problem === 'too_deep' ? 'is nested too deeply' : `contains text that ${PG_TEXT_MESSAGES[problem].replace('must not', 'cannot')}`;
    ctx.addIssue({ code: 'custom', message });
  }),
  /** The merchant account the event belongs to; producers use either name. */
  account: pgString(MAX_MERCHANT_ACCOUNT_LENGTH).min(1).optional(),
  merchant_account: pgString(MAX_MERCHANT_ACCOUNT_LENGTH).min(1).optional(),
});

export type Envelope = z.output<typeof envelopeSchema>;

export interface ValidEvent {
  eventPublicId: string;
  merchantAccount: string;
  type: string;
  /** M9: the catalog version of the type (1 when the envelope names none). */
  version: number;
  /** O21: data.object, for the catalog check before fan-out (the body already holds it serialized). */
  object: Record<string, unknown>;
  livemode: boolean;
  createdUnix: number;
  /** O4: the exact bytes every attempt POSTs. */
  body: Buffer;
  /** O20: data.object.payment_reference, or the id of a data.object that is a payment; for the Temporal UI's search. */
  paymentReference?: string;
}

/** O20: the payment an event is about, when its object says so (ledger events carry payment_reference). */
export function paymentReferenceOf(object: Record<string, unknown>): string | undefined {
  const ref = object.payment_reference ?? (object.object === 'payment' ? object.id : undefined);
  return typeof ref === 'string' && ref.length > 0 && ref.length <= 200 ? ref : undefined;
}

export type ParseResult = { ok: true; event: ValidEvent } | { ok: false; reason: string; detail?: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Never throws: every input becomes an event or a reason (invalid_utf8, invalid_json, not_an_object,
 * missing_<field>, malformed_<field>, missing_merchant_account, conflicting_merchant_account, empty_value).
 */
export function parseEnvelope(value: Buffer | null): ParseResult {
  if (!value || value.length === 0) return { ok: false, reason: 'empty_value' };
  let text: string;
  try {
    text = utf8.decode(value);
  } catch {
    return { ok: false, reason: 'invalid_utf8' };
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: 'invalid_json', detail: (error as Error).message };
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return { ok: false, reason: 'not_an_object' };

  const parsed = envelopeSchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    // R1: the reason names schema fields only (at most two levels), never a key taken from the message.
    const path = issue.path.map(String).slice(0, 2).filter((segment) => /^[a-z_]{1,40}$/.test(segment));
    const present = valueAt(document, path) !== undefined;
    return { ok: false, reason: `${present ? 'malformed' : 'missing'}_${path.join('_') || 'envelope'}`, detail: issue.message };
  }
  const envelope = parsed.data;
  if (envelope.account && envelope.merchant_account && envelope.account !== envelope.merchant_account) {
    return { ok: false, reason: 'conflicting_merchant_account' };
  }
  const merchantAccount = envelope.merchant_account ?? envelope.account;
  if (!merchantAccount) return { ok: false, reason: 'missing_merchant_account' };

  // Fixed key order, serialized here once; the merchant sees the account it owns, like Stripe's Connect events.
  const body = Buffer.from(
    JSON.stringify({
      id: envelope.id,
      object: 'event',
      account: merchantAccount,
      type: envelope.type,
      ...(envelope.version !== undefined ? { version: envelope.version } : {}),
      created: envelope.created,
      livemode: envelope.livemode,
      data: envelope.data,
    }),
    'utf8',
  );
  return {
    ok: true,
    event: {
      eventPublicId: envelope.id,
      merchantAccount,
      type: envelope.type,
      version: envelope.version ?? 1,
      object: envelope.data.object,
      livemode: envelope.livemode,
      createdUnix: envelope.created,
      body,
      ...(paymentReferenceOf(envelope.data.object) ? { paymentReference: paymentReferenceOf(envelope.data.object) } : {}),
    },
  };
}

function valueAt(document: unknown, path: string[]): unknown {
  let current: unknown = document;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
