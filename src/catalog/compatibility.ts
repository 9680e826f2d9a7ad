// M9: does a schema edit keep accepting every event the published version accepted? A conservative structural
// comparison of two data.object schemas (the published snapshot and the current file): anything that could refuse
// a formerly valid event is a breaking change, which needs a new version instead. Covers the keywords the catalog
// uses (type, const, enum, required, properties, additionalProperties, pattern, bounds, items); any other keyword
// added or changed counts as breaking, so the check errs on the side of a new version.
type Schema = Record<string, unknown>;

const ANNOTATIONS = new Set([
  'title',
  'description',
  'examples',
  'deprecated',
  '$schema',
  '$id',
  'x-event-type',
  'x-version',
  'x-source',
  'x-deprecated-on',
  'x-replaced-by',
]);
const LOWER = ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties'];
const UPPER = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties'];

const typesOf = (s: Schema): string[] | undefined =>
  s.type === undefined ? undefined : Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Each way `current` may refuse what `published` accepted, as `path: why`; empty when compatible. */
export function breakingChanges(published: Schema, current: Schema, path = 'data.object'): string[] {
  const out: string[] = [];
  const before = typesOf(published);
  const after = typesOf(current);
  // "integer" is a subset of "number": number → integer narrows, integer → number widens.
  if (after && (!before || before.some((t) => !after.includes(t) && !(t === 'integer' && after.includes('number')))))
    out.push(`${path}: type narrowed to ${after.join(' or ')}`);
  if (current.const !== undefined && !same(current.const, published.const)) out.push(`${path}: const changed`);
  if (
    Array.isArray(current.enum) &&
    (!Array.isArray(published.enum) || published.enum.some((v) => !(current.enum as unknown[]).some((w) => same(v, w))))
  )
    out.push(`${path}: enum lost a value`);
  if (current.pattern !== undefined && current.pattern !== published.pattern) out.push(`${path}: pattern changed`);
  for (const key of LOWER)
    if (
      typeof current[key] === 'number' &&
      !(typeof published[key] === 'number' && (current[key] as number) <= (published[key] as number))
    )
      out.push(`${path}: ${key} raised`);
  for (const key of UPPER)
    if (
      typeof current[key] === 'number' &&
      !(typeof published[key] === 'number' && (current[key] as number) >= (published[key] as number))
    )
      out.push(`${path}: ${key} lowered`);
  const requiredBefore = new Set((published.required ?? []) as string[]);
  for (const name of (current.required ?? []) as string[])
    if (!requiredBefore.has(name)) out.push(`${path}.${name}: newly required`);
  if (current.additionalProperties === false && published.additionalProperties !== false)
    out.push(`${path}: additional properties refused`);
  const propsBefore = (published.properties ?? {}) as Record<string, Schema>;
  const propsAfter = (current.properties ?? {}) as Record<string, Schema>;
  for (const [name, schema] of Object.entries(propsAfter)) {
    // A property the published version did not describe was open (any value): describing it now narrows it.
    if (!(name in propsBefore)) {
      const constrains = Object.keys(schema).some((key) => !ANNOTATIONS.has(key));
      if (constrains && published.additionalProperties !== false)
        out.push(`${path}.${name}: a constraint on a formerly open property`);
      continue;
    }
    out.push(...breakingChanges(propsBefore[name]!, schema, `${path}.${name}`));
  }
  if (current.items !== undefined)
    out.push(...breakingChanges((published.items ?? {}) as Schema, current.items as Schema, `${path}[]`));
  const known = new Set([
    ...ANNOTATIONS,
    'type',
    'const',
    'enum',
    'pattern',
    ...LOWER,
    ...UPPER,
    'required',
    'additionalProperties',
    'properties',
    'items',
  ]);
  for (const key of Object.keys(current))
    if (!known.has(key) && !same(current[key], published[key])) out.push(`${path}: ${key} added or changed`);
  return out;
}
