// `npm run apipay -- <command>`: the operator CLI, a thin client of the admin API (see docs/cli.md).
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { configPath, readCliConfig } from './config-file.js';
import { jwtClaims } from './login.js';
import { runCli } from './run.js';

/** On a developer's machine the token `npm start` generated lives in .data/dev.env; an exported ADMIN_TOKEN wins,
 * and an APIPAY_API_KEY (a person's own key, A1) is used ahead of both (src/cli/run.ts). */
function localAdminToken(): string | undefined {
  const file = new URL('../../.data/dev.env', import.meta.url);
  if (!existsSync(file)) return undefined;
  return /^ADMIN_TOKEN=(.+)$/m.exec(readFileSync(file, 'utf8'))?.[1]?.trim();
}

let config;
try {
  config = readCliConfig(configPath(process.env), (text) => process.stderr.write(text));
} catch (error) {
  process.stderr.write(`${JSON.stringify({ error: { code: 'usage', message: (error as Error).message } })}\n`);
  process.exit(1);
}
// A32: the sign-in of `apipay login` while it lasts; after that the file's key (or a word to sign in again).
const signedIn = config.access_token && (jwtClaims(config.access_token).exp ?? 0) * 1000 > Date.now() ? config.access_token : undefined;
if (config.access_token && !signedIn && !process.env.APIPAY_API_KEY)
  process.stderr.write('note: your apipay login has expired; run apipay login again\n');
// A2: the environment first, then the config file (a person's own sign-in or key), the bootstrap token last (src/cli/run.ts).
const env = {
  ...process.env,
  APIPAY_API_KEY: process.env.APIPAY_API_KEY || signedIn || config.api_key,
  APIPAY_API_URL: process.env.APIPAY_API_URL || config.api_url,
  ADMIN_TOKEN: process.env.ADMIN_TOKEN || localAdminToken(),
};
/** M11: a secret destination field, not echoed on a terminal (the muted output swallows readline's echo); piped, the first line. */
async function promptSecret(label: string): Promise<string> {
  const tty = process.stdin.isTTY === true;
  if (tty) process.stderr.write(`${label}: `);
  const muted = new Writable({ write: (_chunk, _encoding, done) => done() });
  const rl = createInterface({ input: process.stdin, output: muted, terminal: tty });
  try {
    return await new Promise<string>((resolve) => {
      rl.once('line', resolve);
      rl.once('close', () => resolve(''));
    });
  } finally {
    rl.close();
    if (tty) process.stderr.write('\n');
  }
}

// Ctrl-C ends `apipay listen` cleanly (exit 0); a second one kills at once.
const stop = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
const code = await runCli(process.argv.slice(2), {
  env,
  fetch: globalThis.fetch,
  stdout: process.stdout,
  stderr: process.stderr,
  signal: stop.signal,
  readFile: (path) => readFile(path, 'utf8'),
  promptSecret,
});
process.exitCode = code;
