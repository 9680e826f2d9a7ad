// Every table of the service; drizzle-kit reads this file (drizzle.config.ts) to generate migrations.
export * from './outbound.js';
export * from './inbound.js';
export * from './smoke.js';
export * from './access.js';
export * from './dual-control.js';
export * from './audit.js';
export * from './outbox.js';
export * from './workflow-steps.js';
export * from './charts.js';
export * from './throttle.js';
