// Issue 22 item 2, without a container engine: builds the Dockerfile's stages as directories, following its COPY
// and RUN lines (test/helpers/dockerfile.ts): the build stage runs `npm run build` on the copied sources, the final
// stage runs its `npm ci --omit=dev` and takes dist/ from the build. From that tree alone (no tsx, no TypeScript,
// no devDependency), `node dist/db/migrate.js` migrates a fresh database as the migration Job would, and the API,
// worker and dispatcher start as the image starts them, become ready against the real PostgreSQL, Temporal and
// Kafka, and the worker runs a workflow from the prebuilt bundle.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APPS,
  ensureNamespace,
  READY_PORT_VARIABLE,
  startApp,
  type AppName,
  type StartedApp,
} from '../../bench/lib/app-start.js';
import { TASK_QUEUES } from '../../src/shared/task-queues.js';
import { buildStage, lastOf, linkNodeModules, parseDockerfile, stageEnv, workdirOf } from '../helpers/dockerfile.js';
import { TEMPORAL_ADDRESS } from '../helpers/env.js';
import { ROOT } from '../helpers/import-graph.js';
import { appProcessEnv, privateDatabase } from '../helpers/private-database.js';

const NAMESPACE = 'apipay-image-tree';
const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const final = stages.at(-1)!;
const work = mkdtempSync(join(tmpdir(), 'apipay-image-'));
const tree = join(work, 'final');
const image = privateDatabase('image');
const started: Partial<Record<AppName, StartedApp>> = {};

/** What the image's processes get: the Dockerfile's ENV, the deployment's settings, no PATH into node_modules. */
const env: Record<string, string> = {
  ...stageEnv(final),
  PATH: '/usr/bin:/bin',
  HOME: work,
  ...appProcessEnv(image, NAMESPACE),
  API_PORT: '13970',
  WORKER_METRICS_PORT: '13971',
  DISPATCHER_METRICS_PORT: '13972',
};

beforeAll(async () => {
  const built: Record<string, { dir: string; workdir: string }> = {};
  for (const [index, stage] of stages.entries()) {
    const dir = join(work, stage === final ? 'final' : (stage.name ?? `stage-${index}`));
    const isFinal = stage === final;
    buildStage(stage, {
      context: ROOT,
      into: dir,
      stages: built,
      // The build stage's full install is the repository's own (same lock file, devDependencies included): link it
      // instead of installing it again. The final stage's `npm ci --omit=dev` runs as written.
      run: (command, into) =>
        !isFinal && /^npm ci( |$)/.test(command) && !command.includes('--omit') ? (linkNodeModules(ROOT, into), true) : false,
    });
    if (stage.name) built[stage.name] = { dir, workdir: workdirOf(stage) };
  }
  await image.create(); // empty: the tree's own migrate.js fills it
  await ensureNamespace(TEMPORAL_ADDRESS, NAMESPACE);
}, 900_000);

afterAll(async () => {
  await Promise.all(Object.values(started).map((app) => app?.stop()));
  await image.drop();
  rmSync(work, { recursive: true, force: true });
});

