// The private listener of a process: /metrics, /healthz and /readyz (with each failing check's error text, R5).
// The worker and dispatcher have no other HTTP surface; the API uses it when API_METRICS_PORT is set (R6).
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '../lib/logger.js';
import { createReadinessProbe, type ReadinessChecks } from '../lib/readiness.js';
import { renderMetrics } from './registry.js';

export interface MetricsServerOptions {
  /** What this process needs to do its work; /readyz answers 503 naming the ones that do not answer. */
  readiness?: ReadinessChecks;
  logger?: Logger;
}

export function serveMetrics(port: number, host = '127.0.0.1', options: MetricsServerOptions = {}): Promise<Server> {
  const probe = createReadinessProbe(options.readiness ?? {}, options.logger);
  const json = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    try {
      if (path === '/metrics') {
        const { contentType, body } = await renderMetrics();
        res.writeHead(200, { 'content-type': contentType }).end(body);
      } else if (path === '/healthz') {
        json(res, 200, { status: 'ok' });
      } else if (path === '/readyz') {
        const { ready, body } = await probe.check({ detail: true });
        json(res, ready ? 200 : 503, body);
      } else {
        res.writeHead(404).end();
      }
    } catch (error) {
      options.logger?.error({ err: error, path }, 'metrics listener failed to answer');
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
