// The CLI's config file (A2): the API URL and the person's own API key, so the key need not sit in the shell's
// environment or history. `$APIPAY_CONFIG`, else `$XDG_CONFIG_HOME/apipay/config.json` (default ~/.config).
// The environment wins over the file; the file's key wins over the bootstrap ADMIN_TOKEN. A32: `apipay login` adds
// the IdP access token, used ahead of the file's key while it has not expired.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface CliConfig {
  api_url?: string;
  api_key?: string;
  /** A32: the IdP access token `apipay login` keeps, and the issuer it came from. */
  access_token?: string;
  issuer?: string;
}

const KEYS = ['api_url', 'api_key', 'access_token', 'issuer'] as const;

export function configPath(env: Record<string, string | undefined>): string {
  return env.APIPAY_CONFIG || join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'apipay', 'config.json');
}

/** The file's settings ({} when there is none); an unreadable or malformed file is an error naming the file, never its content. */
export function readCliConfig(path: string, warn: (text: string) => void = () => {}): CliConfig {
  if (!existsSync(path)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new Error(`${path}: not valid JSON (expected {"api_url": "…", "api_key": "apk_…"})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${path}: must be a JSON object`);
  const config: CliConfig = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!(KEYS as readonly string[]).includes(key))
      throw new Error(`${path}: unknown key ${JSON.stringify(key)} (${KEYS.join(', ')})`);
    if (typeof value !== 'string' || value === '') throw new Error(`${path}: ${key} must be a non-empty string`);
    config[key as (typeof KEYS)[number]] = value;
  }
  // Like ssh with its keys: a key others can read is no longer only yours.
  if ((config.api_key || config.access_token) && process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0)
    warn(`warning: ${path} holds an API key and is readable by others; chmod 600 it\n`);
  return config;
}
