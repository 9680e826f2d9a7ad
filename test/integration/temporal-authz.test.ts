// A31: ApiPay's Temporal server (scripts/go/temporal-server) behind the stack's Keycloak, with real tokens over real
// gRPC: an operator's token is refused on StartWorkflowExecution and TerminateWorkflowExecution and accepted on
// SignalWorkflowExecution (recorded in the history under the person's IdP subject, whatever identity the client
// sent); a viewer's is refused on Signal; no token, a token of another issuer and alg none are refused; the service
// client's token (client credentials) may start and terminate. Runs when APIPAY_TEMPORAL_AUTHZ_ADDRESS names that
// server's public frontend (scripts/test.sh sets it under APIPAY_TEMPORAL=server); the stock dev server has no
// authorizer, so under APIPAY_TEMPORAL=dev this file is skipped and says so.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoPerson, KEYCLOAK_ENABLED, KEYCLOAK_ISSUER, keycloakToken, startLocalIssuer } from '../helpers/idp.js';

const ADDRESS = process.env.APIPAY_TEMPORAL_AUTHZ_ADDRESS ?? '';
const NAMESPACE = process.env.TEMPORAL_NAMESPACE ?? 'default';
const SERVICE_CLIENT = 'apipay-temporal-service';

if (!ADDRESS || !KEYCLOAK_ENABLED)
  console.warn(
    "[temporal-authz] SKIPPED: needs ApiPay's Temporal server (APIPAY_TEMPORAL=server, which builds scripts/go/temporal-server) and the stack's Keycloak; set APIPAY_TEMPORAL_AUTHZ_ADDRESS to its frontend",
  );

/** A client-credentials token of ApiPay's service client (its secret from the demo realm). */
async function serviceToken(): Promise<string> {
  const realm = JSON.parse(readFileSync(new URL('../../scripts/stack/keycloak-realm.json', import.meta.url), 'utf8')) as {
    clients: Array<{ clientId: string; secret?: string }>;
  };
  const secret = realm.clients.find((c) => c.clientId === SERVICE_CLIENT)!.secret!;
  const res = await fetch(`${KEYCLOAK_ISSUER}/protocol/openid-connect/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: SERVICE_CLIENT, client_secret: secret }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`client credentials for ${SERVICE_CLIENT}: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

// protobufjs takes a number where the generated type says Long.
type ResetRequest = Parameters<Client['workflowService']['resetWorkflowExecution']>[0];

const connections: Connection[] = [];
async function clientWith(token: string | null): Promise<Client> {
  const connection = await Connection.connect({
    address: ADDRESS,
    ...(token === null ? {} : { metadata: { authorization: `Bearer ${token}` } }),
  });
  connections.push(connection);
  return new Client({ connection, namespace: NAMESPACE, identity: 'someone-else@forged' });
}

/** The server's PermissionDenied (gRPC 7), as the SDK surfaces it. */
async function refused(call: Promise<unknown>): Promise<string> {
  const err = await call.then(
    () => null,
    (e: unknown) => e as { message?: string; code?: number; cause?: { code?: number; details?: string } },
  );
  expect(err, 'the call was accepted').not.toBeNull();
  const text = `${err!.message ?? ''} ${err!.cause?.details ?? ''}`;
  expect(err!.code === 7 || err!.cause?.code === 7 || /unauthorized|permission/i.test(text), text).toBe(true);
  return text;
}

describe.skipIf(!ADDRESS || !KEYCLOAK_ENABLED)('A31 the Temporal server authorizes IdP tokens', () => {
  let service: Client;
  let operator: Client;
  let viewer: Client;
  const workflowId = `tauthz-${randomUUID()}`;
  const taskQueue = `tauthz-${randomUUID().slice(0, 8)}`; // no worker: the workflow only has to exist

  beforeAll(async () => {
    service = await clientWith(await serviceToken());
    operator = await clientWith(await keycloakToken('otto'));
    viewer = await clientWith(await keycloakToken('vera'));
  }, 120_000);

  afterAll(async () => {
    await service?.workflow
      .getHandle(workflowId)
      .terminate('test over')
      .catch(() => undefined);
    await Promise.all(connections.map((c) => c.close()));
  });

  it('the service identity starts a workflow; an operator may not start one', async () => {
    await service.workflow.start('tauthzProbe', { workflowId, taskQueue, args: [] });
    await refused(operator.workflow.start('tauthzProbe', { workflowId: `${workflowId}-op`, taskQueue, args: [] }));
    await refused(
      operator.workflow.signalWithStart('tauthzProbe', {
        workflowId: `${workflowId}-sws`,
        taskQueue,
        args: [],
        signal: 'operatorResolution',
        signalArgs: [],
      }),
    );
  });

  it('an operator signals (recorded under their IdP subject), describes and lists; terminate, cancel and reset are refused', async () => {
    const handle = operator.workflow.getHandle(workflowId);
    await handle.signal('operatorResolution', { note: 'from the operator' });
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const history = await service.workflow.getHandle(workflowId).fetchHistory();
    const signaled = history.events!.find((e) => e.workflowExecutionSignaledEventAttributes)!;
    expect(signaled.workflowExecutionSignaledEventAttributes!.identity).toBe(
      `idp:${demoPerson('otto').subject}@${KEYCLOAK_ISSUER}`,
    );
    await refused(handle.terminate('an operator tries'));
    await refused(handle.cancel());
    await refused(
      operator.workflowService.resetWorkflowExecution({
        namespace: NAMESPACE,
        workflowExecution: { workflowId },
        workflowTaskFinishEventId: 2,
        requestId: randomUUID(),
      } as unknown as ResetRequest),
    );
    await refused(operator.workflowService.deleteWorkflowExecution({ namespace: NAMESPACE, workflowExecution: { workflowId } }));
    expect((await service.workflow.getHandle(workflowId).describe()).status.name).toBe('RUNNING');
  });

  it('a viewer reads but may not signal', async () => {
    const handle = viewer.workflow.getHandle(workflowId);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await refused(handle.signal('operatorResolution', { note: 'from a viewer' }));
  });

  it('no token, a token of another issuer and an unsigned token are refused', async () => {
    const anonymous = await clientWith(null);
    await refused(anonymous.workflow.getHandle(workflowId).describe());
    // A token the mapper refuses is refused on every call, the connection's own first one (GetSystemInfo) included.
    const describeWith = async (token: string) => (await clientWith(token)).workflow.getHandle(workflowId).describe();
    const other = await startLocalIssuer();
    try {
      await refused(
        describeWith(await other.mint('mallory', { aud: 'apipay-temporal', groups: ['admin'], azp: SERVICE_CLIENT })),
      );
    } finally {
      await other.close();
    }
    const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: KEYCLOAK_ISSUER, aud: 'apipay-temporal', sub: 'x', azp: SERVICE_CLIENT, exp: now + 300 };
    await refused(describeWith(`${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`));
  });

  it('the service identity terminates', async () => {
    await service.workflow.getHandle(workflowId).terminate('service ends it');
    expect((await service.workflow.getHandle(workflowId).describe()).status.name).toBe('TERMINATED');
  });
});
