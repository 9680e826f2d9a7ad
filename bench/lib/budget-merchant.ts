// The local merchant of bench:budget (bench/physical-budget.ts, P10), a process of its own: node:http answering 200
// 'ok' to every POST after reading its body, as bench:outbound's merchant does. Sends {port} when listening; answers
// {op: 'stats'} with its event-loop delay and GC since {op: 'reset'}.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { recordProcessStats } from './process-stats.js';

const stats = recordProcessStats('merchant');
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200).end('ok'));
});
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('message', (m: { op: string }) => {
  if (m.op === 'reset') {
    stats.reset();
    process.send!({});
  } else process.send!(stats.snapshot());
});
process.on('disconnect', () => process.exit(0));
