// The profile and environment are validated once, and a bad value names its key (requirements §5).
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/config/duration.js';
import { parseEnv } from '../../src/config/env.js';
import { loadProfile, parseProfile, ProfileError } from '../../src/config/profile.js';
import { createProviderRegistry } from '../../src/providers/index.js';
import { reconciliationTuning, workerTuning } from '../../src/temporal-workers/build.js';

process.env.SANDBOX_STRIPE_WEBHOOK_SECRET ??= 'whsec_unit';
process.env.SANDBOX_HMAC_WEBHOOK_SECRET ??= 'unit-hmac';
const example = () => parse(readFileSync('config/example.yaml', 'utf8')) as Record<string, any>;

describe('durations', () => {
  it.each([
    ['500ms', 500],
    ['10s', 10_000],
    ['1m', 60_000],
    ['2h', 7_200_000],
    ['7d', 604_800_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
    expect(formatDuration(ms)).toBe(text);
  });
  it.each(['', '10', 'ten s', '5w', '-1m'])('"%s" is refused', (text) => {
    expect(() => parseDuration(text)).toThrow(/not a duration/);
  });
});

describe('profile', () => {
  it('the example profile loads with the requirements §5 values', () => {
    const profile = loadProfile('config/example.yaml');
    expect(profile.outbound.retry_schedule).toEqual([60_000, 300_000, 1_800_000, 7_200_000, 43_200_000]);
    expect(profile.outbound.request_timeout).toBe(10_000);
    expect(profile.outbound.auto_disable_after).toBe(7 * 86_400_000);
    expect(profile.outbound.secret_rotation_grace).toBe(86_400_000);
    expect(profile.outbound.kafka).toEqual({ topic: 'apipay.outbound-webhooks.v1', group: 'webhook-dispatcher' });
    expect(profile.inbound.allow_provisional_access).toBe(false);
    expect(profile.inbound.providers['sandbox-stripe']?.secret_ref).toBe(process.env.SANDBOX_STRIPE_WEBHOOK_SECRET);
  });

  it('the demo profile loads too', () => {
    expect(loadProfile('config/demo.yaml').outbound.retry_schedule).toHaveLength(5);
  });

  it.each([
    ['a bad duration', (p: any) => (p.outbound.retry_schedule = ['1m', 'soon']), 'outbound.retry_schedule.1'],
    ['an unknown key', (p: any) => (p.outbound.retry_scedule = ['1m']), 'outbound'],
    ['a wrong type', (p: any) => (p.inbound.allow_provisional_access = 'no'), 'inbound.allow_provisional_access'],
    ['a missing key', (p: any) => delete p.outbound.request_timeout, 'outbound.request_timeout'],
    ['a scheme that is not a name', (p: any) => (p.inbound.providers['sandbox-hmac'].scheme = 'MD-5'), 'inbound.providers.sandbox-hmac.scheme'],
    ['a bad secret ref', (p: any) => (p.inbound.providers['sandbox-stripe'].secret_ref = 'whsec_inline'), 'inbound.providers.sandbox-stripe.secret_ref'],
    ['an unset secret', (p: any) => (p.inbound.providers['sandbox-stripe'].secret_ref = 'env:APIPAY_UNSET_SECRET'), 'APIPAY_UNSET_SECRET is not set'],
  ])('%s is refused with a message naming the key', (_, mutate, named) => {
    const document = example();
    mutate(document);
    expect(() => parseProfile(document)).toThrow(ProfileError);
    expect(() => parseProfile(document)).toThrow(named);
  });

  // I15: a scheme's own keys are its file's to validate; building the registry (at every process's start) refuses them.
  it.each([
    ['an unknown scheme', (p: any) => (p.inbound.providers['sandbox-hmac'].scheme = 'md5'), 'inbound.providers.sandbox-hmac.scheme: unknown scheme "md5"'],
    ['a missing scheme key', (p: any) => delete p.inbound.providers['sandbox-hmac'].header, 'inbound.providers.sandbox-hmac.header'],
    ['a bad scheme key', (p: any) => (p.inbound.providers['sandbox-hmac'].encoding = 'hex64'), 'inbound.providers.sandbox-hmac.encoding'],
    ['a key the scheme does not have', (p: any) => (p.inbound.providers['sandbox-stripe'].header = 'X-Sig'), 'inbound.providers.sandbox-stripe.header'],
  ])('I15 %s is refused by the registry with a message naming the key', (_, mutate, named) => {
    const document = example();
    mutate(document);
    const profile = parseProfile(document);
    expect(() => createProviderRegistry(profile.inbound.providers)).toThrow(ProfileError);
    expect(() => createProviderRegistry(profile.inbound.providers)).toThrow(named);
  });

  it('A24 admin.signed_request_ttl defaults to 5m and is bounded to 10s..1h, naming the key', () => {
    expect(parseProfile(example()).admin.signed_request_ttl).toBe(300_000);
    for (const bad of ['5s', '2h']) {
      const document = example();
      document.admin = { ...(document.admin ?? {}), signed_request_ttl: bad };
      expect(() => parseProfile(document)).toThrow(/admin\.signed_request_ttl: must be between 10s and 1h/);
    }
  });

  it('R7 allow_insecure_urls is refused when NODE_ENV=production, with a message naming the key and the fix', () => {
    const document = example();
    document.outbound.allow_insecure_urls = true;
    expect(() => parseProfile(document, 'profile p.yaml', { nodeEnv: 'production' })).toThrow(ProfileError);
    expect(() => parseProfile(document, 'profile p.yaml', { nodeEnv: 'production' })).toThrow(
      /invalid profile p\.yaml:\n {2}outbound\.allow_insecure_urls: must be false when NODE_ENV=production .*set it to false/,
    );
    expect(parseProfile(document, 'profile p.yaml', { nodeEnv: 'development' }).outbound.allow_insecure_urls).toBe(true);
    expect(() => loadProfile('config/demo.yaml', { nodeEnv: 'production' })).toThrow(/outbound\.allow_insecure_urls/);
    document.outbound.allow_insecure_urls = false;
    expect(parseProfile(document, 'profile p.yaml', { nodeEnv: 'production' }).outbound.allow_insecure_urls).toBe(false);
  });

  it('P1 delivery_mode defaults to per_delivery; batched settings have defaults; a hand-off grace under request_timeout is refused', () => {
    const profile = loadProfile('config/example.yaml');
    expect(profile.outbound.delivery_mode).toBe('per_delivery');
    expect(profile.outbound.batched).toEqual({ concurrency: 128, sweep_interval: 15_000, handoff_grace: 60_000, pipeline_depth: 512, pipeline_sends: 4, signer_ttl: 1_000, patience: 1_000 });
    expect(profile.outbound.coalesce_batches).toBe(512);
    const document = example();
    document.outbound.delivery_mode = 'batched';
    expect(parseProfile(document).outbound.delivery_mode).toBe('batched');
    document.outbound.delivery_mode = 'sometimes';
    expect(() => parseProfile(document)).toThrow(/outbound\.delivery_mode/);
    document.outbound.delivery_mode = 'batched';
    document.outbound.batched = { handoff_grace: '5s' };
    expect(() => parseProfile(document)).toThrow(/outbound\.batched\.handoff_grace: must be longer than outbound\.request_timeout/);
  });

  it('R3 the in-flight lease defaults to 30 s and must be longer than request_timeout', () => {
    expect(loadProfile('config/example.yaml').outbound.in_flight_lease).toBe(30_000);
    const document = example();
    delete document.outbound.in_flight_lease;
    expect(parseProfile(document).outbound.in_flight_lease).toBe(30_000);
    document.outbound.in_flight_lease = '10s'; // = request_timeout: a retry could mark a live POST interrupted
    expect(() => parseProfile(document)).toThrow(/outbound\.in_flight_lease: must be longer than outbound\.request_timeout/);
    document.outbound.in_flight_lease = '11s';
    expect(parseProfile(document).outbound.in_flight_lease).toBe(11_000);
  });

  it('A31 resolution_via_temporal: idp needs the idp block (the issuer whose subjects the server stamps)', () => {
    const document = parse(readFileSync('config/example.yaml', 'utf8')) as { inbound: Record<string, unknown>; idp?: unknown };
    document.inbound.resolution_via_temporal = 'idp';
    delete document.idp;
    expect(() => parseProfile(document)).toThrow(/inbound\.resolution_via_temporal: idp needs the idp block/);
    const demo = parse(readFileSync('config/demo.yaml', 'utf8')) as { inbound: Record<string, unknown> };
    demo.inbound.resolution_via_temporal = 'idp';
    expect(parseProfile(demo).inbound.resolution_via_temporal).toBe('idp');
  });

  it('a missing file names the path and the variable', () => {
    expect(() => loadProfile('config/nope.yaml')).toThrow(/config\/nope.yaml \(APIPAY_PROFILE\)/);
  });
});

describe('environment', () => {
  const valid = { ADMIN_TOKEN: 'x'.repeat(20), SECRETS_ENCRYPTION_KEY: Buffer.alloc(32).toString('base64') };
  it('defaults match the local stack', () => {
    const env = parseEnv(valid);
    expect(env.DATABASE_URL).toBe('postgres://apipay_app@127.0.0.1:5433/apipay'); // A6: the application role
    expect(env.TEMPORAL_ADDRESS).toBe('127.0.0.1:7233');
    expect(env.KAFKA_BROKERS).toEqual(['127.0.0.1:9092']);
  });
  it('a short key is refused by name, without echoing the value', () => {
    const bad = { ...valid, SECRETS_ENCRYPTION_KEY: 'c2hvcnQ=' };
    expect(() => parseEnv(bad)).toThrow(/SECRETS_ENCRYPTION_KEY/);
    expect(() => parseEnv(bad)).not.toThrow(/c2hvcnQ=/);
  });
  it('a missing admin token is refused', () => {
    expect(() => parseEnv({ SECRETS_ENCRYPTION_KEY: valid.SECRETS_ENCRYPTION_KEY })).toThrow(/ADMIN_TOKEN/);
  });
  it('P3 the reconciliation worker has slots of its own (40), the delivery slots stay bounded (10 / 20), both within the cache', () => {
    const env = parseEnv(valid);
    expect(workerTuning(env)).toMatchObject({ maxConcurrentWorkflowTaskExecutions: 10, maxConcurrentLocalActivityExecutions: 20, maxCachedWorkflows: 100 });
    expect(reconciliationTuning(env)).toEqual({ maxConcurrentWorkflowTaskExecutions: 40, maxConcurrentActivityTaskExecutions: 40, maxConcurrentLocalActivityExecutions: 40 });
    const small = parseEnv({ ...valid, WORKER_MAX_CACHED_WORKFLOWS: '16', WORKER_RECONCILIATION_WORKFLOW_TASKS: '64' });
    expect(reconciliationTuning(small).maxConcurrentWorkflowTaskExecutions).toBe(16); // never more tasks than cached workflows
    expect(() => parseEnv({ ...valid, WORKER_RECONCILIATION_ACTIVITIES: '0' })).toThrow(/WORKER_RECONCILIATION_ACTIVITIES/);
  });
});
