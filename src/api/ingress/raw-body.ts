// I2: reads the request body as raw bytes, refusing it as soon as it passes the limit so an oversized body is
// never buffered beyond `limit` bytes (a declared Content-Length over the limit is refused before reading).
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
