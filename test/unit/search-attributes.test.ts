// The search attributes the scripts register (scripts/stack.sh, docker-compose.temporal.yml) are the ones the code
// sets: scripts/stack/search-attributes.txt is generated from src/shared/search-attributes.ts and must not drift.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SA, searchAttributeRegistrations } from '../../src/shared/search-attributes.js';

const FILE = new URL('../../scripts/stack/search-attributes.txt', import.meta.url);

describe('search attributes', () => {
  it('scripts/stack/search-attributes.txt is up to date (regenerate: npx tsx scripts/stack/search-attributes.ts)', () => {
    expect(readFileSync(FILE, 'utf8')).toBe(searchAttributeRegistrations());
  });

  it('lists every key of SA once, as Name=CliType', () => {
    const lines = searchAttributeRegistrations().trimEnd().split('\n');
    expect(lines).toHaveLength(Object.keys(SA).length);
    expect(lines).toContain('DeliveryStatus=Keyword');
    for (const line of lines) expect(line).toMatch(/^[A-Z][A-Za-z]+=(Text|Keyword|Int|Double|Bool|Datetime|KeywordList)$/);
  });
});
