// O15: HTTP dispatchers that connect only to the addresses the send-time URL check vetted, so DNS cannot answer a
// public address to the check and 127.0.0.1 to the POST (DNS rebinding). The URL keeps its hostname: the Host
// header and TLS SNI/certificate check use the name, only the socket's destination is fixed.
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import type { VettedAddress } from './url-safety.js';

export interface PinnedAgents {
  /** The dispatcher for a POST to `url` after it was vetted to `addresses`; undefined when there is nothing to pin. */
  dispatcherFor(url: string, addresses: readonly VettedAddress[] | null): Dispatcher | undefined;
  /** Closes every agent (in-flight requests finish first); the pool stays usable and opens new ones on demand. */
  close(): Promise<void>;
}

function wantedFamily(family: LookupOptions['family']): 0 | 4 | 6 {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

/** Answers every name with the vetted addresses, never asking DNS; both the one-address and `all` forms. */
export function pinnedLookup(addresses: readonly VettedAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const family = wantedFamily(options.family);
    const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family);
    if (usable.length === 0) {
      callback(Object.assign(new Error(`no vetted IPv${family} address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
    } else if (options.all) {
      callback(null, usable.map((a): LookupAddress => ({ address: a.address, family: a.family })));
    } else {
      callback(null, usable[0]!.address, usable[0]!.family);
    }
  };
}

/**
 * One undici Agent per distinct set of vetted addresses, least recently used evicted past `maxAgents`. Agents are
 * shared, not made per request, so keep-alive connections to an endpoint whose DNS answer is stable are reused
 * across attempts; a reused connection goes to an address vetted when it was opened. An Agent's lookup ignores the
 * name it is asked about, which is safe because an Agent is only handed out for URLs vetted to its addresses.
 */
export function createPinnedAgents(options: { maxAgents?: number } = {}): PinnedAgents {
  const maxAgents = options.maxAgents ?? 256;
  const agents = new Map<string, Agent>(); // insertion order = recency

  return {
    dispatcherFor(url, addresses) {
      if (!addresses || addresses.length === 0) return undefined;
      // An IP literal is connected to as written, without a lookup: no second resolution to pin.
      if (isIP(new URL(url).hostname.replace(/^\[(.*)\]$/, '$1'))) return undefined;
      const key = addresses
        .map((a) => a.address)
        .sort()
        .join(',');
      let agent = agents.get(key);
      if (agent) {
        agents.delete(key);
      } else {
        agent = new Agent({ connect: { lookup: pinnedLookup(addresses) } });
        const oldest = agents.size >= maxAgents ? agents.keys().next().value : undefined;
        if (oldest !== undefined) {
          // close() lets the evicted agent's in-flight requests finish before its sockets go.
          void agents.get(oldest)!.close().catch(() => {});
          agents.delete(oldest);
        }
      }
      agents.set(key, agent);
      return agent;
    },
    async close() {
      const open = [...agents.values()];
      agents.clear();
      await Promise.all(open.map((agent) => agent.close()));
    },
  };
}

/** The worker process's pool, used by the delivery activities unless their deps bring one; closed at shutdown. */
export const outboundAgents = createPinnedAgents();
