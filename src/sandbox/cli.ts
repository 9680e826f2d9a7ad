// `npm run sandbox [-- --demo]` (or SANDBOX_DEMO=1): the provider sandbox as a process, playing the providers of the profile
// (APIPAY_PROFILE) on SANDBOX_PORT (default: the port of their api_base_url, 4100) and posting webhooks to
// INGRESS_URL (default http://API_HOST:API_PORT). With the demo on it also sends demo traffic (src/sandbox/demo.ts)
// every SANDBOX_DEMO_INTERVAL ms.
import { loadProfile } from '../config/profile.js';
import { createLogger } from '../lib/logger.js';
import { onShutdown } from '../lib/shutdown.js';
import { inProcessDriver, runInboundDemo } from './demo.js';
import { sandboxProvidersFromProfile, startProviderSandbox } from './provider.js';

const logger = createLogger('provider-sandbox');
const profile = loadProfile();
const providers = sandboxProvidersFromProfile(profile);
const firstApi = new URL(Object.values(profile.inbound.providers)[0]?.api_base_url ?? 'http://127.0.0.1:4100');
const port = Number(process.env.SANDBOX_PORT ?? (firstApi.port || 4100));
const ingressUrl = process.env.INGRESS_URL ?? `http://${process.env.API_HOST ?? '127.0.0.1'}:${process.env.API_PORT ?? 3000}`;

const sandbox = await startProviderSandbox({ port, host: firstApi.hostname, ingressUrl, providers });
logger.info({ url: sandbox.url, ingressUrl, providers: providers.map((p) => `${p.name} → ${sandbox.url}/${p.path}`) }, 'provider sandbox listening');

const demo = process.argv.includes('--demo') || process.env.SANDBOX_DEMO === '1'
  ? runInboundDemo({
      driver: inProcessDriver(sandbox),
      providers: providers.map((p) => p.name),
      intervalMs: Number(process.env.SANDBOX_DEMO_INTERVAL ?? 4_000),
      logger,
    })
  : undefined;

onShutdown(logger, [() => demo?.stop(), () => sandbox.close()]);
