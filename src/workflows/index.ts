// Every workflow the worker registers; the bundler loads this file (workflows are deterministic: no I/O here).
export { smokeWorkflow } from './smoke.js';
export { deliveryWorkflow } from './delivery.js';
export { reconciliationWorkflow } from './reconciliation/index.js';
export { endpointProbeWorkflow } from './endpoint-probe.js';
