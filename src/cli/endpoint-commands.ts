// The CLI's endpoint commands (O9, O13, M3–M6, M11): create, list, get, update, disable, enable, rotate-secret, recover,
// delete, test and status-changes, each one admin API request.
import {
  cursorPage,
  date,
  defined,
  list,
  oneOf,
  operator,
  optional,
  page,
  PAGE_HELP,
  pageQuery,
  required,
  seg,
  str,
  UsageError,
  type Command,
} from './command-args.js';
import { createTarget, DESTINATION_OPTIONS, destinationHelp, destinationOf } from './destination-flags.js';

const ORDERINGS = ['none', 'per_endpoint'] as const;
const SCHEMES = ['apipay', 'standard'] as const;

/** O17: --ed25519 on|off; absent = unchanged. */
function ed25519(values: Record<string, string | boolean | undefined>): boolean | undefined {
  const text = oneOf(values, 'ed25519', ['on', 'off'] as const);
  return text === undefined ? undefined : text === 'on';
}

/** M5: --rate-limit N (POSTs per second) or `none` (null: no throttle); absent = unchanged. */
function rateLimit(values: Record<string, string | boolean | undefined>): number | null | undefined {
  const text = optional(values, 'rate-limit');
  if (text === undefined) return undefined;
  if (text === 'none') return null;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 10_000)
    throw new UsageError('--rate-limit must be a whole number of requests per second from 1 to 10000, or none');
  return n;
}

export const ENDPOINT_COMMANDS: Command[] = [
  {
    words: ['endpoints', 'create'],
    options: {
      merchant: str,
      url: str,
      events: str,
      livemode: { type: 'boolean' },
      description: str,
      ordering: str,
      'rate-limit': str,
      scheme: str,
      ed25519: str,
      type: str,
      ...DESTINATION_OPTIONS,
    },
    summary: `--merchant ACCT (--url URL | --type rabbitmq|kafka FIELDS) --events a.b,c.d|* [--livemode] [--description TEXT] [--ordering none|per_endpoint] [--rate-limit N|none] [--scheme apipay|standard] [--ed25519 on|off]   (prints the secret once; the whpk_ public key is signing_public_key)
${destinationHelp()}
      (M11: a secret field is read from a file or an environment variable, else asked for without echo; never printed)`,
    build: (v) => {
      const target = createTarget(v); // M11: --url, or --type and the destination flags
      return {
        method: 'POST',
        path: '/webhook-endpoints',
        ...(target.secrets?.length ? { secrets: target.secrets } : {}),
        body: defined({
          merchant_account: required(v, 'merchant'),
          ...target.body,
          event_types: list(required(v, 'events')),
          livemode: v.livemode === true,
          description: optional(v, 'description'),
          ordering: oneOf(v, 'ordering', ORDERINGS),
          rate_limit_per_second: rateLimit(v),
          signature_scheme: oneOf(v, 'scheme', SCHEMES),
          ed25519_signing: ed25519(v),
        }),
      };
    },
  },
  {
    words: ['endpoints', 'list'],
    options: { merchant: str, ...page },
    summary: `[--merchant ACCT] ${PAGE_HELP}`,
    build: (v) => ({
      method: 'GET',
      path: '/webhook-endpoints',
      query: { merchant_account: optional(v, 'merchant'), ...pageQuery(v) },
    }),
  },
  {
    words: ['endpoints', 'get'],
    args: ['we_id'],
    summary: 'WE_ID',
    build: (_v, [id]) => ({ method: 'GET', path: `/webhook-endpoints/${seg(id!)}` }),
  },
  {
    words: ['endpoints', 'update'],
    args: ['we_id'],
    options: {
      url: str,
      events: str,
      description: str,
      ordering: str,
      'rate-limit': str,
      scheme: str,
      ed25519: str,
      ...DESTINATION_OPTIONS,
    },
    summary:
      'WE_ID [--url URL | the destination flags to change, as for create] [--events a.b,c.d|*] [--description TEXT] [--ordering none|per_endpoint] [--rate-limit N|none] [--scheme apipay|standard] [--ed25519 on|off]   (M11: a secret left out is kept)',
    build: (v, [id]) => {
      const destination = destinationOf(v, undefined); // M11: checked against the endpoint's own type by the API
      const body = defined({
        url: optional(v, 'url'),
        destination: destination?.fields,
        event_types: v.events === undefined ? undefined : list(String(v.events)),
        description: optional(v, 'description'),
        ordering: oneOf(v, 'ordering', ORDERINGS),
        rate_limit_per_second: rateLimit(v),
        signature_scheme: oneOf(v, 'scheme', SCHEMES),
        ed25519_signing: ed25519(v),
      });
      if (Object.keys(body).length === 0)
        throw new UsageError(
          'give at least one of --url, a destination flag, --events, --description, --ordering, --rate-limit, --scheme, --ed25519',
        );
      return {
        method: 'PATCH',
        path: `/webhook-endpoints/${seg(id!)}`,
        body,
        ...(destination?.secrets.length ? { secrets: destination.secrets } : {}),
      };
    },
  },
  {
    words: ['endpoints', 'disable'],
    args: ['we_id'],
    options: { reason: str },
    summary: 'WE_ID --reason TEXT',
    build: (v, [id]) => ({
      method: 'POST',
      path: `/webhook-endpoints/${seg(id!)}/disable`,
      body: { reason: required(v, 'reason') },
    }),
  },
  {
    words: ['endpoints', 'enable'],
    args: ['we_id'],
    summary: 'WE_ID',
    build: (_v, [id]) => ({ method: 'POST', path: `/webhook-endpoints/${seg(id!)}/enable` }),
  },
  {
    words: ['endpoints', 'rotate-secret'],
    args: ['we_id'],
    summary:
      'WE_ID   (prints the new secret once, and the new whpk_ key with ed25519; the previous ones sign for the grace period)',
    build: (_v, [id]) => ({ method: 'POST', path: `/webhook-endpoints/${seg(id!)}/secret/rotate` }),
  },
  {
    words: ['endpoints', 'recover'],
    args: ['we_id'],
    options: { since: str, ...operator },
    summary: 'WE_ID --since DATE [--reason TEXT]   (re-queues FAILED deliveries since then)',
    build: (v, [id]) => ({
      method: 'POST',
      path: `/webhook-endpoints/${seg(id!)}/recover`,
      body: defined({
        since: (required(v, 'since'), date(v, 'since')),
        operator: optional(v, 'operator'),
        reason: optional(v, 'reason'),
      }),
    }),
  },
  {
    words: ['endpoints', 'delete'],
    args: ['we_id'],
    summary: 'WE_ID',
    build: (_v, [id]) => ({ method: 'DELETE', path: `/webhook-endpoints/${seg(id!)}` }),
  },
  {
    words: ['endpoints', 'test'],
    args: ['we_id'],
    summary: 'WE_ID   (M6: sends a signed ping now; prints its delivery id)',
    build: (_v, [id]) => ({ method: 'POST', path: `/webhook-endpoints/${seg(id!)}/test` }),
  },
  {
    words: ['endpoints', 'status-changes'],
    options: { endpoint: str, to: str, ...cursorPage },
    summary: '[--endpoint WE_ID] [--to disabled|enabled] [--limit N] [--cursor C]   (M4: disables and enables, newest first)',
    build: (v) => ({
      method: 'GET',
      path: '/endpoint-status-changes',
      query: {
        endpoint_id: optional(v, 'endpoint'),
        to_status: oneOf(v, 'to', ['disabled', 'enabled']),
        cursor: optional(v, 'cursor'),
        limit: optional(v, 'limit'),
      },
    }),
  },
];
