// Temporal client connection for the API, dispatcher, CLI and benchmarks (workers use NativeConnection).
import { Client, Connection } from '@temporalio/client';

export async function connectTemporal(address: string, namespace: string): Promise<{ client: Client; connection: Connection }> {
  const connection = await Connection.connect({ address });
  return { client: new Client({ connection, namespace }), connection };
}

/** Readiness probe: the frontend answers a cheap RPC. */
export async function pingTemporal(client: Client): Promise<void> {
  await client.workflowService.getSystemInfo({});
}
