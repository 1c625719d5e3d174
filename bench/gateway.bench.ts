/**
 * Gateway ingest over loopback. The gateway runs in its own process (as `toolwatch serve`
 * does); this process only sends pre-encoded OTLP/protobuf requests and a sink counts what
 * comes out. Compared in the same run: judging vs decode-and-forward only (`judging: false`,
 * the same gateway without evaluation), over OTLP/HTTP and OTLP/gRPC; then one vs two
 * gateways behind the real Collector's load_balancing exporter.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, Agent as HttpAgent, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { ToolwatchGateway } from '../src/gateway/toolwatch-gateway.js';
import { parsePolicyText } from '../src/policy/load-policy.js';
import { emitAgentRun } from '../test/gateway/helpers.js';
import type { BenchReport } from './run.js';

const root = new URL('../', import.meta.url).pathname;
const TRACES = 3000;
const TRACES_PER_REQUEST = 10;
const SPANS_PER_TRACE = 12;
const CONCURRENCY = 8;
const ROUNDS = 3;

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

/** Index of the median element (the pair whose figures are shown). */
function medianIndex(xs: number[]): number {
  const m = median(xs);
  return xs.indexOf(m);
}

/** Requests of 10 whole traces each (120 spans): a BatchSpanProcessor's usual shape. */
function buildRequests(): Uint8Array[] {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('bench');
  const requests: Uint8Array[] = [];
  for (let i = 0; i < TRACES; i++) {
    const last = i % 10 === 0 ? 'delete_account' : 'close_ticket';
    emitAgentRun(tracer, ['lookup_account', 'lookup_tickets', 'send_reply', last], 6);
    if ((i + 1) % TRACES_PER_REQUEST === 0) {
      requests.push(ProtobufTraceSerializer.serializeRequest(exporter.getFinishedSpans())!);
      exporter.reset();
    }
  }
  return requests;
}

const POLICY = `version: 1
rules:
  - name: support
    match: { agent: support_agent }
    scorers:
      - kind: reliability
        expected_tool_calls: [lookup_account]
        allow_additional_tool_calls: true
      - kind: tool_calls
        expected_tools: [lookup_account, send_reply]
        allow_additional: true
      - kind: trajectory
        expected_tools: [lookup_account]
        forbidden_tools: [delete_account]
        max_calls: 6
`;

/** A sink that counts spans by request bodies (no decoding: it must not be the bottleneck). */
async function startSink(): Promise<{ url: string; server: Server; bytes: () => number }> {
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (c: Buffer) => {
      bytes += c.length;
    });
    req.on('end', () => res.writeHead(200).end());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    server,
    bytes: () => bytes,
  };
}

interface GatewayProc {
  child: ChildProcess;
  http: string;
  grpc: string;
  metrics: string;
}

/** A gateway in a child process, started with `startGateway` (options as JSON). */
async function startGatewayProc(options: Record<string, unknown>): Promise<GatewayProc> {
  const code = `
    import { startGateway } from './src/gateway/start-gateway.ts';
    import { parsePolicyText } from './src/policy/load-policy.ts';
    const o = JSON.parse(process.argv[1]);
    const g = await startGateway({ ...o, policy: parsePolicyText(o.policy) });
    // Memory rows only: collect often, so the heap gauge shows what is held, not garbage.
    if (o.collectGarbage) setInterval(() => globalThis.gc(), 100).unref();
    console.log('READY', JSON.stringify(g.addresses));
    process.on('SIGTERM', async () => { await g.close(); process.exit(0); });
  `;
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', code, JSON.stringify(options)],
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d) => {
    out += String(d);
  });
  for (let i = 0; i < 600 && !out.includes('READY'); i++) await new Promise((r) => setTimeout(r, 50));
  const addresses = JSON.parse(/READY (.*)/.exec(out)![1]!);
  return { child, ...addresses };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

