// npm run build, second step: bundles src/workflows once into dist/workflow-bundle.js, which the worker and the
// dispatcher load instead of bundling at start (src/temporal-workers/build.ts, prebuiltWorkflowBundle).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleWorkflows } from '../src/temporal-workers/build.js';

const out = fileURLToPath(new URL('../dist/workflow-bundle.js', import.meta.url));
const code = await bundleWorkflows();
writeFileSync(out, code);
console.log(`workflow bundle: ${out} (${(code.length / 1024).toFixed(0)} KiB)`);
