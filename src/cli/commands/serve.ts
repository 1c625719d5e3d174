import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  formatLogRecord,
  type GatewayLogRecord,
  type LogFormat,
  type VerdictLogging,
} from '../../gateway/gateway-log.js';
import { type Listen, type RunningGateway, startGateway } from '../../gateway/start-gateway.js';
import { loadPolicy } from '../../policy/load-policy.js';
import { PolicyError } from '../../policy/policy-error.js';
import type { Policy } from '../../types.js';
import type { CliIo } from '../cli-io.js';
import { POLICY_LIMIT_OPTIONS, policyLimitsOf, policyLimitUsage } from '../policy-limit-flags.js';
import { loadJudges } from '../scoring.js';
import { usageError } from '../usage-error.js';

export const SERVE_USAGE = `usage: toolwatch serve --policy P [options]

Runs the gateway: receives OTLP traces, judges every complete trace with the policy,
writes the verdicts onto the agent spans and forwards every span.

  --policy P            the policy file (YAML or JSON); read once, its digest printed
  --http HOST:PORT      OTLP/HTTP (/v1/traces, protobuf or JSON, gzip); default
                        127.0.0.1:4318; "off" disables it
  --grpc HOST:PORT      OTLP/gRPC; default 127.0.0.1:4317; "off" disables it. Needs
                        the optional package @grpc/grpc-js (npm install @grpc/grpc-js)
  --metrics HOST:PORT   /metrics, /healthz, /readyz; default 127.0.0.1:9464; "off"
                        (they are also served on the HTTP listener)
  --forward URL         an OTLP/HTTP endpoint to forward to (repeatable); a URL with
                        no path gets /v1/traces. Without one, spans are judged and dropped
                        (counted, reason no_forward_endpoint)
  --judges M            a module for llm_judge scorers: exports \`judges\` (by name) or
                        a default judge function / AI SDK model (used as \`default\`)
  --token-file F        require "Authorization: Bearer <token>" (token read from F)
  --token-env NAME      the same, token from the environment variable NAME
  --tls-cert F --tls-key F   serve HTTPS and gRPC over TLS with this PEM pair
  --decision-wait MS    quiet time before a trace with its outermost agent span is
                        judged (default 2000)
  --max-wait MS         longest a trace is held (default 30000)
  --max-held-spans N    spans held before 429 / RESOURCE_EXHAUSTED (default 200000)
  --max-held-bytes N    the same for the held spans' bytes as received (default 134217728)
  --max-request-bytes N body limit (413), default 16777216
  --max-decompressed-bytes N  limit after gunzip (413), default 67108864
  --max-in-flight-bytes N  request bytes held at once by all HTTP and gRPC export calls
                        being received or decoded (429 / RESOURCE_EXHAUSTED beyond),
                        default 268435456
  --max-connections N   open connections per HTTP listener (OTLP/HTTP, metrics); more
                        are closed on arrival, default 4096
  --max-connections-per-client N  the same from one client address, default a quarter
                        of --max-connections (1024)
  --request-timeout MS  longest a request may take to arrive whole (HTTP 408, gRPC
                        DEADLINE_EXCEEDED), default 300000
  --headers-timeout MS  longest an HTTP request's headers may take to arrive (408),
                        default 60000 (the Collector's read_header_timeout)
  --idle-timeout MS     how long an HTTP connection may stay idle between requests,
                        and a gRPC one with no call (default 60000, the Collector's
                        OTLP/HTTP receiver's)
  --drain-timeout MS    on SIGTERM, how long to wait for forwarding (default 30000)
  --unready-after-failures N  /readyz answers 503 after N failed forward attempts in a
                        row to an endpoint, until one succeeds (empty exports probe it
                        meanwhile); default 5, 0 = readiness ignores forwarding
  --log-verdicts WHICH  verdicts logged to stderr, one line each: failing (default:
                        not passed, or with span id conflicts), all, or none
  --log-format F        text (default) or json (one object per line)
${policyLimitUsage(24)}
  -h, --help            this text

Binds to 127.0.0.1 unless told otherwise. SIGTERM or SIGINT: stop accepting, judge what
is pending, flush, exit 0.`;

