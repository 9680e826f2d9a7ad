// A2: the CLI's config file (~/.config/apipay/config.json): where it is, what it may hold, and that a malformed one
// is refused by name without echoing its content.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configPath, readCliConfig } from '../../src/cli/config-file.js';

const dir = mkdtempSync(join(tmpdir(), 'apipay-cli-config-'));
const file = (name: string, text: string, mode = 0o600) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
};

describe('A2 CLI config file', () => {
  it('A2 is $APIPAY_CONFIG, else $XDG_CONFIG_HOME/apipay/config.json', () => {
    expect(configPath({ APIPAY_CONFIG: '/etc/apipay.json', XDG_CONFIG_HOME: '/x' })).toBe('/etc/apipay.json');
    expect(configPath({ XDG_CONFIG_HOME: '/x' })).toBe('/x/apipay/config.json');
    expect(configPath({})).toMatch(/\.config\/apipay\/config\.json$/);
  });

  it('A2 reads api_url and api_key; a missing file is no settings', () => {
    const path = file('ok.json', JSON.stringify({ api_url: 'https://admin.example', api_key: 'apk_x_y' }));
    expect(readCliConfig(path)).toEqual({ api_url: 'https://admin.example', api_key: 'apk_x_y' });
    expect(readCliConfig(join(dir, 'absent.json'))).toEqual({});
  });

  it.each([
    ['not json', '{"api_key": "apk_leak', 'not valid JSON'],
    ['an array', '[]', 'must be a JSON object'],
    ['an unknown key', '{"token": "apk_leak"}', 'unknown key "token"'],
    ['an empty key', '{"api_key": ""}', 'api_key must be a non-empty string'],
  ])('A2 refuses %s, naming the file and never its secret', (_name, text, message) => {
    const path = file(`bad-${message.length}.json`, text);
    expect(() => readCliConfig(path)).toThrow(message);
    expect(() => readCliConfig(path)).toThrow(path);
    try {
      readCliConfig(path);
    } catch (error) {
      expect((error as Error).message).not.toContain('apk_leak');
    }
  });

  it('A2 warns when a file holding a key is readable by others', () => {
    const warnings: string[] = [];
    readCliConfig(file('open.json', '{"api_key": "apk_x_y"}', 0o644), (t) => warnings.push(t));
    expect(warnings.join('')).toContain('chmod 600');
    warnings.length = 0;
    readCliConfig(file('closed.json', '{"api_key": "apk_x_y"}', 0o600), (t) => warnings.push(t));
    expect(warnings).toEqual([]);
  });
});
