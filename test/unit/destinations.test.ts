// M11: the destination descriptions are the one validation (src/outbound/destinations/): missing required fields,
// unknown fields and bad values are all reported at once by field name; defaults fill what is left out; secret fields
// are split off (never in the config that is returned); an update keeps what it does not give; the locator never
// carries a credential; the pool bounds its connections; the O15 guard refuses private brokers in strict profiles.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openCredentials, sealCredentials } from '../../src/outbound/destinations/credentials.js';
import { DESTINATIONS, DestinationInvalidError, locatorOf, validateDestination } from '../../src/outbound/destinations/index.js';
import { brokerFailure } from '../../src/outbound/destinations/outcome.js';
import { createConnectionPool } from '../../src/outbound/destinations/pool.js';
import { brokerSocketGuard } from '../../src/outbound/url-safety.js';

const issuesOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof DestinationInvalidError) return error.issues.map((i) => i.field).sort();
    throw error;
  }
  return [];
};

const rabbit = { host: 'rabbit.example.com', username: 'apipay', password: 's3cret-pw', routing_key: 'events' };

describe('M11 destination descriptions', () => {
  it('fills defaults, splits secrets off and builds a locator without them', () => {
    const parsed = validateDestination('rabbitmq', rabbit);
    expect(parsed.config).toEqual({
      host: 'rabbit.example.com',
      port: '5672',
      vhost: '/',
      username: 'apipay',
      exchange: '',
      routing_key: 'events',
      tls: 'false',
    });
    expect(parsed.credentials).toEqual({ password: 's3cret-pw' });
    expect(locatorOf('rabbitmq', parsed.config)).toBe('amqp://rabbit.example.com:5672/%2F?queue=events');
    const kafka = validateDestination('kafka', { brokers: 'k1:9092, k2:9093', topic: 'apipay.events' });
    expect(locatorOf('kafka', kafka.config)).toBe('kafka://k1:9092,k2:9093/apipay.events');
  });

  it('reports every missing, unknown and invalid field by name', () => {
    expect(issuesOf(() => validateDestination('rabbitmq', {}))).toEqual(['host', 'password', 'routing_key', 'username']);
    expect(issuesOf(() => validateDestination('rabbitmq', { ...rabbit, port: '70000', tls: 'yes', colour: 'red' }))).toEqual([
      'colour',
      'port',
      'tls',
    ]);
    expect(issuesOf(() => validateDestination('kafka', { brokers: 'no-port', topic: 'has space' }))).toEqual([
      'brokers',
      'topic',
    ]);
    expect(issuesOf(() => validateDestination('kafka', { brokers: 'k:1', topic: 't', sasl_mechanism: 'plain' }))).toEqual([
      'password',
      'username',
    ]);
    expect(issuesOf(() => validateDestination('rabbitmq', { ...rabbit, host: 5 as unknown as string }))).toEqual(['host']);
  });

  it('an update keeps the fields (and the secret) it does not give', () => {
    const existing = validateDestination('rabbitmq', rabbit);
    const updated = validateDestination('rabbitmq', { routing_key: 'events.v2' }, existing);
    expect(updated.config.routing_key).toBe('events.v2');
    expect(updated.credentials).toEqual({ password: 's3cret-pw' });
  });

  it('property: any valid rabbitmq fields validate, and no secret value appears in the config or the locator', () => {
    const text = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() === s && s.length > 0);
    fc.assert(
      fc.property(
        fc.record({
          host: fc.domain(),
          port: fc.integer({ min: 1, max: 65535 }).map(String),
          username: text,
          password: fc.string({ minLength: 12, maxLength: 40 }).map((s) => `pw-${s}`),
          routing_key: text,
        }),
        (fields) => {
          const parsed = validateDestination('rabbitmq', fields);
          expect(parsed.credentials.password).toBe(fields.password);
          expect(Object.values(parsed.config)).not.toContain(fields.password);
          expect(locatorOf('rabbitmq', parsed.config)).not.toContain(encodeURIComponent(fields.password));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('every field of every type is described (label, help) and secret fields are never defaulted', () => {
    for (const d of Object.values(DESTINATIONS))
      for (const f of d.fields) {
        expect(f.label && f.help, `${d.type}.${f.name}`).toBeTruthy();
        if (f.secret) expect(f.default).toBeUndefined();
        expect(f.name).toMatch(/^[a-z_]+$/);
      }
  });

  it('sealed credentials open only for their endpoint', () => {
    const key = Buffer.alloc(32, 3);
    const sealed = sealCredentials('we_a', { password: 'pw' }, key);
    expect(sealed.ciphertext.toString('utf8')).not.toContain('pw');
    expect(openCredentials('we_a', sealed, key)).toEqual({ password: 'pw' });
    expect(() => openCredentials('we_b', sealed, key)).toThrow(/cannot be decrypted/);
  });

  it('a failure message never carries a secret value', () => {
    const outcome = brokerFailure(new Error('login refused for pw-123 ACCESS_REFUSED'), 5, ['pw-123']);
    expect(outcome).toMatchObject({ succeeded: false, errorKind: 'broker_refused', latencyMs: 5 });
    expect(outcome.errorMessage).toBe('login refused for *** ACCESS_REFUSED');
    expect(
      brokerFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), 1, []).errorKind,
    ).toBe('connection');
  });
});

describe('M11 broker connections', () => {
  it('the pool keeps at most `max` connections, closing the least recently used', async () => {
    const closed: string[] = [];
    const pool = createConnectionPool<{ usable(): boolean; close(): Promise<void> }>({ max: 2 });
    const open = (name: string) => async () => ({ usable: () => true, close: async () => void closed.push(name) });
    await pool.get('a', open('a'));
    await pool.get('b', open('b'));
    await pool.get('a', open('a2')); // reused: a is now the most recent
    await pool.get('c', open('c'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(closed).toEqual(['b']);
    expect(pool.size()).toBe(2);
    await pool.close();
    expect(closed.sort()).toEqual(['a', 'b', 'c']);
  });

  it('O15: a strict profile refuses a private broker literal and a name resolving to one; development allows them', async () => {
    const strict = brokerSocketGuard({ allowInsecure: false, lookup: async () => [{ address: '10.0.0.5', family: 4 }] });
    expect(() => strict.check('127.0.0.1')).toThrow(/loopback, private/);
    expect(() => strict.check('8.8.8.8')).not.toThrow();
    const error = await new Promise<Error | null>((resolve) =>
      strict.lookup('kafka.internal', {}, ((e: Error | null) => resolve(e)) as never),
    );
    expect(error?.message).toMatch(/resolves to 10\.0\.0\.5/);
    const dev = brokerSocketGuard({ allowInsecure: true, lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
    expect(() => dev.check('127.0.0.1')).not.toThrow();
    const address = await new Promise<string>((resolve) =>
      dev.lookup('localhost', {}, ((_e: Error | null, a: string) => resolve(a)) as never),
    );
    expect(address).toBe('127.0.0.1');
  });
});
