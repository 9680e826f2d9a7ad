// What the CLI is given (injected, so tests run it with their own fetch, streams and signal) and the shared pieces
// of its two engines: one admin request per command (run.ts) and the `listen` stream (listen.ts).
export interface CliIo {
  env: Record<string, string | undefined>;
  fetch: typeof fetch;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Ctrl-C: aborts `apipay listen` (index.ts wires SIGINT and SIGTERM to it). */
  signal?: AbortSignal;
  /** M11: a secret field's --<field>-file (index.ts reads the file). */
  readFile?(path: string): Promise<string>;
  /** M11: a secret field asked for without echo (index.ts: the terminal, or the first line of a piped stdin). */
  promptSecret?(label: string): Promise<string>;
}

export const DEFAULT_API_URL = 'http://127.0.0.1:3000';

export const fail = (io: CliIo, code: string, message: string): number => {
  io.stderr.write(`${JSON.stringify({ error: { code, message } })}\n`);
  return 1;
};

/** A1: a person's own key first; the bootstrap ADMIN_TOKEN only when no key is given (a fresh install). */
export const tokenOf = (io: CliIo) => io.env.APIPAY_API_KEY || io.env.ADMIN_TOKEN;

export const adminUrl = (io: CliIo, path: string) =>
  `${(io.env.APIPAY_API_URL || DEFAULT_API_URL).replace(/\/+$/, '')}/admin/v1${path}`;
