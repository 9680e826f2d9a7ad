// A real TCP merchant for R3 that answers with raw bytes: what no well-behaved HTTP server would send (garbage,
// NUL, endless or dripping bodies, resets mid-body). It records every complete POST and when its socket closed.
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface RawRequest {
  path: string;
  body: Buffer;
  /** Set when the socket that carried this request closed (we stopped reading, or it was reset). */
  closedAt?: number;
  /** Bytes this request's answer wrote before the socket closed. */
  written: number;
}

/** Writes the answer to one request. `keepWriting` repeats a write until the socket closes (endless bodies). */
export type RawAnswer = (socket: Socket, tools: { keepWriting: (chunk: string | Buffer, everyMs: number) => void; request: RawRequest }) => void;

export async function startRawMerchant(answers: Record<string, RawAnswer>) {
  const received: RawRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    let buffer = Buffer.alloc(0);
    let current: RawRequest | undefined;
    const timers: NodeJS.Timeout[] = [];
    socket.on('error', () => {});
    socket.on('close', () => {
      sockets.delete(socket);
      timers.forEach(clearInterval);
      if (current) current.closedAt = Date.now();
    });
    socket.on('data', (data: Buffer) => {
      if (current) return; // one request per connection is all these answers need
      buffer = Buffer.concat([buffer, data]);
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffer.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffer.length < end + 4 + length) return;
      const path = /^POST (\S+)/.exec(head)?.[1] ?? '?';
      current = { path, body: buffer.subarray(end + 4, end + 4 + length), written: 0 };
      received.push(current);
      const request = current;
      const write = socket.write.bind(socket);
      socket.write = ((chunk: string | Buffer, ...rest: never[]) => {
        request.written += Buffer.byteLength(chunk);
        return write(chunk, ...rest);
      }) as typeof socket.write;
      const keepWriting = (chunk: string | Buffer, everyMs: number) => {
        timers.push(setInterval(() => socket.writable && socket.write(chunk), everyMs));
      };
      const answer = answers[path];
      if (answer) answer(socket, { keepWriting, request });
      else socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    postsTo: (path: string) => received.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
