// Issue 22 item 4: `helm lint` and `helm template` of deploy/helm/apipay (helm v3.22.0, scripts/lib/common.sh
// ensure_helm), and the rendered manifests held against the code: every variable the chart sets is one the code
// reads, every port and probe path one the processes serve with those settings, the commands the Dockerfile's
// entry point with files the build emits, the profile one src/config/profile.ts accepts, the alert rules
// config/alerts' own, termination grace longer than the drain.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ENV_READ_ELSEWHERE, ENV_VARIABLES, parseEnv } from '../../src/config/env.js';
import { tracingEnabled } from '../../src/tracing/sdk.js';
import { parseProfile } from '../../src/config/profile.js';
import { lastOf, parseDockerfile } from '../helpers/dockerfile.js';
import { ROOT } from '../helpers/import-graph.js';

const HELM =
  process.env.HELM_BIN || join(process.env.APIPAY_CACHE ?? join(process.env.HOME ?? '', '.cache/apipay'), 'bin/helm-v3.22.0');
const CHART = join(ROOT, 'deploy/helm/apipay');
// One thread: the unit project runs timing-sensitive tests (test/unit/open-loop.test.ts) beside this one.
const helm = (...args: string[]) =>
  execFileSync(HELM, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GOMAXPROCS: '1' } });
type Manifest = {
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec: any;
  data?: Record<string, string>;
};
const render = (...sets: string[]): Manifest[] =>
  parseAllDocuments(helm('template', 'rel', CHART, ...sets.flatMap((s) => ['--set', s])))
    .map((d) => d.toJS() as Manifest)
    .filter(Boolean);

/** Everything external switched on: TLS to Temporal (mTLS + CA), Kafka TLS + SASL, a private CA, monitoring, tracing. */
const ALL_ON = [
  'temporal.tls.enabled=true',
  'temporal.tls.secretName=temporal-client',
  'temporal.tls.ca=true',
  'temporal.tls.serverName=temporal.internal',
  'kafka.ssl=true',
  'kafka.sasl.mechanism=scram-sha-512',
  'kafka.sasl.username=apipay',
  'extraCaSecretName=corp-ca',
  'monitoring.serviceMonitor.enabled=true',
  'monitoring.prometheusRule.enabled=true',
  'secrets.keys.SECRETS_ENCRYPTION_PREVIOUS_KEYS=previous-keys',
  // R18: traces to a collector with a vendor header, a sampled share, the console's trace links.
  'tracing.endpoint=http://otel-collector.observability.svc:4318',
  'tracing.sampler=parentbased_traceidratio',
  'tracing.samplerArg=0.25',
  'tracing.resourceAttributes=deployment.environment=production',
  'tracing.headersSecret.name=otlp',
  'tracing.traceUrl=https://jaeger.example.com/trace',
];
const COMPONENTS = ['api', 'worker', 'dispatcher'] as const;
/** A23: what `api.trustedProxies: auto` trusts behind a ClusterIP Service. */
const PRIVATE_RANGES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'];

