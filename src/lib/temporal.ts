// Temporal client connection for the API, dispatcher, CLI and benchmarks (workers use NativeConnection).
import { Client, Connection } from '@temporalio/client';

export async function connectTemporal(address: string, namespace: string): Promise<{ client: Client; connection: Connection }> {
  const connection = await Connection.connect({ address });
  return { client: new Client({ connection, namespace }), connection };
}

/**
 * A client that connects on its first call and reconnects by itself (R5): the API process starts and serves the
 * ingress while Temporal is down; a workflow start that fails meanwhile is left to the sweep (I6).
 */
export function lazyTemporal(address: string, namespace: string): { client: Client; connection: Connection } {
  const connection = Connection.lazy({ address });
  return { client: new Client({ connection, namespace }), connection };
}

/** Readiness probe: the frontend answers a cheap RPC. */
export async function pingTemporal(client: Client): Promise<void> {
  await client.workflowService.getSystemInfo({});
}
