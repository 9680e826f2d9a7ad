// What a test reads back from the process it runs in: the log lines a logger wrote (R1, A8, I15: secrets never in
// them) and a port nothing listens on (bound by the OS, then closed: a peer that refuses, or a port to hand a child).
import { createServer, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/lib/logger.js';

/** The project's logger (its redaction and serializers) writing JSON lines into `lines`. */
export function capturedLogger(name: string, level = 'debug'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger(name, level, sink), lines };
}

/** A port free a moment ago: nothing listens on it until someone binds it. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
