// I2 raw body reading with the size limit enforced while reading, and the content-type rule.
import { describe, expect, it } from 'vitest';
import { isJsonContentType, readRawBody } from '../../src/api/ingress/raw-body.js';

function streamOf(chunks: number[], size: number): { request: Request; pulled: () => number } {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= chunks.length) return controller.close();
      pulled += 1;
      controller.enqueue(new Uint8Array(size).fill(chunks[pulled - 1]!));
    },
  });
  return { request: new Request('http://x/', { method: 'POST', body, duplex: 'half' } as RequestInit), pulled: () => pulled };
}

describe('I2 raw body', () => {
  it('I2 returns the exact bytes under the limit', async () => {
    const { request } = streamOf([1, 2, 3], 10);
    const body = await readRawBody(request, 30);
    expect(body).toEqual(Buffer.concat([Buffer.alloc(10, 1), Buffer.alloc(10, 2), Buffer.alloc(10, 3)]));
  });

  it('I2 stops reading as soon as a chunked body passes the limit', async () => {
    const { request, pulled } = streamOf(Array.from({ length: 100 }, () => 1), 1000);
    expect(await readRawBody(request, 2500)).toBe('too_large');
    expect(pulled()).toBeLessThanOrEqual(4);
  });

  it('I2 refuses a declared Content-Length over the limit without reading', async () => {
    const request = new Request('http://x/', { method: 'POST', body: 'x'.repeat(20), headers: { 'content-length': '20' } });
    expect(await readRawBody(request, 10)).toBe('too_large');
    expect(request.bodyUsed).toBe(false);
  });

  it.each([
    ['application/json', true],
    ['application/json; charset=utf-8', true],
    ['Application/JSON; charset=UTF-8', true],
    ['application/json; charset=iso-8859-1', false],
    ['text/plain', false],
    ['application/x-www-form-urlencoded', false],
    [undefined, false],
  ])('content type %s → %s', (header, ok) => {
    expect(isJsonContentType(header)).toBe(ok);
  });
});
