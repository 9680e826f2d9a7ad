// A bare /metrics HTTP listener for processes that have no API (worker, dispatcher).
import { createServer, type Server } from 'node:http';
import { renderMetrics } from './registry.js';

/** Listens at once; wait with lib/startup's listening(), which turns EADDRINUSE into one line (R9). */
export function serveMetrics(port: number, host = '127.0.0.1'): Server {
  const server = createServer(async (req, res) => {
    if (req.url === '/metrics') {
      const { contentType, body } = await renderMetrics();
      res.writeHead(200, { 'content-type': contentType }).end(body);
    } else if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    } else {
      res.writeHead(404).end();
    }
  });
  return server.listen(port, host);
}
