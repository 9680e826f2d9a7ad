// M11 in the CLI: `endpoints create` and `update` take --type and each destination field as a flag generated from the
// type's one description (src/outbound/destinations/); secret fields come from a file, an environment variable or
// a prompt without echo, never from the command line, and are never printed back. The admin API is a fake fetch.
import { describe, expect, it } from 'vitest';
import { commandHelp, runCli } from '../../src/cli/run.js';
import { DESTINATIONS } from '../../src/outbound/destinations/index.js';

function harness(extra: { files?: Record<string, string>; prompt?: string; env?: Record<string, string> } = {}) {
  const bodies: unknown[] = [];
  const prompts: string[] = [];
  let out = '';
  let err = '';
  const io = {
    env: { ADMIN_TOKEN: 'cli-test-token-0123456789', ...extra.env } as Record<string, string | undefined>,
    fetch: (async (_url: string | URL, init?: RequestInit) => {
      bodies.push(init?.body ? JSON.parse(String(init.body)) : undefined);
      return Response.json({ id: 'we_1', object: 'webhook_endpoint', type: 'rabbitmq' }, { status: 201 });
    }) as typeof fetch,
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
    readFile: async (path: string) => {
      const text = extra.files?.[path];
      if (text === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
      return text;
    },
    ...(extra.prompt !== undefined
      ? {
          promptSecret: async (label: string) => {
            prompts.push(label);
            return extra.prompt!;
          },
        }
      : {}),
  };
  return { io, bodies, prompts, out: () => out, err: () => err };
}

const base = ['endpoints', 'create', '--merchant', 'acct_1', '--events', '*'];
const rabbit = [...base, '--type', 'rabbitmq', '--host', 'rabbit.example.com', '--username', 'shop', '--routing-key', 'q1'];
const PASSWORD = 'broker-pw-never-printed-9f3';

describe('M11 CLI destination flags come from the one description', () => {
  it('M11 every field of every type is a flag of create and update (a secret only as -file / -env), none hand-listed', () => {
    const help = commandHelp(['endpoints', 'create'])!;
    const update = commandHelp(['endpoints', 'update'])!;
    for (const d of Object.values(DESTINATIONS))
      for (const f of d.fields) {
        const flag = f.name.replaceAll('_', '-');
        const flags = f.secret ? [`--${flag}-file VALUE`, `--${flag}-env VALUE`] : [`--${flag} VALUE`];
        for (const text of flags) {
          expect(help).toContain(text);
          expect(update).toContain(text);
        }
        if (f.secret) expect(help).not.toMatch(new RegExp(`--${flag} VALUE`));
      }
    expect(help).toContain('--type rabbitmq: --host HOST [--port (5672)]');
    expect(help).toContain('--type kafka: --brokers BROKERS --topic TOPIC');
  });

  it('M11 create --type rabbitmq sends the fields and the password from --password-env, and prints no secret', async () => {
    const h = harness({ env: { RABBIT_PW: PASSWORD } });
    expect(await runCli([...rabbit, '--password-env', 'RABBIT_PW'], h.io)).toBe(0);
    expect(h.bodies[0]).toEqual({
      merchant_account: 'acct_1',
      type: 'rabbitmq',
      destination: { host: 'rabbit.example.com', username: 'shop', routing_key: 'q1', password: PASSWORD },
      event_types: ['*'],
      livemode: false,
    });
    expect(h.out() + h.err()).not.toContain(PASSWORD);
  });

  it('M11 a secret from --password-file loses its trailing newline; a missing file or variable is a usage error naming it', async () => {
    const h = harness({ files: { '/run/pw': `${PASSWORD}\n` } });
    expect(await runCli([...rabbit, '--password-file', '/run/pw'], h.io)).toBe(0);
    expect((h.bodies[0] as { destination: { password: string } }).destination.password).toBe(PASSWORD);
    const missing = harness();
    expect(await runCli([...rabbit, '--password-file', '/nope'], missing.io)).toBe(1);
    expect(JSON.parse(missing.err()).error.message).toBe('cannot read /nope (for password): ENOENT');
    const unset = harness();
    expect(await runCli([...rabbit, '--password-env', 'NOT_SET'], unset.io)).toBe(1);
    expect(JSON.parse(unset.err()).error.message).toBe('environment variable NOT_SET (for password) is not set');
    expect(missing.bodies.length + unset.bodies.length).toBe(0);
  });

  it('M11 a required secret not given is asked for (without echo) on create; with no prompt the error says how to give it', async () => {
    const h = harness({ prompt: PASSWORD });
    expect(await runCli(rabbit, h.io)).toBe(0);
    expect(h.prompts).toEqual(['Password (not echoed)']);
    expect((h.bodies[0] as { destination: { password: string } }).destination.password).toBe(PASSWORD);
    const none = harness();
    expect(await runCli(rabbit, none.io)).toBe(1);
    expect(JSON.parse(none.err()).error.message).toBe('password is required: give --password-file PATH or --password-env VAR');
  });

  it('M11 create --type kafka with SASL optional: no prompt when the secret is optional', async () => {
    const h = harness({ prompt: 'unused' });
    const args = [...base, '--type', 'KAFKA', '--brokers', 'k1.example.com:9092', '--topic', 'shop.events'];
    expect(await runCli(args, h.io)).toBe(0);
    expect(h.prompts).toEqual([]);
    expect(h.bodies[0]).toMatchObject({ type: 'kafka', destination: { brokers: 'k1.example.com:9092', topic: 'shop.events' } });
  });

  it.each([
    [
      [...base, '--url', 'https://m.example/h', '--host', 'r.example.com'],
      'destination flags are for --type rabbitmq or kafka; an http endpoint takes --url',
    ],
    [[...base], '--url is required (or --type rabbitmq|kafka with its fields)'],
    [[...rabbit, '--url', 'https://m.example/h'], 'a rabbitmq endpoint has destination fields, not --url'],
    [
      [...base, '--type', 'kafka', '--topic', 't', '--brokers', 'k:9092', '--vhost', '/x'],
      '--vhost is not a kafka field (brokers, topic, sasl_mechanism, username, password, tls)',
    ],
    [[...rabbit, '--password-file', 'a', '--password-env', 'B'], 'give one of --password-file and --password-env'],
    [[...base, '--type', 'sqs'], '--type must be one of http, rabbitmq, kafka (any case)'],
    [[...rabbit, '--password', PASSWORD], "Unknown option '--password'"],
  ])('M11 refused before any request: %j', async (args, message) => {
    const h = harness({ prompt: 'x' });
    expect(await runCli(args, h.io)).toBe(1);
    expect(JSON.parse(h.err()).error.message).toContain(message);
    expect(h.bodies).toEqual([]);
    expect(h.err()).not.toContain(PASSWORD);
  });

  it('M11 update sends only the given destination fields (a secret left out is kept by the API, never prompted)', async () => {
    const h = harness({ prompt: 'unused', env: { PW: PASSWORD } });
    expect(await runCli(['endpoints', 'update', 'we_1', '--routing-key', 'q2'], h.io)).toBe(0);
    expect(h.bodies[0]).toEqual({ destination: { routing_key: 'q2' } });
    expect(await runCli(['endpoints', 'update', 'we_1', '--password-env', 'PW'], h.io)).toBe(0);
    expect(h.bodies[1]).toEqual({ destination: { password: PASSWORD } });
    expect(h.prompts).toEqual([]);
    expect(h.out()).not.toContain(PASSWORD);
  });
});
