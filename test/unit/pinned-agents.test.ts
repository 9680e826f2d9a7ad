// O15: pinned dispatchers connect to the vetted address only, keep the hostname for Host and SNI, and are reused.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPinnedAgents, pinnedLookup } from '../../src/outbound/pinned-agents.js';

let server: Server;
let port: number;
const seen: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    res.end('pinned');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('pinned agents (O15)', () => {
  it('O15 a name that does not resolve anywhere reaches the vetted address, with the name in the Host header', async () => {
    const agents = createPinnedAgents();
    try {
      const url = `http://receiver.invalid:${port}/hook`; // .invalid never resolves: only the pin can connect
      const dispatcher = agents.dispatcherFor(url, [{ address: '127.0.0.1', family: 4 }]);
      expect(dispatcher).toBeDefined();
      const response = await fetch(url, { method: 'POST', body: '{}', dispatcher });
      expect(response.status).toBe(200);
      expect(await response.text()).toBe('pinned');
      expect(seen.at(-1)!.host).toBe(`receiver.invalid:${port}`);
      // Without the pin the same request fails: the name really does not resolve.
      await expect(fetch(url, { method: 'POST', body: '{}' })).rejects.toThrow();
    } finally {
      await agents.close();
    }
  });

  it('O15 TLS uses the hostname for SNI while connecting to the vetted address', async () => {
    const servernames: string[] = [];
    const tls = createTlsServer({
      SNICallback: (servername, callback) => {
        servernames.push(servername);
        callback(new Error('no certificate here; the name is what this test wanted'));
      },
    });
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    const agents = createPinnedAgents();
    try {
      const url = `https://merchant.invalid:${(tls.address() as AddressInfo).port}/hook`;
      await expect(fetch(url, { method: 'POST', body: '{}', dispatcher: agents.dispatcherFor(url, [{ address: '127.0.0.1', family: 4 }]) })).rejects.toThrow();
      expect(servernames).toEqual(['merchant.invalid']);
    } finally {
      await agents.close();
      await new Promise((resolve) => tls.close(resolve));
    }
  });

  it('O15 one agent per vetted address set (reused, so keep-alive survives); none for IP literals or unpinned checks', async () => {
    const agents = createPinnedAgents({ maxAgents: 2 });
    try {
      const a = agents.dispatcherFor('https://a.example/', [
        { address: '93.184.216.34', family: 4 },
        { address: '93.184.216.35', family: 4 },
      ]);
      const sameSet = agents.dispatcherFor('https://b.example/', [
        { address: '93.184.216.35', family: 4 },
        { address: '93.184.216.34', family: 4 },
      ]);
      expect(sameSet).toBe(a);
      expect(agents.dispatcherFor('https://93.184.216.34/', [{ address: '93.184.216.34', family: 4 }])).toBeUndefined();
      expect(agents.dispatcherFor('https://[2606:4700::1]/', [{ address: '2606:4700::1', family: 6 }])).toBeUndefined();
      expect(agents.dispatcherFor('https://a.example/', null)).toBeUndefined();
      // Past maxAgents the least recently used one is closed and a fresh one takes its place later.
      const b = agents.dispatcherFor('https://c.example/', [{ address: '8.8.8.8', family: 4 }]);
      agents.dispatcherFor('https://d.example/', [{ address: '1.1.1.1', family: 4 }]);
      expect((a as unknown as { closed: boolean }).closed).toBe(true);
      expect((b as unknown as { closed: boolean }).closed).toBe(false);
      expect(agents.dispatcherFor('https://a.example/', [{ address: '93.184.216.34', family: 4 }, { address: '93.184.216.35', family: 4 }])).not.toBe(a);
    } finally {
      await agents.close();
    }
  });

  it('O15 the pinned lookup answers only vetted addresses, in the one-address and `all` forms, filtered by family', () => {
    const lookup = pinnedLookup([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700::1', family: 6 },
    ]);
    const answers: unknown[] = [];
    const record = (err: NodeJS.ErrnoException | null, address: unknown, family?: number) => answers.push(err ? err.code : [address, family]);
    lookup('anything.example', {}, record);
    lookup('anything.example', { all: true }, record);
    lookup('anything.example', { family: 6 }, record);
    lookup('anything.example', { family: 'IPv4', all: true }, record);
    pinnedLookup([{ address: '2606:4700::1', family: 6 }])('anything.example', { family: 4 }, record);
    expect(answers).toEqual([
      ['93.184.216.34', 4],
      [[{ address: '93.184.216.34', family: 4 }, { address: '2606:4700::1', family: 6 }], undefined],
      ['2606:4700::1', 6],
      [[{ address: '93.184.216.34', family: 4 }], undefined],
      'ENOTFOUND', // no IPv4 was vetted: fail, never fall back to DNS
    ]);
  });
});
