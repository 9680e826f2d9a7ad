// `npm run apipay -- <command>`: the operator CLI, a thin client of the admin API (see docs/cli.md).
import { runCli } from './run.js';

const code = await runCli(process.argv.slice(2), { env: process.env, fetch: globalThis.fetch, stdout: process.stdout, stderr: process.stderr });
process.exitCode = code;
