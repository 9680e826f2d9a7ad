// Issue 22 item 1: the worker of a release build loads the workflow bundle `npm run build` wrote, and one run from
// src/ (tsx: tests, npm start) finds none and bundles at start; the build compiles src/ alone, with source maps.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PREBUILT_BUNDLE_PATH, prebuiltWorkflowBundle, WORKFLOWS_PATH } from '../../src/temporal-workers/build.js';
import { ROOT } from '../helpers/import-graph.js';

describe('release build: the prebuilt workflow bundle', () => {
  it('run from src/, the workflows are the TypeScript source and there is no prebuilt bundle', () => {
    expect(WORKFLOWS_PATH).toBe(join(ROOT, 'src/workflows/index.ts'));
    expect(PREBUILT_BUNDLE_PATH).toBe(join(ROOT, 'src/workflow-bundle.js'));
    expect(prebuiltWorkflowBundle()).toBeUndefined();
  });

  it('a bundle file that exists is handed to the worker by path', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'bundle-')), 'workflow-bundle.js');
    expect(prebuiltWorkflowBundle(path)).toBeUndefined();
    writeFileSync(path, '// bundle');
    expect(prebuiltWorkflowBundle(path)).toEqual({ codePath: path });
  });

  it('npm run build compiles src/ to dist/ with source maps, then writes dist/workflow-bundle.js', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.build).toMatch(/tsc -p tsconfig\.build\.json && tsx scripts\/build-workflow-bundle\.ts/);
    const config = readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8');
    for (const setting of ['"rootDir": "src"', '"outDir": "dist"', '"sourceMap": true', '"noEmit": false'])
      expect(config).toContain(setting);
    expect(readFileSync(join(ROOT, 'scripts/build-workflow-bundle.ts'), 'utf8')).toContain("'../dist/workflow-bundle.js'");
  });

  it('the package export apipay-webhooks/signing is the built module with its declarations, not a TypeScript source', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    expect(pkg.exports['./signing']).toEqual({ types: './dist/signing/index.d.ts', default: './dist/signing/index.js' });
    expect(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')).toContain('"declaration": true');
    expect(JSON.stringify(pkg.exports)).not.toContain('src/');
  });
});
