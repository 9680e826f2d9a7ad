// The CLI's commands: each maps its arguments to one admin API request (requirements §4: the same operations as the API).
import { CURRENCY, resolutionInputProblem } from '../shared/operator-input.js';
import {
  cursorPage,
  date,
  defined,
  oneOf,
  operator,
  operatorText,
  optional,
  optionalOperatorText,
  page,
  PAGE_HELP,
  pageQuery,
  required,
  seg,
  str,
  UsageError,
  type Command,
} from './command-args.js';

import { AUDIT_COMMANDS } from './audit-commands.js';
import { ENDPOINT_COMMANDS } from './endpoint-commands.js';

export { UsageError, type ApiRequest, type Command } from './command-args.js';

const DELIVERY_STATUSES = ['PENDING', 'RETRYING', 'DELIVERED', 'FAILED'] as const;
const RECONCILIATION_STATES = ['received', 'reconciling', 'applied', 'rejected', 'manual_review'] as const;

export const COMMANDS: Command[] = [
  ...ENDPOINT_COMMANDS,
  {
    words: ['deliveries', 'list'],
    options: { status: str, endpoint: str, event: str, 'payment-reference': str, merchant: str, 'event-type': str, ...page },
    summary: `[--status pending|retrying|delivered|failed] [--endpoint WE_ID] [--event EVT_ID] [--payment-reference REF] [--merchant ACCT] [--event-type TYPE] ${PAGE_HELP}`,
    build: (v) => ({
      method: 'GET',
      path: '/webhook-deliveries',
      query: {
        status: oneOf(v, 'status', DELIVERY_STATUSES),
        endpoint_id: optional(v, 'endpoint'),
        event_id: optional(v, 'event'),
        payment_reference: optional(v, 'payment-reference'), // C4
        merchant_account: optional(v, 'merchant'),
        event_type: optional(v, 'event-type'),
        ...pageQuery(v),
      },
    }),
  },
  { words: ['deliveries', 'get'], args: ['whd_id'], summary: 'WHD_ID   (with every attempt)', build: (_v, [id]) => ({ method: 'GET', path: `/webhook-deliveries/${seg(id!)}` }) },
  {
    words: ['deliveries', 'retry'],
    args: ['whd_id'],
    options: operator,
    summary: 'WHD_ID [--reason TEXT]',
    build: (v, [id]) => ({ method: 'POST', path: `/webhook-deliveries/${seg(id!)}/retry`, body: defined({ operator: optional(v, 'operator'), reason: optional(v, 'reason') }) }),
  },
  {
    words: ['deliveries', 'skip'],
    args: ['whd_id'],
    options: operator,
    summary: 'WHD_ID [--operator WHO] [--reason TEXT]   (M3: the next delivery to its ordered endpoint stops waiting for it)',
    build: (v, [id]) => ({ method: 'POST', path: `/webhook-deliveries/${seg(id!)}/skip`, body: defined({ operator: optional(v, 'operator'), reason: optional(v, 'reason') }) }),
  },
  { words: ['events', 'get'], args: ['evt_id'], summary: 'EVT_ID   (with its deliveries)', build: (_v, [id]) => ({ method: 'GET', path: `/events/${seg(id!)}` }) },
  {
    words: ['events', 'expunge'],
    args: ['evt_id'],
    options: { reason: str },
    summary: 'EVT_ID --reason TEXT   (O19, admin: removes the body now; the event, deliveries and attempts stay)',
    build: (v, [id]) => ({ method: 'POST', path: `/events/${seg(id!)}/expunge`, body: { reason: required(v, 'reason') } }),
  },
  {
    words: ['events', 'trigger'],
    args: ['type'],
    options: { merchant: str },
    summary: 'TYPE [--merchant ACCT]   (M7: a sample test-mode event, e.g. payment.succeeded; --merchant with a staff key)',
    build: (v, [type]) => ({ method: 'POST', path: '/events/trigger', body: defined({ type, merchant_account: optional(v, 'merchant') }) }),
  },
  {
    words: ['reconciliations', 'list'],
    options: { state: str, provider: str, 'payment-reference': str, 'provider-event': str, ...page },
    summary: `[--state received|reconciling|applied|rejected|manual_review] [--provider NAME] [--payment-reference REF] [--provider-event ID] ${PAGE_HELP}`,
    build: (v) => ({
      method: 'GET',
      path: '/reconciliations',
      query: {
        state: oneOf(v, 'state', RECONCILIATION_STATES),
        provider: optional(v, 'provider'),
        payment_reference: optional(v, 'payment-reference'), // C4
        provider_event_id: optional(v, 'provider-event'),
        ...pageQuery(v),
      },
    }),
  },
  { words: ['reconciliations', 'get'], args: ['id'], summary: 'ID', build: (_v, [id]) => ({ method: 'GET', path: `/reconciliations/${seg(id!)}` }) },
  {
    words: ['reconciliations', 'resolve'],
    args: ['id'],
    options: { decision: str, post: str, amount: str, currency: str, 'currency-reason': str, ...operator },
    summary:
      'ID --decision applied|acknowledged|rejected --reason TEXT [--post provider|webhook | --amount MINOR --currency CUR [--currency-reason TEXT]]   (you are the operator: your key)',
    build: (v, [id]) => {
      const decision = required(v, 'decision').toLowerCase();
      const amount = optional(v, 'amount');
      const currency = optional(v, 'currency');
      const postWord = optional(v, 'post');
      if ((amount === undefined) !== (currency === undefined)) throw new UsageError('--amount and --currency go together');
      if (amount !== undefined && postWord !== undefined) throw new UsageError('give --post or --amount/--currency, not both');
      if (postWord !== undefined && postWord !== 'provider' && postWord !== 'webhook') throw new UsageError('--post must be provider or webhook');
      const body = { decision, operator: optionalOperatorText(v, 'operator'), reason: operatorText(v, 'reason') };
      const post = amount !== undefined ? { amountMinor: amount, currency: currency! } : postWord;
      // The operator is checked above when given; the API fills it in from the key (A2).
      const problem = resolutionInputProblem({ ...body, operator: body.operator ?? 'your key', ...(post !== undefined ? { post } : {}) });
      if (problem) throw new UsageError(`--${problem.replace('post.amountMinor', 'amount').replace('post.currency', 'currency')}`);
      const currencyReason = optional(v, 'currency-reason'); // A11: another currency than the payment's says why
      if (currencyReason !== undefined && amount === undefined) throw new UsageError('--currency-reason goes with --amount and --currency');
      const wire = typeof post === 'object' ? defined({ amount_minor: post.amountMinor, currency: post.currency, currency_reason: currencyReason }) : post;
      return { method: 'POST', path: `/reconciliations/${seg(id!)}/resolution`, body: defined({ ...body, post: wire }) };
    },
  },
  // A5: a second principal approves the resolution waiting under dual control; the proposer or anyone cancels it.
  {
    words: ['reconciliations', 'approve'],
    args: ['id'],
    summary: 'ID   (dual control: approve the waiting resolution; not the key that proposed it)',
    build: (_v, [id]) => ({ method: 'POST', path: `/reconciliations/${seg(id!)}/resolution/approve` }),
  },
  {
    words: ['reconciliations', 'cancel'],
    args: ['id'],
    summary: 'ID   (dual control: withdraw the waiting resolution; back to manual_review)',
    build: (_v, [id]) => ({ method: 'POST', path: `/reconciliations/${seg(id!)}/resolution/cancel` }),
  },
  {
    words: ['ledger', 'approve'],
    args: ['adp_id'],
    summary: 'ADP_ID   (dual control: post the waiting adjustment; not the key that proposed it)',
    build: (_v, [id]) => ({ method: 'POST', path: `/ledger/adjustments/proposals/${seg(id!)}/approve` }),
  },
  {
    words: ['ledger', 'cancel'],
    args: ['adp_id'],
    summary: 'ADP_ID   (dual control: withdraw the waiting adjustment)',
    build: (_v, [id]) => ({ method: 'POST', path: `/ledger/adjustments/proposals/${seg(id!)}/cancel` }),
  },
  {
    words: ['ledger', 'adjust'],
    options: { provider: str, payment: str, amount: str, currency: str, 'currency-reason': str, reconciliation: str, 'idempotency-key': str, ...operator },
    summary:
      '--provider NAME --payment REF --amount=±MINOR --currency CUR --reason TEXT [--currency-reason TEXT] [--reconciliation ID] [--idempotency-key K]',
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
          operator: optionalOperatorText(v, 'operator'),
          reason: operatorText(v, 'reason'),
          reconciliation_id: optional(v, 'reconciliation'),
          idempotency_key: optional(v, 'idempotency-key'),
          currency_reason: optional(v, 'currency-reason'), // A11
        }),
      };
    },
  },
  {
    words: ['ledger', 'check'],
    options: { provider: str, from: str, to: str },
    summary: '[--provider NAME] [--from DATE] [--to DATE]   (exit 1 and the violations when the ledger is not right)',
    build: (v) => ({ method: 'GET', path: '/ledger/check', query: { provider: optional(v, 'provider'), from: date(v, 'from'), to: date(v, 'to') } }),
    exitCode: (body) => ((body as { ok?: unknown }).ok === false ? 1 : 0),
  },
  {
    words: ['keys', 'create'],
    options: { role: str, name: str, merchant: str, person: str, kind: str },
    summary:
      '--role viewer|operator|admin|merchant --name KEY [--person WHO] [--kind human|service] [--merchant ACCT]   (prints the key once; A12: the key belongs to --person, default --name)',
    build: (v) => ({
      method: 'POST',
      path: '/api-keys',
      body: defined({ name: required(v, 'name'), role: required(v, 'role'), merchant_account: optional(v, 'merchant'), person: optional(v, 'person'), kind: optional(v, 'kind') }),
    }),
  },
  {
    words: ['keys', 'list'],
    options: { 'include-revoked': { type: 'boolean' }, ...cursorPage },
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
    summary: '[--from DATE] [--to DATE] [--provider NAME]   (operator resolutions as CSV; default: everything until now)',
    build: (v) => ({ method: 'GET', path: '/exports/operator-resolutions.csv', query: { from: date(v, 'from'), to: date(v, 'to'), provider: optional(v, 'provider') }, raw: true }),
  },
  {
    words: ['exports', 'ledger'],
    options: { from: str, to: str, provider: str },
    summary: '[--from DATE] [--to DATE] [--provider NAME]   (every ledger entry of the period as CSV)',
    build: (v) => ({ method: 'GET', path: '/exports/ledger.csv', query: { from: date(v, 'from'), to: date(v, 'to'), provider: optional(v, 'provider') }, raw: true }),
  },
  {
    words: ['portal-link'],
    args: ['merchant_account'],
    options: { ttl: str },
    summary: 'ACCT [--ttl 15m]   (C2, A15: prints a signed single-use link to the portal of ACCT, then its id; it expires, default 15m)',
    build: (v, [account]) => ({ method: 'POST', path: '/portal-links', body: defined({ merchant_account: account!, ttl: optional(v, 'ttl') }) }),
    format: (body) => {
      const { url, id } = body as { url?: unknown; id?: unknown };
      return typeof id === 'string' ? `${String(url)}\nid: ${id}` : String(url);
    },
  },
  {
    words: ['portal-links', 'revoke'],
    args: ['pl_id'],
    summary: 'PL_ID   (A15: the link can no longer be opened and the session it opened ends at once)',
    build: (_v, [id]) => ({ method: 'DELETE', path: `/portal-links/${seg(id!)}` }),
  },
  ...AUDIT_COMMANDS,
];
