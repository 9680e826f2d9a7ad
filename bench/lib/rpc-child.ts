// P8: a benchmark's helper process (load generator, merchant) forked with an IPC channel and asked by request id:
// `call(op, body)` sends {id, op, ...body} and resolves with the child's {id, result}, or rejects with its {id, error}.
// The helper side answers each message with process.send({id, result | error}) (e.g. ./outbound-load.ts).
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface RpcChild {
  call<T>(op: string, body?: Record<string, unknown>): Promise<T>;
  process: ChildProcess;
}

export function forkRpcChild(script: URL, name: string): RpcChild {
  const child = fork(fileURLToPath(script), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let next = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on('message', (m: { id: number; result?: unknown; error?: string }) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.error !== undefined) w?.reject(new Error(`${name}: ${m.error}`));
    else w?.resolve(m.result);
  });
  return {
    process: child,
    call: <T>(op: string, body: Record<string, unknown> = {}) =>
      new Promise<T>((resolve, reject) => {
        const id = ++next;
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, op, ...body });
      }),
  };
}
