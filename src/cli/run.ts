// The CLI's engine: parse a command line, send its admin API request, print JSON (or CSV) or an error; testable
// with an injected fetch and streams. Errors go to stderr as {"error":{code,message}} with exit code 1.
import { parseArgs } from 'node:util';
import { COMMANDS, UsageError, type ApiRequest, type Command } from './commands.js';
import { readSecrets } from './destination-flags.js';
import { adminUrl, DEFAULT_API_URL, fail, tokenOf, type CliIo } from './io.js';
import { LISTEN_HELP, runListen } from './listen.js';
import { LOGIN_HELP, runLogin } from './login.js';

export { DEFAULT_API_URL, type CliIo } from './io.js';

export function helpText(): string {
  const lines = COMMANDS.map((c) => `  apipay ${c.words.join(' ')} ${c.summary}`);
  return [
    'apipay — operator CLI for the ApiPay admin API',
    '',
    'usage: npm run apipay -- <group> <command> [args] [--options]',
    '',
    ...lines,
    LISTEN_HELP,
    LOGIN_HELP,
    '  apipay trigger TYPE [--merchant ACCT]   (the same as events trigger)',
    '  apipay help',
    '',
    '`show` is the same as `get`. Statuses, states and --order are accepted in any case. DATE is a day',
    '(2026-12-01, midnight UTC) or an ISO 8601 date-time with offset; --since is inclusive, --until exclusive.',
    '',
    `environment: APIPAY_API_URL (default ${DEFAULT_API_URL}), APIPAY_API_KEY (an apk_… key; or ADMIN_TOKEN, the bootstrap admin)`,
    'config file: ~/.config/apipay/config.json (or $APIPAY_CONFIG) {"api_url": "…", "api_key": "apk_…"}; the environment wins',
    'the operator of a resolution, adjustment or retry is your API key (--operator is no longer needed)',
    '',
  ].join('\n');
}

/** C9: `show` reads like `get`; group and command words in any case. */
const ALIASES: Record<string, string> = { show: 'get' };

const HELP_FLAGS = new Set(['--help', '-h', 'help']);

/**
 * C11: `apipay <group> [command] --help` prints the usage of that command (or of every command of the group), with
 * its options; null when the words name no command (the general help is printed then).
 */
export function commandHelp(argv: string[]): string | null {
  const words = argv.filter((a) => !HELP_FLAGS.has(a.toLowerCase()));
  const group = words[0]?.toLowerCase();
  const name = words[1] === undefined ? undefined : (ALIASES[words[1].toLowerCase()] ?? words[1].toLowerCase());
  const exact = COMMANDS.filter((c) => c.words[0] === group && (c.words.length === 1 || c.words[1] === name));
  const matches = exact.length ? exact : COMMANDS.filter((c) => c.words[0] === group);
  if (!matches.length) return null;
  const lines = matches.flatMap((c) => {
    const options = Object.entries(c.options ?? {}).map(([option, spec]) => `    --${option}${spec.type === 'string' ? ' VALUE' : ''}`);
    return [`usage: apipay ${c.words.join(' ')} ${c.summary}`.trimEnd(), ...(options.length ? ['  options:', ...options] : [])];
  });
  return `${lines.join('\n')}\n`;
}

function buildRequest(argv: string[]): { request: ApiRequest; command: Command } {
  const [groupWord, nameWord, ...more] = argv;
  const group = groupWord?.toLowerCase();
  const single = COMMANDS.find((c) => c.words.length === 1 && c.words[0] === group);
  const name = nameWord === undefined ? undefined : (ALIASES[nameWord.toLowerCase()] ?? nameWord.toLowerCase());
  const command = single ?? COMMANDS.find((c) => c.words[0] === group && c.words[1] === name);
  const rest = single ? argv.slice(1) : more;
  if (!command) {
    const known = [...new Set(COMMANDS.map((c) => c.words[0]))].join(', ');
    throw new UsageError(group && COMMANDS.some((c) => c.words[0] === group) ? `unknown command "${group} ${name ?? ''}"; see apipay help` : `unknown command group "${group ?? ''}" (${known}); see apipay help`);
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: command.options ?? {}, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const expected = command.args ?? [];
  if (parsed.positionals.length !== expected.length) {
    throw new UsageError(`${command.words.join(' ')} expects ${expected.length ? expected.join(' ').toUpperCase() : 'no positional arguments'}`);
  }
  return { request: command.build(parsed.values as Record<string, string | boolean | undefined>, parsed.positionals), command };
}

function urlFor(io: CliIo, request: ApiRequest): string {
  const url = new URL(adminUrl(io, request.path));
  for (const [k, v] of Object.entries(request.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}

export async function runCli(args: string[], io: CliIo): Promise<number> {
  // M7: `listen` streams (listen.ts); `trigger TYPE` is `events trigger TYPE`.
  if (args[0]?.toLowerCase() === 'login') {
    if (args.some((a) => a === '--help' || a === '-h')) {
      io.stdout.write(`usage:${LOGIN_HELP.replace(/^\s*apipay/, ' apipay')}\n`);
      return 0;
    }
    return runLogin(args.slice(1), io); // A32: the device flow
  }
  if (args[0]?.toLowerCase() === 'listen') {
    if (args.some((a) => a === '--help' || a === '-h')) {
      io.stdout.write(`usage:${LISTEN_HELP.replace(/^\s*apipay/, ' apipay')}\n`);
      return 0;
    }
    return runListen(args.slice(1), io);
  }
  const argv = args[0]?.toLowerCase() === 'trigger' ? ['events', 'trigger', ...args.slice(1)] : args;
  if (argv.length === 0 || ['help', '--help', '-h'].includes(argv[0]!)) {
    io.stdout.write(helpText());
    return 0;
  }
  if (argv.some((a) => a === '--help' || a === '-h')) {
    io.stdout.write(commandHelp(argv) ?? helpText());
    return 0;
  }
  let request: ApiRequest;
  let command: Command;
  try {
    ({ request, command } = buildRequest(argv));
    await readSecrets(request, io); // M11
  } catch (error) {
    if (error instanceof UsageError) return fail(io, 'usage', error.message);
    throw error;
  }
  const token = tokenOf(io);
  if (!token) return fail(io, 'usage', 'APIPAY_API_KEY (or api_key in ~/.config/apipay/config.json, or ADMIN_TOKEN) is not set');

  const url = urlFor(io, request);
  let response: Response;
  try {
    response = await io.fetch(url, {
      method: request.method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: request.raw ? 'text/csv' : 'application/json',
        ...(request.body ? { 'content-type': 'application/json' } : {}),
      },
      ...(request.body ? { body: JSON.stringify(request.body) } : {}),
    });
  } catch (error) {
    // The cause names the host and port; the token is in a header and never part of the message.
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return fail(io, 'unreachable', `cannot reach ${new URL(url).origin}: ${cause ?? (error as Error).message}`);
  }
  const text = await response.text();
  if (!response.ok) {
    try {
      const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
      if (body.error?.code) {
        io.stderr.write(`${JSON.stringify(body)}\n`);
        return 1;
      }
    } catch {
      // not our error shape: fall through
    }
    return fail(io, `http_${response.status}`, text.slice(0, 500) || response.statusText);
  }
  if (request.raw) {
    io.stdout.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
  } else if (text === '') {
    io.stdout.write(`${JSON.stringify({ ok: true, status: response.status })}\n`);
  } else {
    const body = JSON.parse(text) as unknown;
    io.stdout.write(`${command.format ? command.format(body) : JSON.stringify(body, null, 2)}\n`);
    return command.exitCode?.(body) ?? 0;
  }
  return 0;
}
