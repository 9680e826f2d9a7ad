// A cookie-keeping client of the console and portal pages (C1, C2, A15–A17) over app.request(): it follows no
// redirects, keeps the Set-Cookie it is given, and posts forms with the CSRF token of the last page it read.
import type { Hono } from 'hono';

export interface PageReply {
  status: number;
  text: string;
  headers: Headers;
}

export function pageClient(app: Hono<any>, options: { address?: string } = {}) {
  const jar = new Map<string, string>();
  let csrf = '';

  function keep(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (/max-age=0/i.test(line) || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  }

  async function send(
    method: string,
    path: string,
    form?: Record<string, string>,
    extra: Record<string, string> = {},
  ): Promise<PageReply> {
    const headers: Record<string, string> = { ...extra };
    if (jar.size) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams({ csrf, ...form }).toString();
    }
    // A client address as the node server's binding would give it (src/api/middleware/client-address.ts).
    const env = options.address ? { remoteAddress: options.address } : undefined;
    const res = await app.request(path, { method, headers, ...(body !== undefined ? { body } : {}) }, env);
    keep(res);
    const text = await res.text();
    const found = /name="csrf" value="([^"]+)"/.exec(text);
    if (found) csrf = found[1]!;
    return { status: res.status, text, headers: res.headers };
  }

  return {
    get: (path: string, headers?: Record<string, string>) => send('GET', path, undefined, headers),
    post: (path: string, form: Record<string, string> = {}, headers?: Record<string, string>) =>
      send('POST', path, form, headers),
    /** The cookies this client holds, by name (to copy a session into another client). */
    cookies: jar,
    get csrf() {
      return csrf;
    },
  };
}

export type PageClient = ReturnType<typeof pageClient>;
