// M8: the event catalog. Every event type ApiPay delivers is a JSON Schema 2020-12 file in ./events/ named
// <type>.v<version>.json, describing the event's `data.object`, with a description, at least one example and
// metadata keywords: x-event-type, x-version, x-source (apipay: ApiPay writes it; producer: a business service
// publishes it to the outbound topic), and for a deprecated type `deprecated: true` with x-deprecated-on (a date)
// and x-replaced-by. Loaded once at import; a malformed file stops the process at start with the file's name.
import { SCHEMA_FILES } from './events/index.js';

export type EventSource = 'apipay' | 'producer';

export interface EventTypeVersion {
  type: string;
  version: number;
  title: string;
  description: string;
  source: EventSource;
  /** Set when the type is deprecated: the date after which producers may stop sending it, and what replaces it. */
  deprecated?: { on: string; replacedBy?: string };
  /** The schema file as written (JSON Schema 2020-12), metadata keywords included. */
  schema: Readonly<Record<string, unknown>>;
  examples: readonly Record<string, unknown>[];
}

export interface Catalog {
  /** By type, then version. */
  readonly entries: readonly EventTypeVersion[];
  /** The type names, sorted. */
  readonly types: readonly string[];
  /** One version of a type; without `version`, its latest. */
  get(type: string, version?: number): EventTypeVersion | undefined;
  versions(type: string): readonly EventTypeVersion[];
}

export const EVENT_TYPE_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$/;
const FILE_NAME = /^([a-z][a-z0-9_.]*)\.v([1-9][0-9]*)\.json$/;
const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function entryOf(file: string, document: unknown): EventTypeVersion {
  const fail = (why: string): never => {
    throw new Error(`event catalog: src/catalog/events/${file}: ${why}`);
  };
  const name = FILE_NAME.exec(file) ?? fail('the file name must be <type>.v<version>.json');
  if (!isRecord(document)) return fail('not a JSON object');
  const d = document;
  if (d.$schema !== 'https://json-schema.org/draft/2020-12/schema') fail('$schema must be JSON Schema 2020-12');
  if (d['x-event-type'] !== name[1] || !EVENT_TYPE_PATTERN.test(name[1]!))
    fail(`x-event-type must be ${name[1]}, as the file name says`);
  if (d['x-version'] !== Number(name[2])) fail(`x-version must be ${name[2]}, as the file name says`);
  if (d['x-source'] !== 'apipay' && d['x-source'] !== 'producer') fail('x-source must be apipay or producer');
  if (typeof d.description !== 'string' || d.description.length < 10) fail('needs a description');
  if (typeof d.title !== 'string') fail('needs a title');
  if (d.type !== 'object') fail('describes data.object, so its type is object');
  if (!Array.isArray(d.examples) || d.examples.length === 0 || !d.examples.every(isRecord))
    fail('needs at least one example object');
  const deprecated = d.deprecated === true;
  if (deprecated && (typeof d['x-deprecated-on'] !== 'string' || !DATE.test(d['x-deprecated-on'])))
    fail('a deprecated type needs x-deprecated-on (YYYY-MM-DD)');
  if (!deprecated && d['x-deprecated-on'] !== undefined) fail('x-deprecated-on without deprecated: true');
  const replacedBy = d['x-replaced-by'];
  return {
    type: name[1]!,
    version: Number(name[2]),
    title: d.title as string,
    description: d.description as string,
    source: d['x-source'] as EventSource,
    ...(deprecated
      ? { deprecated: { on: d['x-deprecated-on'] as string, ...(typeof replacedBy === 'string' ? { replacedBy } : {}) } }
      : {}),
    schema: d,
    examples: d.examples as Record<string, unknown>[],
  };
}

export function loadCatalog(files: Record<string, unknown> = SCHEMA_FILES): Catalog {
  const entries = Object.entries(files)
    .map(([file, document]) => entryOf(file, document))
    .sort((a, b) => a.type.localeCompare(b.type) || a.version - b.version);
  const byType = new Map<string, EventTypeVersion[]>();
  for (const entry of entries) byType.set(entry.type, [...(byType.get(entry.type) ?? []), entry]);
  for (const [type, versions] of byType) {
    versions.forEach((v, i) => {
      if (v.version !== i + 1)
        throw new Error(`event catalog: ${type} has no version ${i + 1} (versions are 1, 2, 3, … without gaps)`);
    });
    const replacedBy = versions.at(-1)!.deprecated?.replacedBy;
    if (replacedBy !== undefined && !byType.has(replacedBy))
      throw new Error(`event catalog: ${type} is replaced by ${replacedBy}, which is not in the catalog`);
  }
  return {
    entries,
    types: [...byType.keys()].sort(),
    get: (type, version) => {
      const versions = byType.get(type);
      return version === undefined ? versions?.at(-1) : versions?.find((v) => v.version === version);
    },
    versions: (type) => byType.get(type) ?? [],
  };
}

/** The catalog in this repository, loaded once. */
export const CATALOG: Catalog = loadCatalog();
