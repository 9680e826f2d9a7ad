// I2: reads the request body as raw bytes, refusing it as soon as it passes the limit so an oversized body is
// never buffered beyond `limit` bytes (a declared Content-Length over the limit is refused before reading).
// On @hono/node-server the Node request is read directly: building a web Request and stream per webhook costs
// more CPU than the rest of the handler (see docs/benchmarks.md); app.request() in tests takes the web path.
import type { IncomingMessage } from 'node:http';
import type { HeaderMap } from '../../providers/index.js';
export async function readRawBody(request: Request, limit: number): Promise<Buffer | 'too_large'> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) return 'too_large';
  if (!request.body) return Buffer.alloc(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return 'too_large';
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

/** JSON only; a charset other than UTF-8 is refused rather than mis-decoded. */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const [type, ...params] = header.split(';').map((part) => part.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => !p.startsWith('charset=') || p === 'charset=utf-8' || p === 'charset="utf-8"');
}

/** The Node request under @hono/node-server (its `env.incoming`), or undefined elsewhere (app.request in tests). */
export function nodeIncoming(env: unknown): IncomingMessage | undefined {
  return (env as { incoming?: IncomingMessage } | undefined)?.incoming;
}

/** Node's lower-cased headers; only set-cookie is ever an array, and no adapter reads it. */
export const nodeHeaders = (incoming: IncomingMessage): HeaderMap => incoming.headers as HeaderMap;

export function readIncomingBody(incoming: IncomingMessage, limit: number): Promise<Buffer | 'too_large'> {
  const declared = incoming.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.resolve('too_large');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      // Stop buffering; the server drains (bounded) or closes the connection after the 413 is written.
      stop();
      incoming.pause();
      resolve('too_large');
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
  });
}