async function metric(g: GatewayProc, name: string): Promise<number> {
  const text = await (await fetch(`http://${g.metrics}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.split(' ').at(-1));
  return sum;
}

const agent = new HttpAgent({ keepAlive: true, maxSockets: CONCURRENCY });
function postHttp(address: string, body: Uint8Array): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `http://${address}/v1/traces`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function grpcSender(address: string) {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  const id = (b: Buffer) => b;
  return {
    send: (body: Uint8Array) =>
      new Promise<number>((resolve) =>
        client.makeUnaryRequest(
          '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
          id,
          id,
          Buffer.from(body),
          new grpc.Metadata(),
          (err) => resolve(err ? 500 : 200),
        ),
      ),
    close: () => client.close(),
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Sends every request with CONCURRENCY in flight; returns per-request latencies (ms). */
async function load(requests: Uint8Array[], send: (b: Uint8Array) => Promise<number>): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const body = requests[next++]!;
      for (;;) {
        const t = performance.now();
        const status = await send(body);
        latencies.push(performance.now() - t);
        if (status === 200) break;
        await new Promise((r) => setTimeout(r, 50)); // 429: back off as a Collector would
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return latencies.sort((a, b) => a - b);
}

async function waitForwarded(gateways: GatewayProc[], total: number): Promise<number> {
  let peakRss = 0;
  for (;;) {
    let forwarded = 0;
    for (const g of gateways) {
      forwarded += await metric(g, 'toolwatch_gateway_spans_forwarded_total');
      peakRss = Math.max(peakRss, await metric(g, 'process_resident_memory_bytes'));
    }
    if (forwarded >= total) return peakRss;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function ingestRow(
  requests: Uint8Array[],
  transport: 'http' | 'grpc',
  judging: boolean,
  sinkUrl: string,
): Promise<Record<string, string | number>> {
  const g = await startGatewayProc({
    policy: POLICY,
    judging,
    forward: [sinkUrl],
    http: { port: 0 },
    grpc: { port: 0 },
    metrics: { port: 0 },
    decisionWaitMs: 100,
  });
  // Warm-up: a tenth of the load, then measure the whole load.
  const sender = transport === 'grpc' ? grpcSender(g.grpc) : undefined;
  const send = sender ? sender.send : (b: Uint8Array) => postHttp(g.http, b);
  await load(requests.slice(0, requests.length / 10), send);
  await waitForwarded([g], (requests.length / 10) * TRACES_PER_REQUEST * SPANS_PER_TRACE);
  const rssBefore = await metric(g, 'process_resident_memory_bytes');
  const t0 = performance.now();
  const latencies = await load(requests, send);
  const peakRss = await waitForwarded([g], requests.length * 1.1 * TRACES_PER_REQUEST * SPANS_PER_TRACE);
  const seconds = (performance.now() - t0) / 1000;
  sender?.close();
  await stop(g.child);
  const spans = requests.length * TRACES_PER_REQUEST * SPANS_PER_TRACE;
  return {
    transport,
    mode: judging ? 'judging' : 'decode + forward only',
    'spans/s (in → forwarded)': Math.round(spans / seconds),
    'request p50 ms': percentile(latencies, 50),
    'request p99 ms': percentile(latencies, 99),
    'RSS MB (steady, peak)': `${(rssBefore / 1e6).toFixed(0)}, ${(peakRss / 1e6).toFixed(0)}`,
  };
}

/** Heap per buffered trace: hold N traces (decision wait longer than the run) and compare heaps. */
async function memoryPerTrace(requests: Uint8Array[], sinkUrl: string): Promise<number> {
  const g = await startGatewayProc({
    policy: POLICY,
    forward: [sinkUrl],
    http: { port: 0 },
    metrics: { port: 0 },
    decisionWaitMs: 600_000,
    maxWaitMs: 600_000,
    collectGarbage: true,
  });
  const settle = () => new Promise((r) => setTimeout(r, 400));
  const heap = () => metric(g, 'nodejs_heap_used_bytes');
  await load(requests.slice(0, 5), (b) => postHttp(g.http, b)); // warm the code paths
  await settle();
  const before = await heap();
  await load(requests.slice(5), (b) => postHttp(g.http, b));
  await settle();
  const after = await heap();
  await stop(g.child);
  return (after - before) / ((requests.length - 5) * TRACES_PER_REQUEST);
}

async function scaleOut(
  requests: Uint8Array[],
  gatewayCount: number,
  sinkUrl: string,
): Promise<Record<string, string | number>> {
  const build = spawnSync('bash', [`${root}collector-config/build/build.sh`], { encoding: 'utf8' });
  if (build.status !== 0) throw new Error(build.stderr);
  const binary = build.stdout.trim();
  const gateways: GatewayProc[] = [];
  for (let i = 0; i < gatewayCount; i++) {
    gateways.push(
      await startGatewayProc({
        policy: POLICY,
        forward: [sinkUrl],
        grpc: { port: 0 },
        metrics: { port: 0 },
        decisionWaitMs: 100,
      }),
    );
  }
  const port = async () => {
    const s = createServer().listen(0, '127.0.0.1');
    await once(s, 'listening');
    const p = (s.address() as AddressInfo).port;
    s.close();
    return p;
  };
  const grpcIn = `127.0.0.1:${await port()}`;
  const health = `127.0.0.1:${await port()}`;
  const lb = spawn(binary, ['--config', `${root}collector-config/scale-out/load-balancer.yaml`], {
    env: {
      ...process.env,
      OTLP_GRPC_ENDPOINT: grpcIn,
      OTLP_HTTP_ENDPOINT: `127.0.0.1:${await port()}`,
      HEALTH_ENDPOINT: health,
      GATEWAY_1: gateways[0]!.grpc,
      GATEWAY_2: (gateways[1] ?? gateways[0]!).grpc,
    },
    stdio: 'ignore',
  });
  for (let i = 0; i < 200; i++) {
    if (
      await fetch(`http://${health}/`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const sender = grpcSender(grpcIn);
  const t0 = performance.now();
  await load(requests, sender.send);
  await waitForwarded(gateways, requests.length * TRACES_PER_REQUEST * SPANS_PER_TRACE);
  const seconds = (performance.now() - t0) / 1000;
  sender.close();
  await stop(lb);
  for (const g of gateways) await stop(g.child);
  return {
    transport: 'gRPC via Collector load_balancing',
    mode: `judging, ${gatewayCount} gateway${gatewayCount > 1 ? 's' : ''}`,
    'spans/s (in → forwarded)': Math.round(
      (requests.length * TRACES_PER_REQUEST * SPANS_PER_TRACE) / seconds,
    ),
  };
}

/**
 * The gateway core alone, in this process, without sockets: ingest every request, then judge
 * and hand everything to a forwarder with no endpoint. Median of 5 alternating rounds.
 */
async function coreRows(requests: Uint8Array[]): Promise<Record<string, string | number>[]> {
  const policy = parsePolicyText(POLICY);
  const spans = requests.length * TRACES_PER_REQUEST * SPANS_PER_TRACE;
  const samples: Record<string, number[]> = { judging: [], 'decode + forward only': [] };
  for (let round = 0; round < 5; round++) {
    for (const judging of [false, true]) {
      let now = 0;
      const g = new ToolwatchGateway({ policy, judging, decisionWaitMs: 10, now: () => now });
      const t0 = performance.now();
      for (const body of requests) g.ingest(body, 'http');
      now = 1000;
      await g.tick();
      samples[judging ? 'judging' : 'decode + forward only']!.push(((performance.now() - t0) * 1000) / spans);
      await g.close(100);
    }
  }
  const base = median(samples['decode + forward only']!);
  return Object.entries(samples).map(([mode, xs]) => ({
    transport: 'none (core, in process)',
    mode,
    'spans/s (in → forwarded)': Math.round(1e6 / median(xs)),
    'µs/span': median(xs),
    ...(mode === 'judging' ? { 'ratio vs decode+forward': base / median(xs) } : {}),
  }));
}

export async function run(): Promise<BenchReport> {
  const requests = buildRequests();
  const sink = await startSink();
  const rows: Record<string, string | number>[] = await coreRows(requests);
  // Alternating pairs (judging first, then last), medians: the machine is shared and its
  // load changes between rows.
  for (const transport of ['http', 'grpc'] as const) {
    const pairs: { judged: Record<string, string | number>; baseline: Record<string, string | number> }[] =
      [];
    for (let round = 0; round < ROUNDS; round++) {
      const first = round % 2 === 0;
      const a = await ingestRow(requests, transport, first, sink.url);
      const b = await ingestRow(requests, transport, !first, sink.url);
      pairs.push(first ? { judged: a, baseline: b } : { judged: b, baseline: a });
    }
    const rate = (r: Record<string, string | number>) => r['spans/s (in → forwarded)'] as number;
    const ratios = pairs.map((p) => rate(p.judged) / rate(p.baseline));
    const mid = pairs[medianIndex(ratios)]!;
    rows.push(
      { ...mid.baseline, rounds: ROUNDS },
      {
        ...mid.judged,
        'ratio vs decode+forward': median(ratios),
        'ratios (each pair)': ratios.map((r) => r.toFixed(2)).join(' '),
      },
    );
  }
  const perTrace = await memoryPerTrace(requests.slice(0, 100), sink.url);
  for (const n of [1, 2]) rows.push(await scaleOut(requests, n, sink.url));
  sink.server.close();
  agent.destroy();
  return {
    name: 'gateway ingest over loopback',
    rows,
    notes: [
      `${TRACES} traces × ${SPANS_PER_TRACE} spans, ${TRACES_PER_REQUEST} whole traces per request, ${CONCURRENCY} requests in flight; decision wait 100 ms; spans/s from the first request to the last span forwarded to a counting sink`,
      'request latency: time for the gateway to accept a request (judging happens after the trace is complete, off the request path)',
      `heap per buffered trace (${SPANS_PER_TRACE} spans, about ${Math.round(requests[0]!.length / TRACES_PER_REQUEST)} bytes of OTLP each): ${(perTrace / 1024).toFixed(1)} KiB`,
      'scale-out rows: load generator, Collector and gateways share the same 2 cores',
    ],
  };
}
