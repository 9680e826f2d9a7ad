// A31: `inbound.resolution_via_temporal: idp` trusts the identity in a workflow history only because ApiPay's
// Temporal server writes it (idp:<sub>@<issuer>) over whatever the client sent. Against the stock dev server any
// client can send that string, so the worker proves the server authorizes before it starts: an unauthenticated
// call to the frontend people reach (TEMPORAL_PUBLIC_ADDRESS, else TEMPORAL_ADDRESS) must be refused.
import { Connection, type ConnectionOptions } from '@temporalio/client';

/** gRPC PERMISSION_DENIED and UNAUTHENTICATED: the server judged the caller. */
const REFUSED = new Set([7, 16]);

/** The gRPC status code of a failed call as the SDK surfaces it (on the error or its cause). */
export function grpcCode(error: unknown): number | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = typeof e?.code === 'number' ? e.code : e?.cause?.code;
  return typeof code === 'number' ? code : undefined;
}

/** What the answer to a tokenless call says about the server: null when it refused the caller, else why not. */
export function probeVerdict(address: string, outcome: { ok: true } | { ok: false; error: unknown }): string | null {
  const rule = `inbound.resolution_via_temporal: idp needs ApiPay's Temporal server (APIPAY_TEMPORAL=server, scripts/go/temporal-server), which refuses callers without a token`;
  const fix = 'fix: run that server and set TEMPORAL_PUBLIC_ADDRESS to the frontend people reach, or set it to allow or deny';
  if (outcome.ok)
    return `${rule}, but ${address} answered a call that carried no token (no authorizer, or an internal frontend); ${fix}`;
  const code = grpcCode(outcome.error);
  if (code !== undefined && REFUSED.has(code)) return null;
  const why = String((outcome.error as Error)?.message ?? outcome.error)
    .split('\n')[0]!
    .slice(0, 200);
  return `${rule}; ${address} did not say whether it authorizes (${why}); ${fix}`;
}

/** Calls ListWorkflowExecutions on `address` without a token; null when refused as it must be, else the problem. */
export async function tokenlessCallProblem(
  address: string,
  namespace: string,
  options: Pick<ConnectionOptions, 'tls'> = {},
): Promise<string | null> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: 10_000, ...options });
    await connection.workflowService.listWorkflowExecutions({ namespace, pageSize: 1 });
    return probeVerdict(address, { ok: true });
  } catch (error) {
    return probeVerdict(address, { ok: false, error });
  } finally {
    await connection?.close().catch(() => undefined);
  }
}
