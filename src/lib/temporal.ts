// Temporal client connection for the API, dispatcher, CLI and benchmarks (workers use NativeConnection). R18: every
// client carries the OpenTelemetry client interceptor when the process traces (src/tracing).
import { Client, Connection, type ClientOptions, type ConnectionOptions } from '@temporalio/client';
import { activeTracing } from '../tracing/sdk.js';
import { tracingClientInterceptors } from '../tracing/temporal.js';

/** A client over `connection` with this process's tracing interceptors (none when tracing is off). */
export function temporalClient(connection: ClientOptions['connection'], namespace: string): Client {
  return new Client({ connection, namespace, interceptors: tracingClientInterceptors(activeTracing()) });
}

/** `options`: TLS to an external frontend (src/config/connections.ts temporalConnection); A31's service token. */
export async function connectTemporal(
  address: string,
  namespace: string,
  options: Pick<ConnectionOptions, 'tls' | 'apiKey'> = {},
): Promise<{ client: Client; connection: Connection }> {
  const connection = await Connection.connect({ address, ...options });
  return { client: temporalClient(connection, namespace), connection };
}

/**
 * A client that connects on its first call and reconnects by itself (R5): the API process starts and serves the
 * ingress while Temporal is down; a workflow start that fails meanwhile is left to the sweep (I6).
 */
export function lazyTemporal(
  address: string,
  namespace: string,
  options: Pick<ConnectionOptions, 'tls' | 'apiKey'> = {},
): { client: Client; connection: Connection } {
  const connection = Connection.lazy({ address, ...options });
  return { client: temporalClient(connection, namespace), connection };
}

/** Readiness probe: the frontend answers a cheap RPC. */
export async function pingTemporal(client: Client): Promise<void> {
  await client.workflowService.getSystemInfo({});
}
