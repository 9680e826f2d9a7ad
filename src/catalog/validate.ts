// O21: the validators of the catalog, compiled once (Ajv's 2020-12 draft, strict mode) when the process builds
// them, one per type and version, so checking an event is one call to a compiled function. An error names the
// schema path of the first problem and Ajv's message; a segment that is not a schema name (an array index, a key
// the event brought) is written `*`, so a reason never repeats what a producer put in a key.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { Catalog } from './catalog.js';

/** The catalog's own keywords: annotations to Ajv, read by ./catalog.ts. */
export const CATALOG_KEYWORDS = ['x-event-type', 'x-version', 'x-source', 'x-deprecated-on', 'x-replaced-by'];

export type CheckResult =
  { ok: true } | { ok: false; reason: 'unknown_event_type' | 'unknown_event_version' | 'schema_invalid'; detail: string };

export interface EventValidator {
  /** Checks an event's data.object against the schema of its type and version. */
  check(type: string, version: number, object: unknown): CheckResult;
}

export function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: false });
  ajv.addVocabulary(CATALOG_KEYWORDS);
  return ajv;
}

export function createEventValidator(catalog: Catalog): EventValidator {
  const ajv = newAjv();
  const compiled = new Map<string, ValidateFunction>();
  for (const entry of catalog.entries) compiled.set(`${entry.type}@${entry.version}`, ajv.compile(entry.schema));
  return {
    check(type, version, object) {
      const validate = compiled.get(`${type}@${version}`);
      if (!validate) {
        return catalog.get(type)
          ? { ok: false, reason: 'unknown_event_version', detail: `${type} has no version ${version} in the catalog` }
          : { ok: false, reason: 'unknown_event_type', detail: `${safeName(type)} is not in the event catalog` };
      }
      if (validate(object)) return { ok: true };
      const error = validate.errors![0]!;
      const path = `data.object${error.instancePath.split('/').slice(1).map(segment).join('')}`;
      return { ok: false, reason: 'schema_invalid', detail: `${path} ${error.message ?? 'is invalid'}`.slice(0, 500) };
    },
  };
}

const segment = (part: string) => (/^[a-z][a-z0-9_]{0,63}$/.test(part) ? `.${part}` : '.*');
const safeName = (type: string) => type.slice(0, 200);
