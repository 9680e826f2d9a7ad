// M10: what is generated from the catalog is current: src/catalog/types.generated.ts (json-schema-to-typescript,
// the producers' types) and the "Events we send" section of docs/merchants.md. An edit of a schema without
// `npm run catalog:types` / `npm run catalog:docs` fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/catalog.js';
import { SCHEMA_FILES } from '../../src/catalog/events/index.js';
import { eventsSection, MERCHANTS_FILE, mergedMerchantsPage } from '../../scripts/catalog/merchant-docs.js';
import { generateTypes, TYPES_FILE } from '../../scripts/catalog/types.js';

describe('M10 generated from the catalog', () => {
  it('M10 regenerating the producer types gives the checked-in file', async () => {
    expect(await generateTypes()).toBe(readFileSync(TYPES_FILE, 'utf8'));
  }, 30_000);

  it('M10 docs/merchants.md has the current "Events we send" section', async () => {
    const page = readFileSync(MERCHANTS_FILE, 'utf8');
    expect(await mergedMerchantsPage(page)).toBe(page);
    expect(page).toContain('## Events we send');
  }, 30_000); // Prettier formats the whole page: seconds on a busy machine

  it('M10 a schema edit changes both (so the checks above can fail)', async () => {
    const ping = SCHEMA_FILES['ping.v1.json'] as Record<string, unknown>;
    const edited = loadCatalog({
      ...SCHEMA_FILES,
      'ping.v1.json': { ...ping, description: 'A ping, described anew for this test.' },
    });
    expect(eventsSection(edited)).toContain('A ping, described anew for this test.');
    expect(await generateTypes(edited)).not.toBe(readFileSync(TYPES_FILE, 'utf8'));
  }, 30_000);
});