describe.skipIf(!existsSync(HELM))('helm chart deploy/helm/apipay', () => {
  const plain = render();
  const all = render(...ALL_ON);
  const byKind = (ms: Manifest[], kind: string) => ms.filter((m) => m.kind === kind);
  const deployment = (ms: Manifest[], c: string) => byKind(ms, 'Deployment').find((d) => d.metadata.name === `rel-apipay-${c}`)!;
  const envOf = (ms: Manifest[]) => byKind(ms, 'ConfigMap').find((m) => m.metadata.name === 'rel-apipay-env')!.data!;
  const profileText = plain.find((m) => m.metadata.name === 'rel-apipay-profile')!.data!['profile.yaml']!;

  it('helm lint passes', () => {
    expect(helm('lint', CHART, ...ALL_ON.flatMap((s) => ['--set', s]))).toContain('0 chart(s) failed');
  });

  it('renders a Deployment, a PodDisruptionBudget and a metrics Service per process, HPAs, the migration Job', () => {
    for (const ms of [plain, all]) {
      expect(
        byKind(ms, 'Deployment')
          .map((d) => d.metadata.name)
          .sort(),
      ).toEqual(COMPONENTS.map((c) => `rel-apipay-${c}`).sort());
      expect(byKind(ms, 'PodDisruptionBudget')).toHaveLength(3);
      expect(
        byKind(ms, 'HorizontalPodAutoscaler')
          .map((h) => h.spec.scaleTargetRef.name)
          .sort(),
      ).toEqual(['rel-apipay-api', 'rel-apipay-worker']);
      expect(byKind(ms, 'Job')).toHaveLength(1);
    }
    expect(byKind(plain, 'ServiceMonitor')).toHaveLength(0);
    expect(byKind(all, 'ServiceMonitor')).toHaveLength(1);
  });

  it('every variable the chart sets is one the code reads (src/config/env.ts, or the reader ENV_READ_ELSEWHERE names)', () => {
    const profileRefs = [...profileText.matchAll(/env:([A-Z_][A-Z0-9_]*)/g)].map((m) => m[1]!);
    const known = new Set([...ENV_VARIABLES, ...Object.keys(ENV_READ_ELSEWHERE), ...profileRefs]);
    for (const ms of [plain, all]) {
      const names = [
        ...Object.keys(envOf(ms)),
        ...[...byKind(ms, 'Deployment'), ...byKind(ms, 'Job')].flatMap((w) =>
          w.spec.template.spec.containers.flatMap((c: any) => (c.env ?? []).map((e: any) => e.name)),
        ),
      ];
      expect(names.filter((n) => !known.has(n))).toEqual([]);
    }
    expect(Object.keys(envOf(all))).toEqual(
      expect.arrayContaining(['TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_CA_PATH', 'KAFKA_SASL_MECHANISM', 'NODE_EXTRA_CA_CERTS']),
    );
    for (const [name, reader] of Object.entries(ENV_READ_ELSEWHERE))
      if (reader.startsWith('src/'))
        expect(readFileSync(join(ROOT, reader), 'utf8'), `${reader} reads ${name}`).toContain(`process.env.${name}`);
  });

  it('R18 tracing: off unless an endpoint is given; then the OTEL_* settings are ones env.ts accepts and turn it on', () => {
    expect(Object.keys(envOf(plain)).filter((n) => n.startsWith('OTEL_') || n === 'APIPAY_TRACE_URL')).toEqual([]);
    const settings = envOf(all);
    // The secrets come by reference, not in the ConfigMap: stand-ins for them.
    const parsed = parseEnv({
      ...settings,
      ADMIN_TOKEN: 'x'.repeat(24),
      SECRETS_ENCRYPTION_KEY: Buffer.alloc(32).toString('base64'),
      KAFKA_SASL_PASSWORD: 'p',
    });
    expect(tracingEnabled(parsed)).toBe(true);
    expect(parsed).toMatchObject({
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: 0.25,
      APIPAY_TRACE_URL: 'https://jaeger.example.com/trace',
    });
    for (const c of COMPONENTS) {
      const env = deployment(all, c).spec.template.spec.containers[0].env as { name: string; valueFrom?: any }[];
      expect(env.find((e) => e.name === 'OTEL_EXPORTER_OTLP_HEADERS')?.valueFrom.secretKeyRef).toEqual({
        name: 'otlp',
        key: 'otlp-headers',
      });
    }
  });

  it('the profile ConfigMap is config/example.yaml and src/config/profile.ts accepts it', () => {
    // A23: but for the trusted proxies, which the chart sets for its ingress (next test).
    const example = parse(readFileSync(join(ROOT, 'config/example.yaml'), 'utf8'));
    expect(example.http.trusted_proxies).toEqual([]);
    expect(parse(profileText)).toEqual({ ...example, http: { ...example.http, trusted_proxies: PRIVATE_RANGES } });
    const secrets = Object.fromEntries([...profileText.matchAll(/env:([A-Z_][A-Z0-9_]*)/g)].map((m) => [m[1]!, 'x'.repeat(32)]));
    const saved = { ...process.env };
    Object.assign(process.env, secrets);
    try {
      expect(parseProfile(parse(profileText), 'profile.yaml', { nodeEnv: 'production' }).outbound.kafka.topic).toBe(
        'apipay.outbound-webhooks.v1',
      );
    } finally {
      process.env = saved;
    }
  });

  it('A23 the trusted proxies: the private ranges behind a ClusterIP Service, none on NodePort/LoadBalancer, a list as given', () => {
    const trusted = (...sets: string[]) => {
      const text = render(...sets).find((m) => m.metadata.name === 'rel-apipay-profile')!.data!['profile.yaml']!;
      return parse(text).http.trusted_proxies;
    };
    expect(parse(profileText).http.trusted_proxies).toEqual(PRIVATE_RANGES);
    expect(trusted('api.service.type=LoadBalancer')).toEqual([]);
    expect(trusted('api.service.type=NodePort')).toEqual([]);
    expect(trusted('api.service.type=LoadBalancer', 'api.trustedProxies={10.42.0.0/16}')).toEqual(['10.42.0.0/16']);
    expect(trusted('profile.http.trusted_proxies={10.1.0.0/16,fd00:1::/64}')).toEqual(['10.1.0.0/16', 'fd00:1::/64']);
  });

  it('ports and probes are the ones each process serves with the settings the chart gives it', () => {
    const env = envOf(all);
    const portVariable = {
      api: 'API_METRICS_PORT',
      worker: 'WORKER_METRICS_PORT',
      dispatcher: 'DISPATCHER_METRICS_PORT',
    } as const;
    const hostVariable = {
      api: 'API_METRICS_HOST',
      worker: 'WORKER_METRICS_HOST',
      dispatcher: 'DISPATCHER_METRICS_HOST',
    } as const;
    // The listeners that answer the probes: src/metrics/server.ts (worker, dispatcher, the API's private port).
    const served = readFileSync(join(ROOT, 'src/metrics/server.ts'), 'utf8');
    for (const path of ['/healthz', '/readyz', '/metrics']) expect(served).toContain(`path === '${path}'`);
    for (const c of COMPONENTS) {
      const [container] = deployment(all, c).spec.template.spec.containers;
      const ports = Object.fromEntries(container.ports.map((p: any) => [p.name, p.containerPort]));
      expect(String(ports.metrics)).toBe(env[portVariable[c]]);
      expect(env[hostVariable[c]]).toBe('0.0.0.0'); // reachable by the kubelet and Prometheus
      expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
      expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
      if (c === 'api') {
        expect(String(ports.http)).toBe(env.API_PORT);
        expect(env.API_HOST).toBe('0.0.0.0');
      }
    }
    const service = byKind(all, 'Service').find((s) => s.metadata.name === 'rel-apipay-api')!;
    expect(service.spec.ports[0].targetPort).toBe('http');
  });

  it('the commands are the Dockerfile entry point with the files the build emits', () => {
    const entrypoint = lastOf(parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')).at(-1)!, 'ENTRYPOINT')!.args;
    const emitted = (js: string) => existsSync(join(ROOT, js.replace(/^dist\//, 'src/').replace(/\.js$/, '.ts')));
    for (const c of COMPONENTS) {
      const [container] = deployment(all, c).spec.template.spec.containers;
      expect(container.command).toEqual(entrypoint);
      expect(container.args).toEqual([`dist/workers/${c}.js`]);
      expect(emitted(container.args[0])).toBe(true);
      expect(container.image).toBe('ghcr.io/apipay/apipay-webhooks:0.1.0');
    }
    const [job] = byKind(all, 'Job');
    expect(job!.spec.template.spec.containers[0].command).toEqual(entrypoint);
    expect(job!.spec.template.spec.containers[0].args).toEqual(['dist/db/migrate.js']);
    expect(emitted('dist/db/migrate.js')).toBe(true);
  });

  it('the migration Job runs before install and upgrade as the owner, with only the owner URL and the role', () => {
    const [job] = byKind(plain, 'Job');
    expect(job!.metadata.annotations).toMatchObject({ 'helm.sh/hook': 'pre-install,pre-upgrade' });
    const env = job!.spec.template.spec.containers[0].env;
    expect(env.map((e: any) => e.name)).toEqual(['MIGRATION_DATABASE_URL', 'DATABASE_APP_ROLE']);
    expect(env[0].valueFrom.secretKeyRef).toEqual({ name: 'apipay', key: 'migration-database-url' });
    // …and no process gets the owner's URL.
    for (const c of COMPONENTS)
      expect(deployment(plain, c).spec.template.spec.containers[0].env.map((e: any) => e.name)).not.toContain(
        'MIGRATION_DATABASE_URL',
      );
  });

  it('secrets are references only: the chart renders no Secret and no secret value', () => {
    for (const ms of [plain, all]) {
      expect(byKind(ms, 'Secret')).toEqual([]);
      const secretNames = [
        'ADMIN_TOKEN',
        'SECRETS_ENCRYPTION_KEY',
        'DATABASE_URL',
        'KAFKA_SASL_PASSWORD',
        'SECRETS_ENCRYPTION_PREVIOUS_KEYS',
      ];
      expect(Object.keys(envOf(ms)).filter((n) => secretNames.includes(n))).toEqual([]);
      for (const c of COMPONENTS)
        for (const e of deployment(ms, c).spec.template.spec.containers[0].env)
          if (secretNames.includes(e.name)) expect(e.valueFrom?.secretKeyRef?.name, e.name).toBeTruthy();
    }
  });

  it('termination grace is longer than the drain (preStop + the shutdown bound of src/lib/shutdown.ts)', () => {
    const bound =
      Number(/timeoutMs = ([\d_]+)/.exec(readFileSync(join(ROOT, 'src/lib/shutdown.ts'), 'utf8'))![1]!.replace(/_/g, '')) / 1000;
    for (const c of COMPONENTS) {
      const pod = deployment(plain, c).spec.template.spec;
      const preStop = Number(pod.containers[0].lifecycle.preStop.exec.command[1]);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(preStop + bound);
    }
  });

  it('the worker HPA scales on the task-queue backlog the worker exports', () => {
    const hpa = byKind(plain, 'HorizontalPodAutoscaler').find((h) => h.metadata.name === 'rel-apipay-worker')!;
    const metric = hpa.spec.metrics[0].external.metric;
    expect(readFileSync(join(ROOT, 'src/metrics/task-queue-backlog.ts'), 'utf8')).toContain(`name: '${metric.name}'`);
    expect(metric.selector.matchLabels).toEqual({ task_queue: 'apipay-inbound-reconciliation', type: 'workflow' });
  });

  it('the PrometheusRule holds the rules of config/alerts/apipay.rules.yml, and the chart copy is the same file', () => {
    const rules = readFileSync(join(ROOT, 'config/alerts/apipay.rules.yml'), 'utf8');
    expect(readFileSync(join(CHART, 'files/apipay.rules.yml'), 'utf8')).toBe(rules);
    const [rule] = byKind(all, 'PrometheusRule');
    expect(rule!.spec.groups).toEqual(parse(rules).groups);
  });

  it('R23 two replicas of a tier never share a node: a hard spread over nodes, a soft one over zones, anti-affinity', () => {
    const spreadOf = (ms: Manifest[], c: string) => deployment(ms, c).spec.template.spec;
    for (const c of COMPONENTS) {
      const pod = spreadOf(plain, c);
      const selector = {
        matchLabels: {
          'app.kubernetes.io/name': 'apipay',
          'app.kubernetes.io/instance': 'rel',
          'app.kubernetes.io/component': c,
        },
      };
      expect(pod.topologySpreadConstraints).toEqual(
        expect.arrayContaining([
          { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: selector },
          {
            maxSkew: 1,
            topologyKey: 'topology.kubernetes.io/zone',
            whenUnsatisfiable: 'ScheduleAnyway',
            labelSelector: selector,
          },
        ]),
      );
      expect(pod.topologySpreadConstraints).toHaveLength(2);
      expect(pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution).toEqual([
        { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: selector } },
      ]);
      // each tier's PDB selects exactly that tier's pods and keeps one of two running
      const pdb = byKind(plain, 'PodDisruptionBudget').find((p) => p.metadata.name === `rel-apipay-${c}`)!;
      expect(pdb.spec.selector).toEqual(selector);
      expect(pdb.spec.minAvailable ?? 2 - pdb.spec.maxUnavailable).toBe(1);
    }
    const strict = render('spread.antiAffinity=required', 'spread.zone=');
    const pod = spreadOf(strict, 'worker');
    expect(pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey).toBe(
      'kubernetes.io/hostname',
    );
    expect(pod.topologySpreadConstraints.map((t: any) => t.topologyKey)).toEqual(['kubernetes.io/hostname']);
    const none = spreadOf(render('spread.antiAffinity=none', 'spread.zone=', 'spread.hostname='), 'api');
    expect(none.affinity).toBeUndefined();
    expect(none.topologySpreadConstraints).toBeUndefined();
  });

  it('pods run as non-root with a read-only root file system', () => {
    for (const c of COMPONENTS) {
      const pod = deployment(plain, c).spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(pod.containers[0].securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    }
  });
});

describe('helm for the chart checks', () => {
  it('is installed (scripts/lib/common.sh ensure_helm, run by npm test), pinned to v3.22.0', () => {
    expect(readFileSync(join(ROOT, 'scripts/lib/common.sh'), 'utf8')).toContain('HELM_VERSION="v3.22.0"');
    expect(existsSync(HELM), `${HELM} missing: run . scripts/lib/common.sh && ensure_helm`).toBe(true);
  });
});
