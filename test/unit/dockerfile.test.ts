// Issue 22 item 2: the Dockerfile is multi-stage on Node 20 slim, its final stage installs production dependencies
// only (`npm ci --omit=dev`), holds nothing but dist/, drizzle/, config/ (and the package files and patches/ npm ci and ESM
// need), runs as a non-root user, and is one image for the three processes (node + dist/workers/<process>.js).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lastOf, parseDockerfile, stageEnv } from '../helpers/dockerfile.js';
import { importGraph, ROOT } from '../helpers/import-graph.js';

const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const final = stages.at(-1)!;

describe('Dockerfile', () => {
  it('is multi-stage, every stage on node:20-slim', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage.image).toBe('node:20-slim');
    expect(stages[0]!.instructions.filter((i) => i.op === 'RUN').map((i) => i.text)).toContain('npm run build');
  });

  it('the final stage installs production dependencies only, and runs nothing else', () => {
    const runs = final.instructions.filter((i) => i.op === 'RUN').map((i) => i.text);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatch(/^npm ci --omit=dev( |$)/);
  });

  it('the final stage copies only dist/ (from the build), drizzle/, config/ and the package files', () => {
    const copies = final.instructions.filter((i) => i.op === 'COPY');
    const fromBuild = copies.filter((c) => c.flags.from).flatMap((c) => c.args.slice(0, -1));
    const fromContext = copies.filter((c) => !c.flags.from).flatMap((c) => c.args.slice(0, -1));
    expect(fromBuild).toEqual(['/app/dist']);
    expect(fromContext.sort()).toEqual(['config', 'drizzle', 'package-lock.json', 'package.json', 'patches']);
  });

  it('runs as a numeric non-root user, in production mode with source maps', () => {
    const user = lastOf(final, 'USER')?.args[0] ?? 'root';
    expect(user).toMatch(/^[1-9]\d*(:\d+)?$/);
    expect(stageEnv(final)).toMatchObject({ NODE_ENV: 'production', NODE_OPTIONS: '--enable-source-maps' });
  });

  it('is one image for the three processes: node is the entry point, the API the default command', () => {
    expect(lastOf(final, 'ENTRYPOINT')?.args).toEqual(['node']);
    expect(lastOf(final, 'CMD')?.args).toEqual(['dist/workers/api.js']);
  });
});

describe('what `npm ci --omit=dev` leaves the image', () => {
  // CI once failed in image-tree.test.ts: src/providers/stripe-api.ts imported `stripe`, a devDependency, so the image's
  // processes could not start. Every package src/ loads at run time (not an erased `import type`) is a dependency.
  it('every package src/ imports at run time is a production dependency', { timeout: 30_000 }, () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const runtime = importGraph(['src']).filter(
      (e) => !e.typeOnly && !e.specifier.startsWith('.') && !e.specifier.startsWith('node:'),
    );
    const missing = [...new Set(runtime.filter((e) => !(e.to in pkg.dependencies)).map((e) => `${e.to} (${e.from})`))];
    expect(runtime.length).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });
});

describe('the Dockerfile reader', () => {
  it('reads stages, flags, JSON arguments, ENV pairs and line continuations', () => {
    const parsed = parseDockerfile(
      '# c\nFROM node:20-slim AS build\nWORKDIR /app\nRUN npm ci \\\n  --omit=dev\nFROM x\nENV A=1 B=2\nCOPY --from=build /app/dist ./dist\nCMD ["a", "b"]\n',
    );
    expect(parsed.map((s) => [s.image, s.name])).toEqual([
      ['node:20-slim', 'build'],
      ['x', null],
    ]);
    expect(parsed[0]!.instructions[1]).toMatchObject({ op: 'RUN', text: 'npm ci --omit=dev' });
    expect(stageEnv(parsed[1]!)).toEqual({ A: '1', B: '2' });
    expect(parsed[1]!.instructions[1]).toMatchObject({ op: 'COPY', flags: { from: 'build' }, args: ['/app/dist', './dist'] });
    expect(lastOf(parsed[1]!, 'CMD')?.args).toEqual(['a', 'b']);
  });
});
