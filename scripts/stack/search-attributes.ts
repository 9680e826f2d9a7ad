// Writes scripts/stack/search-attributes.txt from src/shared/search-attributes.ts (the one list), which
// scripts/stack.sh and docker-compose.temporal.yml read. Run after changing that list:
//   npx tsx scripts/stack/search-attributes.ts
// test/unit/search-attributes.test.ts fails while the file is out of date.
import { writeFileSync } from 'node:fs';
import { searchAttributeRegistrations } from '../../src/shared/search-attributes.js';

const SEARCH_ATTRIBUTES_FILE = new URL('./search-attributes.txt', import.meta.url).pathname;

writeFileSync(SEARCH_ATTRIBUTES_FILE, searchAttributeRegistrations());
console.log(`wrote ${SEARCH_ATTRIBUTES_FILE}`);
