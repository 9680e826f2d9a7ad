// M11: how a destination type is described ONCE — its fields (name, label, help, required, secret, a zod check of the
// text value, a default) — and the one validation every surface runs on it: the admin API (create and update), the
// CLI's flags (src/cli/endpoint-commands.ts) and the portal's form all read these descriptions, so a field added here
// appears everywhere with the same rule. Values are text (a flag, a form input); secret fields (passwords) are split
// off for sealing (./credentials.ts) and never shown again.
import { z } from 'zod';
import type { DestinationType } from '../../shared/outbound.js';

export interface DestinationField {
  /** snake_case: the admin API's key, the CLI's --<name with dashes> flag, the form input's name. */
  name: string;
  label: string;
  help: string;
  required: boolean;
  /** Sealed at rest, never returned, logged or audited after creation. */
  secret?: boolean;
  /** The value used when the field is left out (not for required ones). */
  default?: string;
  example?: string;
  check: z.ZodType<string>;
}

export interface DestinationDescription {
  type: Exclude<DestinationType, 'http'>;
  label: string;
  help: string;
  fields: DestinationField[];
  /** The endpoint's `url` column for this destination: where it goes, never a credential (shown in lists and logs). */
  locator(config: Record<string, string>): string;
}

export interface ParsedDestination {
  config: Record<string, string>;
  credentials: Record<string, string>;
}

export interface FieldIssue {
  field: string;
  message: string;
}

export class DestinationInvalidError extends Error {
  override name = 'DestinationInvalidError';
  constructor(readonly issues: FieldIssue[]) {
    super(issues.map((i) => `${i.field}: ${i.message}`).join('; '));
  }
}

/** host:port, a host name or an IP literal (IPv6 in brackets); the port 1–65535. */
export const hostPort = z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/, 'must be host:port');
export const hostName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)$/, 'must be a host name or an IP address');
export const port = z
  .string()
  .regex(/^\d{1,5}$/, 'must be a port number')
  .refine((p) => Number(p) >= 1 && Number(p) <= 65535, 'must be 1–65535');
export const bool = z.enum(['true', 'false'], { message: 'must be true or false' });

/**
 * The one validation: unknown fields, missing required ones and each value's check, all issues at once. `existing`
 * (an update) is what the endpoint has now: given fields replace it, others stay (a secret is kept unless given).
 */
export function parseDestination(
  description: DestinationDescription,
  input: Record<string, unknown>,
  existing?: ParsedDestination,
): ParsedDestination {
  const issues: FieldIssue[] = [];
  const known = new Set(description.fields.map((f) => f.name));
  for (const key of Object.keys(input))
    if (!known.has(key)) issues.push({ field: key, message: `not a ${description.type} field (${[...known].join(', ')})` });
  const config: Record<string, string> = {};
  const credentials: Record<string, string> = {};
  for (const field of description.fields) {
    const given = input[field.name];
    const before = field.secret ? existing?.credentials[field.name] : existing?.config[field.name];
    let value: string | undefined;
    if (given !== undefined && given !== null && given !== '') {
      if (typeof given !== 'string') {
        issues.push({ field: field.name, message: 'must be text' });
        continue;
      }
      value = given;
    } else value = before ?? field.default;
    if (value === undefined) {
      if (field.required) issues.push({ field: field.name, message: `required (${field.help})` });
      continue;
    }
    const checked = field.check.safeParse(value);
    if (!checked.success) {
      issues.push({ field: field.name, message: checked.error.issues[0]?.message ?? 'invalid' });
      continue;
    }
    (field.secret ? credentials : config)[field.name] = checked.data;
  }
  if (issues.length) throw new DestinationInvalidError(issues);
  return { config, credentials };
}
