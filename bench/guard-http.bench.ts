/**
 * `POST /v1/guard` on loopback: latency of one decision as an agent in another language sees
 * it (HTTP/1.1 keep-alive, JSON both ways), against `GET /healthz` on the same listener and
 * connection as the baseline (the HTTP round trip with no work behind it).
 */
import { Agent, request } from 'node:http';
import { startGateway } from '../src/gateway/start-gateway.js';
import { parsePolicyText } from '../src/policy/load-policy.js';
import { GUARD_POLICY_TEXT } from '../test/gateway/helpers.js';
import type { BenchReport } from './run.js';

const WARMUP = 500;
const REQUESTS = 5000;

function once(agent: Agent, port: number, method: string, path: string, body?: string): Promise<number> {
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: body ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`${path}: ${res.statusCode}`));
          else resolve(Number(process.hrtime.bigint() - start) / 1000);
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Latencies (µs) of `n` requests made by `clients` concurrent keep-alive clients. */
async function measure(
  port: number,
  clients: number,
  n: number,
  next: (i: number) => [string, string, string?],
) {
  const agents = Array.from({ length: clients }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
  const out: number[] = [];
  let i = 0;
  await Promise.all(
    agents.map(async (agent) => {
      while (i < n) {
        const [method, path, body] = next(i++);
        out.push(await once(agent, port, method, path, body));
      }
    }),
  );
  for (const a of agents) a.destroy();
  return out.sort((a, b) => a - b);
}

export async function run(): Promise<BenchReport> {
  const gateway = await startGateway({ policy: parsePolicyText(GUARD_POLICY_TEXT), http: { port: 0 } });
  const port = Number(gateway.addresses.http!.split(':')[1]);
  // Every request its own run half of the time, so the run table grows as in production.
  const guardBody = (i: number) =>
    JSON.stringify({
      trace_id: (i % 2 === 0 ? i : 1).toString(16).padStart(32, '0').replace(/^0/, 'a'),
      agent: 'support_agent',
      tool: i % 10 === 0 ? 'delete_account' : 'lookup_account',
      arguments: { account_id: `A-${i}` },
    });
  const rows: BenchReport['rows'] = [];
  try {
    for (const clients of [1, 8]) {
      await measure(port, clients, WARMUP, (i) => ['POST', '/v1/guard', guardBody(i)]);
      const health = await measure(port, clients, REQUESTS, () => ['GET', '/healthz']);
      const guard = await measure(port, clients, REQUESTS, (i) => [
        'POST',
        '/v1/guard',
        guardBody(i + WARMUP),
      ]);
      const p = (s: number[], q: number) => Math.round(percentile(s, q));
      rows.push({
        clients,
        requests: REQUESTS,
        'guard p50 µs': p(guard, 50),
        'guard p99 µs': p(guard, 99),
        'healthz p50 µs': p(health, 50),
        'healthz p99 µs': p(health, 99),
        'p50 ratio': percentile(guard, 50) / percentile(health, 50),
      });
    }
  } finally {
    await gateway.close();
  }
  return {
    name: 'gateway POST /v1/guard on loopback',
    rows,
    notes: [
      'Keep-alive HTTP/1.1 clients in the same process as the gateway; one in ten calls is refused (forbidden), every call checks an argument pattern, budget and repeats.',
      'healthz is the baseline on the same listener: the HTTP round trip alone.',
    ],
  };
}
