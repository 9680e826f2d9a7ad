// C11: `npm start`'s human log lines (LOG_FORMAT=pretty): one readable line per JSON line, secrets still redacted,
// database errors still safe; JSON stays the default and production refuses pretty.
import { describe, expect, it } from 'vitest';
import { logFormatOf, parseEnv } from '../../src/config/env.js';
import { createLogger } from '../../src/lib/logger.js';
import { prettyDestination, prettyLine } from '../../src/lib/pretty-log.js';

const required = { ADMIN_TOKEN: 'x'.repeat(32), SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') };

function capture() {
  const lines: string[] = [];
  return { lines, out: { write: (text: string) => void lines.push(text) } };
}

describe('C11 pretty log lines', () => {
  it('C11 writes time, level, process and message, then the fields as key=value, with secrets redacted', () => {
    const { lines, out } = capture();
    const logger = createLogger('api', 'info', prettyDestination(out));
    logger.info(
      { provider: 'stripe', status: 202, token: 'apk_secret_value', headers: { authorization: 'Bearer abc' }, note: 'two words' },
      'webhook accepted',
    );
    logger.warn('plain');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}api {2}webhook accepted {2}provider=stripe status=202 token=\[redacted\] headers=\{"authorization":"\[redacted\]"\} note="two words"\n$/,
    );
    expect(lines.join('')).not.toContain('apk_secret_value');
    expect(lines.join('')).not.toContain('Bearer abc');
    expect(lines[1]).toMatch(/ WARN {2}api {2}plain\n$/);
  });

  it('C11 shows an error as type, code and message on the line; passes a line that is not JSON through', () => {
    const { lines, out } = capture();
    createLogger('worker', 'info', prettyDestination(out)).error(
      { err: Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' }) },
      'cannot reach Kafka',
    );
    expect(lines[0]).toContain('ERROR worker  cannot reach Kafka  err="Error: ECONNREFUSED: connection refused"');
    expect(prettyLine('not json')).toBe('not json\n');
  });

  it('C11 JSON is the default and production’s: pretty only when asked for, refused with NODE_ENV=production', () => {
    expect(logFormatOf({})).toBe('json');
    expect(logFormatOf({ LOG_FORMAT: 'pretty' })).toBe('pretty');
    expect(logFormatOf({ LOG_FORMAT: 'pretty', NODE_ENV: 'production' })).toBe('json');
    expect(logFormatOf({ LOG_FORMAT: 'fancy' })).toBe('json');
    expect(parseEnv(required).LOG_FORMAT).toBe('json');
    expect(parseEnv({ ...required, LOG_FORMAT: 'pretty' }).LOG_FORMAT).toBe('pretty');
    expect(() => parseEnv({ ...required, LOG_FORMAT: 'pretty', NODE_ENV: 'production' })).toThrow(/LOG_FORMAT/);
    expect(() => parseEnv({ ...required, LOG_FORMAT: 'fancy' })).toThrow(/LOG_FORMAT/);
  });
});