describe('the image file tree (Dockerfile final stage, built without an engine)', () => {
  it('holds only dist/, drizzle/, config/, the package files and production node_modules: no tsx, no TypeScript', () => {
    // What the final stage's COPY lines bring (test/unit/dockerfile.test.ts holds that list to the rules) and npm ci's
    // node_modules: nothing else, src/ least of all.
    const copied = final.instructions
      .filter((i) => i.op === 'COPY')
      .flatMap((i) => {
        const [dest, sources] = [i.args.at(-1)!, i.args.slice(0, -1)];
        return dest.endsWith('/') ? sources.map((source) => basename(source)) : [basename(dest)];
      });
    expect(readdirSync(tree).sort()).toEqual([...new Set([...copied, 'node_modules'])].sort());
    expect(copied).toEqual(expect.arrayContaining(['config', 'dist', 'drizzle']));
    expect(existsSync(join(tree, 'src'))).toBe(false);
    expect(realpathSync(join(tree, 'node_modules'))).toBe(join(realpathSync(tree), 'node_modules')); // its own install
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
      dependencies: Record<string, string>;
    };
    // @types/node comes in as a production dependency's dependency: declarations, no code. Every other one is absent.
    const devOnly = Object.keys(pkg.devDependencies).filter((dev) => !dev.startsWith('@types/'));
    expect(devOnly).toEqual(expect.arrayContaining(['tsx', 'typescript', 'vitest', 'drizzle-kit']));
    for (const dev of devOnly) expect(existsSync(join(tree, 'node_modules', dev)), dev).toBe(false);
    for (const dependency of Object.keys(pkg.dependencies))
      expect(existsSync(join(tree, 'node_modules', dependency)), dependency).toBe(true);
    expect(existsSync(join(tree, 'dist/workers/api.js'))).toBe(true);
    expect(existsSync(join(tree, 'dist/workers/api.js.map'))).toBe(true);
    expect(existsSync(join(tree, 'dist/workflow-bundle.js'))).toBe(true);
    // Run from dist/, the worker construction finds that bundle (and would bundle dist/workflows/index.js without it).
    const found = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('./dist/temporal-workers/build.js'); console.log(JSON.stringify([m.prebuiltWorkflowBundle(), m.WORKFLOWS_PATH]))",
      ],
      { cwd: tree, env, encoding: 'utf8' },
    );
    expect(JSON.parse(found.stdout)).toEqual([
      { codePath: join(tree, 'dist/workflow-bundle.js') },
      join(tree, 'dist/workflows/index.js'),
    ]);
  });

  it('node dist/db/migrate.js migrates a fresh database as the owner and grants the application role', async () => {
    const migrate = spawnSync(process.execPath, ['dist/db/migrate.js'], {
      cwd: tree,
      env: { ...env, MIGRATION_DATABASE_URL: image.ownerUrl },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(migrate.status, migrate.stderr).toBe(0);
    expect(migrate.stdout).toContain('grants applied to apipay_app');
    const db = postgres(image.appUrl, { max: 1 });
    try {
      const [row] = await db`select count(*)::int as n from smoke_runs`;
      expect(row!.n).toBe(0);
    } finally {
      await db.end();
    }
  });

  it.each(APPS)(
    '%s starts from the tree as the image runs it and becomes ready on the real stack',
    { timeout: 180_000 },
    async (app) => {
      const entrypoint = lastOf(final, 'ENTRYPOINT')!.args;
      expect(entrypoint).toEqual(['node']);
      const args = app === 'api' ? lastOf(final, 'CMD')!.args : [`dist/workers/${app}.js`];
      const port = Number(env[READY_PORT_VARIABLE[app]]);
      started[app] = await startApp({ command: process.execPath, args, cwd: tree, env, port, timeoutMs: 150_000 });
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
    },
  );

  it(
    'the worker from the tree runs a workflow from the prebuilt bundle, its activity writing to PostgreSQL',
    { timeout: 120_000 },
    async () => {
      expect(started.worker, 'the worker started').toBeDefined();
      const connection = await Connection.connect({ address: TEMPORAL_ADDRESS });
      try {
        const client = new Client({ connection, namespace: NAMESPACE });
        const runId = `image-${Date.now()}`;
        const result = await client.workflow.execute('smokeWorkflow', {
          taskQueue: TASK_QUEUES.smoke,
          workflowId: `smoke-${runId}`,
          args: [{ runId, note: 'image tree' }],
          workflowExecutionTimeout: '60s',
        });
        expect(result).toMatchObject({ runId });
        // The worker exports its task queues' backlog (the chart's worker HPA scales on it).
        const metrics = await (await fetch('http://127.0.0.1:13971/metrics')).text();
        expect(metrics).toMatch(/^apipay_temporal_task_queue_backlog\{task_queue="apipay-smoke",type="workflow"\} \d+$/m);
      } finally {
        await connection.close();
      }
      const db = postgres(image.appUrl, { max: 1 });
      try {
        expect(await db`select note from smoke_runs`).toEqual([{ note: 'image tree' }]);
      } finally {
        await db.end();
      }
    },
  );

  it('the API from the tree serves the admin API', async () => {
    expect(started.api, 'the API started').toBeDefined();
    const response = await fetch('http://127.0.0.1:13970/admin/v1/openapi.json');
    expect(response.status).toBe(200);
    expect(((await response.json()) as { openapi?: string }).openapi).toMatch(/^3\./);
  });

  it.each(APPS)('%s stops on SIGTERM with exit code 0 (how Kubernetes ends a pod)', { timeout: 60_000 }, async (app) => {
    const running = started[app];
    expect(running, `${app} started`).toBeDefined();
    delete started[app];
    expect(await running!.stop()).toBe(0);
  });
});