/** `toolwatch serve`: runs until SIGTERM/SIGINT (or `stop` resolves, for tests). */
export async function serveCommand(argv: string[], io: CliIo, stop?: Promise<void>): Promise<number> {
  let values: ServeValues;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        policy: { type: 'string' },
        http: { type: 'string' },
        grpc: { type: 'string' },
        metrics: { type: 'string' },
        forward: { type: 'string', multiple: true },
        judges: { type: 'string' },
        'token-file': { type: 'string' },
        'token-env': { type: 'string' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        'decision-wait': { type: 'string' },
        'max-wait': { type: 'string' },
        'max-held-spans': { type: 'string' },
        'max-held-bytes': { type: 'string' },
        'max-request-bytes': { type: 'string' },
        'max-decompressed-bytes': { type: 'string' },
        'max-in-flight-bytes': { type: 'string' },
        'max-connections': { type: 'string' },
        'max-connections-per-client': { type: 'string' },
        'request-timeout': { type: 'string' },
        'headers-timeout': { type: 'string' },
        'idle-timeout': { type: 'string' },
        'drain-timeout': { type: 'string' },
        'unready-after-failures': { type: 'string' },
        'log-verdicts': { type: 'string' },
        'log-format': { type: 'string' },
        ...POLICY_LIMIT_OPTIONS,
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    return usageError(io, 'serve', (err as Error).message);
  }
  if (values.help) {
    io.stdout(`${SERVE_USAGE}\n`);
    return 0;
  }
  const flags = readFlags(values);
  const {
    problems,
    http,
    grpc,
    metrics,
    forward,
    token,
    unreadyAfterFailures,
    logVerdicts,
    logFormat,
    options,
  } = flags;
  if (!values.policy) problems.push('--policy is required');
  const limits = policyLimitsOf(values);
  if (typeof limits === 'string') problems.push(limits);
  if (problems.length > 0) return usageError(io, 'serve', problems.join('\ntoolwatch serve: '));
  let policy: Policy;
  try {
    policy = await loadPolicy(values.policy as string, typeof limits === 'string' ? {} : limits);
  } catch (err) {
    io.stderr(`toolwatch serve: ${err instanceof PolicyError ? err.message : (err as Error).message}\n`);
    return 2;
  }
  let judges: Record<string, unknown> | undefined;
  if (values.judges) {
    try {
      judges = await loadJudges(values.judges as string);
    } catch (err) {
      io.stderr(`toolwatch serve: cannot load judges from ${values.judges}: ${(err as Error).message}\n`);
      return 2;
    }
  }
  // The CLI's own lines read as they always did in text; in JSON they are records like the core's.
  const say = (text: string, msg: string, attributes: GatewayLogRecord['attributes'] = {}) =>
    io.stderr(
      logFormat === 'json'
        ? formatLogRecord({ level: 'info', msg, attributes }, 'json', new Date())
        : `toolwatch serve: ${text}\n`,
    );
  let running: RunningGateway;
  try {
    running = await startGateway({
      policy,
      forward,
      ...(unreadyAfterFailures !== undefined ? { forwarding: { unreadyAfterFailures } } : {}),
      logger: (record) => io.stderr(formatLogRecord(record, logFormat, new Date())),
      logVerdicts,
      ...(judges ? { judges } : {}),
      ...(http ? { http } : {}),
      ...(grpc ? { grpc } : {}),
      ...(metrics ? { metrics } : {}),
      ...(token !== undefined ? { token } : {}),
      ...(values['tls-cert']
        ? { tls: { cert: values['tls-cert'] as string, key: values['tls-key'] as string } }
        : {}),
      ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
    });
  } catch (err) {
    io.stderr(`toolwatch serve: cannot start: ${(err as Error).message}\n`);
    return 2;
  }
  const a = running.addresses;
  say(`policy ${values.policy} digest ${policy.digest}`, 'policy', {
    policy: values.policy as string,
    digest: policy.digest,
  });
  say(
    `listening${a.http ? ` http ${a.http}` : ''}${a.grpc ? ` grpc ${a.grpc}` : ''}${a.metrics ? ` metrics ${a.metrics}` : ''}`,
    'listening',
    { ...a },
  );
  const endpoints = forward.map(withoutPassword);
  say(
    `forwarding to ${forward.length > 0 ? endpoints.join(', ') : 'nothing (spans are judged and dropped)'}`,
    'forwarding',
    { endpoints },
  );
  await new Promise<void>((resolve) => {
    const done = (signal: string) => {
      say(`${signal}: draining`, 'draining', { signal });
      resolve();
    };
    process.once('SIGTERM', () => done('SIGTERM'));
    process.once('SIGINT', () => done('SIGINT'));
    stop?.then(() => done('stop'));
  });
  await running.close();
  const r = running.gateway.registry;
  const spans = {
    received: r.total('toolwatch_gateway_spans_received_total'),
    forwarded: r.total('toolwatch_gateway_spans_forwarded_total'),
    dead_lettered: r.total('toolwatch_gateway_spans_dead_lettered_total'),
    dropped: r.total('toolwatch_gateway_spans_dropped_total'),
    unconfirmed: r.total('toolwatch_gateway_spans_unconfirmed_total'),
  };
  say(
    `stopped; spans received ${spans.received}, forwarded ${spans.forwarded}, dead-lettered ${spans.dead_lettered}, dropped ${spans.dropped}, unconfirmed ${spans.unconfirmed}`,
    'stopped',
    spans,
  );
  return 0;
}

