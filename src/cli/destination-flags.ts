// M11: the CLI's destination flags, generated from each destination type's one description
// (src/outbound/destinations/), never listed by hand: --type, a --<field> flag for every plain field, and for every
// secret field --<field>-file PATH or --<field>-env NAME, else a prompt that does not echo (or the first line of a
// piped stdin). A secret never comes from the command line (ps and shell history would show it) and is never printed.
import { DESTINATIONS, type DestinationField } from '../outbound/destinations/index.js';
import { DESTINATION_TYPES, type DestinationType } from '../shared/outbound.js';
import { oneOf, str, UsageError, type ApiRequest, type SecretInput, type Values } from './command-args.js';
import type { CliIo } from './io.js';

type BrokerType = Exclude<DestinationType, 'http'>;
const flagOf = (name: string) => name.replaceAll('_', '-');

/** Every field name across the types (rabbitmq and kafka share username, password and tls), with the types it is in. */
const FIELDS = new Map<string, { field: DestinationField; types: BrokerType[] }>();
for (const d of Object.values(DESTINATIONS))
  for (const field of d.fields) {
    const known = FIELDS.get(field.name);
    if (known) known.types.push(d.type);
    else FIELDS.set(field.name, { field, types: [d.type] });
  }

/** The parseArgs options of the destination fields (create adds --type). */
export const DESTINATION_OPTIONS = Object.fromEntries(
  [...FIELDS.values()].flatMap(({ field }) =>
    field.secret
      ? [
          [`${flagOf(field.name)}-file`, str],
          [`${flagOf(field.name)}-env`, str],
        ]
      : [[flagOf(field.name), str]],
  ),
) as Record<string, typeof str>;

/** One help line per broker type, from its description: required fields bare, optional ones with their default. */
export function destinationHelp(): string {
  return Object.values(DESTINATIONS)
    .map((d) => {
      const flags = d.fields.map((f) => {
        const text = f.secret
          ? `--${flagOf(f.name)}-file PATH|--${flagOf(f.name)}-env VAR`
          : `--${flagOf(f.name)} ${f.default !== undefined ? `(${f.default || "''"})` : f.name.toUpperCase()}`;
        return f.required ? text : `[${text}]`;
      });
      return `      --type ${d.type}: ${flags.join(' ')}`;
    })
    .join('\n');
}

const given = (v: Values, name: string) => typeof v[name] === 'string';

/**
 * The `destination` body and the secrets to read, from the flags. `type` is the created endpoint's (undefined on
 * update: the endpoint's own type decides, and the API checks the fields against it). Create prompts for a required
 * secret that was not given; update keeps a secret that was not given.
 */
export function destinationOf(
  v: Values,
  type: BrokerType | undefined,
): { fields: Record<string, string>; secrets: SecretInput[] } | undefined {
  const fields: Record<string, string> = {};
  const secrets: SecretInput[] = [];
  for (const [name, { field, types }] of FIELDS) {
    const flag = flagOf(name);
    const flags = field.secret ? [`${flag}-file`, `${flag}-env`] : [flag];
    const used = flags.filter((f) => given(v, f));
    if (used.length && type && !types.includes(type))
      throw new UsageError(`--${used[0]} is not a ${type} field (${DESTINATIONS[type].fields.map((f) => f.name).join(', ')})`);
    if (!field.secret) {
      if (used.length) fields[name] = v[flag] as string;
      continue;
    }
    if (used.length > 1) throw new UsageError(`give one of --${flag}-file and --${flag}-env`);
    const own = type ? DESTINATIONS[type].fields.find((f) => f.name === name) : undefined; // its label and rule in this type
    const label = (own ?? field).label;
    const file = v[`${flag}-file`] as string | undefined;
    const env = v[`${flag}-env`] as string | undefined;
    if (file !== undefined) secrets.push({ field: name, label, file });
    else if (env !== undefined) secrets.push({ field: name, label, env });
    else if (own?.required) secrets.push({ field: name, label });
  }
  if (!type && Object.keys(fields).length === 0 && secrets.length === 0) return undefined;
  return { fields, secrets };
}

/** --type (create): http (the default, --url) or a broker type (its destination flags, no --url). */
export function createTarget(v: Values): Pick<ApiRequest, 'secrets'> & { body: Record<string, unknown> } {
  const type = (oneOf(v, 'type', DESTINATION_TYPES) ?? 'http') as DestinationType;
  if (type === 'http') {
    const stray = destinationOf(v, undefined);
    if (stray) throw new UsageError('destination flags are for --type rabbitmq or kafka; an http endpoint takes --url');
    if (!given(v, 'url')) throw new UsageError('--url is required (or --type rabbitmq|kafka with its fields)');
    return { body: { url: v.url } };
  }
  if (given(v, 'url')) throw new UsageError(`a ${type} endpoint has destination fields, not --url`);
  const { fields, secrets } = destinationOf(v, type)!;
  return { body: { type, destination: fields }, secrets };
}

/** Reads each secret (file, environment or prompt) into the request's destination; a missing one names where. */
export async function readSecrets(request: ApiRequest, io: CliIo): Promise<void> {
  if (!request.secrets?.length) return;
  const destination = ((request.body ??= {}).destination ??= {}) as Record<string, string>;
  for (const s of request.secrets) {
    let value: string | undefined;
    if (s.env !== undefined) {
      value = io.env[s.env];
      if (!value) throw new UsageError(`environment variable ${s.env} (for ${s.field}) is not set`);
    } else if (s.file !== undefined) {
      if (!io.readFile) throw new UsageError(`cannot read ${s.file} here`);
      try {
        value = (await io.readFile(s.file)).replace(/\r?\n$/, '');
      } catch (error) {
        throw new UsageError(`cannot read ${s.file} (for ${s.field}): ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
      }
    } else {
      if (!io.promptSecret)
        throw new UsageError(`${s.field} is required: give --${flagOf(s.field)}-file PATH or --${flagOf(s.field)}-env VAR`);
      value = await io.promptSecret(`${s.label} (not echoed)`);
    }
    if (!value) throw new UsageError(`${s.field} is empty`);
    destination[s.field] = value;
  }
}
