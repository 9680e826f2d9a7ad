// Whether a loopback TCP port can be bound right now (the soak refuses to start on ports somebody else holds).
import { createServer } from 'node:net';

export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