type ServeValues = Record<string, string | string[] | boolean | undefined>;

/** The flags read into the gateway's settings; what is wrong with them goes into `problems`. */
function readFlags(values: ServeValues) {
  const problems: string[] = [];
  const listen = (name: string, fallback: string): Listen | undefined => {
    const text = (values[name] as string | undefined) ?? fallback;
    if (text === 'off') return undefined;
    const m = /^(.*):(\d+)$/.exec(text);
    if (!m || Number(m[2]) > 65535) {
      problems.push(`--${name}: expected HOST:PORT or off, got ${JSON.stringify(text)}`);
      return undefined;
    }
    return { host: m[1]!.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1', port: Number(m[2]) };
  };
  // Limits of 0 would refuse every request (429 or 413) for as long as the gateway runs.
  const number = (name: string, least = 0): number | undefined => {
    const text = values[name] as string | undefined;
    if (text === undefined) return undefined;
    if (!/^\d+$/.test(text)) problems.push(`--${name}: expected a whole number, got ${JSON.stringify(text)}`);
    else if (Number(text) < least) problems.push(`--${name}: must be at least ${least}, got ${text}`);
    return Number(text);
  };
  function oneOf<T extends string>(name: string, choices: readonly T[], fallback: T): T {
    const text = (values[name] as string | undefined) ?? fallback;
    if ((choices as readonly string[]).includes(text)) return text as T;
    problems.push(`--${name}: expected ${choices.join(', ')}, got ${JSON.stringify(text)}`);
    return fallback;
  }
  const http = listen('http', '127.0.0.1:4318');
  const grpc = listen('grpc', '127.0.0.1:4317');
  const metrics = listen('metrics', '127.0.0.1:9464');
  const forward = ((values.forward as string[] | undefined) ?? []).map((url) => {
    try {
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
      if (u.pathname === '/' || u.pathname === '') u.pathname = '/v1/traces';
      return u.toString();
    } catch {
      problems.push(`--forward: not an http(s) URL: ${JSON.stringify(url)}`);
      return '';
    }
  });
  let token: string | undefined;
  try {
    if (values['token-file']) token = readFileSync(values['token-file'] as string, 'utf8').trim();
    else if (values['token-env']) {
      token = process.env[values['token-env'] as string];
      if (!token) problems.push(`--token-env: ${values['token-env']} is not set or empty`);
    }
    if (token === '') problems.push('--token-file: the token file is empty');
  } catch (err) {
    problems.push(`--token-file: ${(err as Error).message}`);
  }
  const unreadyAfterFailures = number('unready-after-failures');
  const logVerdicts = oneOf<VerdictLogging>('log-verdicts', ['failing', 'all', 'none'], 'failing');
  const logFormat = oneOf<LogFormat>('log-format', ['text', 'json'], 'text');
  if (Boolean(values['tls-cert']) !== Boolean(values['tls-key']))
    problems.push('--tls-cert and --tls-key go together');
  const options = {
    decisionWaitMs: number('decision-wait'),
    maxWaitMs: number('max-wait'),
    maxHeldSpans: number('max-held-spans', 1),
    maxHeldBytes: number('max-held-bytes', 1),
    maxRequestBytes: number('max-request-bytes', 1),
    maxDecompressedBytes: number('max-decompressed-bytes', 1),
    maxInFlightBytes: number('max-in-flight-bytes', 1),
    maxConnections: number('max-connections', 1),
    maxConnectionsPerClient: number('max-connections-per-client', 1),
    requestTimeoutMs: number('request-timeout', 1),
    headersTimeoutMs: number('headers-timeout', 1),
    idleTimeoutMs: number('idle-timeout', 1),
    drainTimeoutMs: number('drain-timeout'),
  };
  return {
    problems,
    http,
    grpc,
    metrics,
    forward,
    token,
    unreadyAfterFailures,
    logVerdicts,
    logFormat,
    options,
  };
}

/** A forward URL as logged: a password in it is not printed. */
function withoutPassword(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}
