// R18: the console's trace link: `<APIPAY_TRACE_URL>/<trace id>` when a trace URL is set and the row kept a trace,
// "none kept" when it did not, and no row at all without a trace URL.
import { describe, expect, it } from 'vitest';
import { traceRow } from '../../src/api/console/trace-link.js';

const id = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('R18 console trace link', () => {
  it('links to <url>/<trace id>', async () => {
    const row = String(await traceRow('http://127.0.0.1:16686/trace', async () => id));
    expect(row).toContain(`href="http://127.0.0.1:16686/trace/${id}"`);
    expect(row).toContain('<dt>Trace</dt>');
  });

  it('says none was kept when the row has no traceparent (tracing was off)', async () => {
    const row = String(await traceRow('http://j/trace', async () => null));
    expect(row).toContain('none kept');
    expect(row).not.toContain('href');
  });

  it('renders nothing and looks nothing up without a trace URL', async () => {
    let asked = false;
    const row = String(
      await traceRow(undefined, async () => {
        asked = true;
        return id;
      }),
    );
    expect(row).toBe('');
    expect(asked).toBe(false);
  });
});
