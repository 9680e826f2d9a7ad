// P5: the Temporal server's and UI's configs are Go templates ({{ env "X" | default "Y" }}), not YAML. A formatter
// that rewrote `{{ … }}` as `{ { … } }` once broke APIPAY_TEMPORAL=server (the UI refused its port); Prettier now
// leaves the folder alone, and this keeps every template action intact.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../../scripts/stack/temporal-server/', import.meta.url).pathname;
const templates = readdirSync(root, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith('.yaml'))
  .map((entry) => join(entry.parentPath, entry.name));

describe('Temporal server config templates (P5)', () => {
  it('are found, and each keeps its template actions whole', () => {
    expect(templates.length).toBeGreaterThanOrEqual(3);
    for (const file of templates) {
      const text = readFileSync(file, 'utf8');
      expect({ file, broken: text.match(/\{ \{[^\n]*\} \}/g) ?? [] }).toEqual({ file, broken: [] });
    }
  });
  it('the UI server takes its port from the stack (a template action, not a mapping)', () => {
    const ui = readFileSync(join(root, 'ui/apipay.yaml'), 'utf8');
    expect(ui).toMatch(/^port: \{\{ env "TEMPORAL_UI_PORT" \| default "8233" \}\}$/m);
  });
});
