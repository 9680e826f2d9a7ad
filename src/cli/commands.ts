// The CLI's commands: each maps its arguments to one admin API request (requirements §4: the same operations as the API).
import type { ParseArgsConfig } from 'node:util';
import { AMOUNT_MINOR, CURRENCY, OPERATOR_MAX, REASON_MAX, resolutionInputProblem, textProblem } from '../shared/operator-input.js';

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | undefined>;

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | undefined>;
  body?: Record<string, unknown>;
  /** The response is text (CSV), printed as it is. */
  raw?: boolean;
}

export interface Command {
  words: [string, string];
  args?: string[];
  options?: Options;
  summary: string;
  build(values: Values, args: string[]): ApiRequest;
  /** The exit code for a successful answer (default 0): `ledger check` exits 1 when it found violations. */
  exitCode?(body: unknown): number;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

const str = { type: 'string' } as const;
const page = { cursor: str, limit: str } as const;
const operator = { operator: str, reason: str } as const;
const seg = encodeURIComponent;

function required(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}
const optional = (values: Values, name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
/** R2: operator text checked before it is sent (the API checks again). */
function operatorText(values: Values, name: 'operator' | 'reason'): string {
  const value = required(values, name);
  const problem = textProblem(value, name === 'operator' ? OPERATOR_MAX : REASON_MAX);
  if (problem) throw new UsageError(`--${name} ${problem}`);
  return value;
}
const list = (text: string) => text.split(',').map((s) => s.trim()).filter(Boolean);
/** Only the fields the operator gave, so PATCH changes nothing else. */
const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

export const COMMANDS: Command[] = [
  {
    words: ['endpoints', 'create'],
    options: { merchant: str, url: str, events: str, livemode: { type: 'boolean' }, description: str },
    summary: '--merchant ACCT --url URL --events a.b,c.d|* [--livemode] [--description TEXT]   (prints the secret once)',
    build: (v) => ({
      method: 'POST',
      path: '/webhook-endpoints',
      body: defined({
        merchant_account: required(v, 'merchant'),
        url: required(v, 'url'),
        event_types: list(required(v, 'events')),
        livemode: v.livemode === true,
        description: optional(v, 'description'),
      }),
    }),
  },
  {
    words: ['endpoints', 'list'],
    options: { merchant: str, ...page },
    summary: '[--merchant ACCT] [--cursor C] [--limit N]',
    build: (v) => ({ method: 'GET', path: '/webhook-endpoints', query: { merchant_account: optional(v, 'merchant'), cursor: optional(v, 'cursor'), limit: optional(v, 'limit') } }),
  },
  { words: ['endpoints', 'get'], args: ['we_id'], summary: 'WE_ID', build: (_v, [id]) => ({ method: 'GET', path: `/webhook-endpoints/${seg(id!)}` }) },
  {
    words: ['endpoints', 'update'],
    args: ['we_id'],
    options: { url: str, events: str, description: str },
    summary: 'WE_ID [--url URL] [--events a.b,c.d|*] [--description TEXT]',
    build: (v, [id]) => {
      const body = defined({ url: optional(v, 'url'), event_types: v.events === undefined ? undefined : list(String(v.events)), description: optional(v, 'description') });
      if (Object.keys(body).length === 0) throw new UsageError('give at least one of --url, --events, --description');
      return { method: 'PATCH', path: `/webhook-endpoints/${seg(id!)}`, body };
    },
  },
  {
    words: ['endpoints', 'disable'],
    args: ['we_id'],
    options: { reason: str },
    summary: 'WE_ID --reason TEXT',
    build: (v, [id]) => ({ method: 'POST', path: `/webhook-endpoints/${seg(id!)}/disable`, body: { reason: required(v, 'reason') } }),
  },
  { words: ['endpoints', 'enable'], args: ['we_id'], summary: 'WE_ID', build: (_v, [id]) => ({ method: 'POST', path: `/webhook-endpoints/${seg(id!)}/enable` }) },
  {
    words: ['endpoints', 'rotate-secret'],
    args: ['we_id'],
    summary: 'WE_ID   (prints the new secret once; the previous one signs for the grace period)',
    build: (_v, [id]) => ({ method: 'POST', path: `/webhook-endpoints/${seg(id!)}/secret/rotate` }),
  },
  {
    words: ['endpoints', 'recover'],
    args: ['we_id'],
    options: { since: str, ...operator },
    summary: "WE_ID --since ISO_TIME [--operator WHO] [--reason TEXT]   (re-queues FAILED deliveries since then)",
    build: (v, [id]) => ({ method: 'POST', path: `/webhook-endpoints/${seg(id!)}/recover`, body: defined({ since: required(v, 'since'), operator: optional(v, 'operator'), reason: optional(v, 'reason') }) }),
  },
  { words: ['endpoints', 'delete'], args: ['we_id'], summary: 'WE_ID', build: (_v, [id]) => ({ method: 'DELETE', path: `/webhook-endpoints/${seg(id!)}` }) },
  {
    words: ['deliveries', 'list'],
    options: { status: str, endpoint: str, event: str, ...page },
    summary: '[--status PENDING|RETRYING|DELIVERED|FAILED] [--endpoint WE_ID] [--event EVT_ID] [--cursor C] [--limit N]',
    build: (v) => ({
      method: 'GET',
      path: '/webhook-deliveries',
      query: { status: optional(v, 'status'), endpoint_id: optional(v, 'endpoint'), event_id: optional(v, 'event'), cursor: optional(v, 'cursor'), limit: optional(v, 'limit') },
    }),
  },
  { words: ['deliveries', 'get'], args: ['whd_id'], summary: 'WHD_ID   (with every attempt)', build: (_v, [id]) => ({ method: 'GET', path: `/webhook-deliveries/${seg(id!)}` }) },
  {
    words: ['deliveries', 'retry'],
    args: ['whd_id'],
    options: operator,
    summary: 'WHD_ID [--operator WHO] [--reason TEXT]',
    build: (v, [id]) => ({ method: 'POST', path: `/webhook-deliveries/${seg(id!)}/retry`, body: defined({ operator: optional(v, 'operator'), reason: optional(v, 'reason') }) }),
  },
  { words: ['events', 'get'], args: ['evt_id'], summary: 'EVT_ID   (with its deliveries)', build: (_v, [id]) => ({ method: 'GET', path: `/events/${seg(id!)}` }) },
  {
    words: ['reconciliations', 'list'],
    options: { state: str, provider: str, ...page },
    summary: '[--state received|reconciling|applied|rejected|manual_review] [--provider NAME] [--cursor C] [--limit N]',
    build: (v) => ({ method: 'GET', path: '/reconciliations', query: { state: optional(v, 'state'), provider: optional(v, 'provider'), cursor: optional(v, 'cursor'), limit: optional(v, 'limit') } }),
  },
  { words: ['reconciliations', 'get'], args: ['id'], summary: 'ID', build: (_v, [id]) => ({ method: 'GET', path: `/reconciliations/${seg(id!)}` }) },
  {
    words: ['reconciliations', 'resolve'],
    args: ['id'],
    options: { decision: str, post: str, amount: str, currency: str, ...operator },
    summary:
      'ID --decision applied|acknowledged|rejected --operator WHO --reason TEXT [--post provider|webhook | --amount MINOR --currency CUR]',
    build: (v, [id]) => {
      const decision = required(v, 'decision');
      const amount = optional(v, 'amount');
      const currency = optional(v, 'currency');
      const postWord = optional(v, 'post');
      if ((amount === undefined) !== (currency === undefined)) throw new UsageError('--amount and --currency go together');
      if (amount !== undefined && postWord !== undefined) throw new UsageError('give --post or --amount/--currency, not both');
      if (postWord !== undefined && postWord !== 'provider' && postWord !== 'webhook') throw new UsageError('--post must be provider or webhook');
      const body = { decision, operator: operatorText(v, 'operator'), reason: operatorText(v, 'reason') };
      const post = amount !== undefined ? { amountMinor: amount, currency: currency! } : postWord;
      const problem = resolutionInputProblem({ ...body, ...(post !== undefined ? { post } : {}) });
      if (problem) throw new UsageError(`--${problem.replace('post.amountMinor', 'amount').replace('post.currency', 'currency')}`);
      const wire = typeof post === 'object' ? { amount_minor: post.amountMinor, currency: post.currency } : post;
      return { method: 'POST', path: `/reconciliations/${seg(id!)}/resolution`, body: defined({ ...body, post: wire }) };
    },
  },
  {
    words: ['ledger', 'adjust'],
    options: { provider: str, payment: str, amount: str, currency: str, reconciliation: str, 'idempotency-key': str, ...operator },
    summary: '--provider NAME --payment REF --amount=±MINOR --currency CUR --operator WHO --reason TEXT [--reconciliation ID] [--idempotency-key K]',
    build: (v) => {
      const amount = required(v, 'amount');
      if (!/^-?[1-9]\d{0,17}$/.test(amount)) throw new UsageError('--amount must be non-zero signed minor units, e.g. -50');
      const currency = required(v, 'currency');
      if (!CURRENCY.test(currency)) throw new UsageError('--currency must be an ISO 4217 code');
      return {
        method: 'POST',
        path: '/ledger/adjustments',
        body: defined({
          provider: required(v, 'provider'),
          payment_reference: required(v, 'payment'),
          amount_minor: amount,
          currency,
          operator: operatorText(v, 'operator'),
          reason: operatorText(v, 'reason'),
          reconciliation_id: optional(v, 'reconciliation'),
          idempotency_key: optional(v, 'idempotency-key'),
        }),
      };
    },
  },
  {
    words: ['ledger', 'check'],
    options: { provider: str, from: str, to: str },
    summary: '[--provider NAME] [--from ISO_TIME] [--to ISO_TIME]   (exit 1 and the violations when the ledger is not right)',
    build: (v) => ({ method: 'GET', path: '/ledger/check', query: { provider: optional(v, 'provider'), from: optional(v, 'from'), to: optional(v, 'to') } }),
    exitCode: (body) => ((body as { ok?: unknown }).ok === false ? 1 : 0),
  },
  {
    words: ['keys', 'create'],
    options: { role: str, name: str, merchant: str },
    summary: '--role viewer|operator|admin|merchant --name WHO [--merchant ACCT]   (prints the key once; --merchant only for role merchant)',
    build: (v) => ({ method: 'POST', path: '/api-keys', body: defined({ name: required(v, 'name'), role: required(v, 'role'), merchant_account: optional(v, 'merchant') }) }),
  },
  {
    words: ['keys', 'list'],
    options: { 'include-revoked': { type: 'boolean' }, ...page },
    summary: '[--include-revoked] [--cursor C] [--limit N]',
    build: (v) => ({
      method: 'GET',
      path: '/api-keys',
      query: { include_revoked: v['include-revoked'] === true ? 'true' : undefined, cursor: optional(v, 'cursor'), limit: optional(v, 'limit') },
    }),
  },
  { words: ['keys', 'revoke'], args: ['apk_id'], summary: 'APK_ID   (the key stops working at once)', build: (_v, [id]) => ({ method: 'POST', path: `/api-keys/${seg(id!)}/revoke` }) },
  {
    words: ['secrets', 'reencrypt'],
    summary: '  (A8: every endpoint secret re-sealed with the current master key; then the previous keys can go)',
    build: () => ({ method: 'POST', path: '/secrets/reencrypt' }),
  },
  {
    words: ['exports', 'resolutions'],
    options: { from: str, to: str, provider: str },
    summary: '[--from ISO_TIME] [--to ISO_TIME] [--provider NAME]   (operator resolutions as CSV; default: everything until now)',
    build: (v) => ({ method: 'GET', path: '/exports/operator-resolutions.csv', query: { from: optional(v, 'from'), to: optional(v, 'to'), provider: optional(v, 'provider') }, raw: true }),
  },
  {
    words: ['exports', 'ledger'],
    options: { from: str, to: str, provider: str },
    summary: '[--from ISO_TIME] [--to ISO_TIME] [--provider NAME]   (every ledger entry of the period as CSV)',
    build: (v) => ({ method: 'GET', path: '/exports/ledger.csv', query: { from: optional(v, 'from'), to: optional(v, 'to'), provider: optional(v, 'provider') }, raw: true }),
  },
];
