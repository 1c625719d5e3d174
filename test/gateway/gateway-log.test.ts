/**
 * The gateway says what it judged: one log record per failing verdict by default (trace id,
 * agent, rule, failed scorers), every verdict or none when asked, through the logger the
 * caller gives (the core never writes to the console); and the records read as one line each,
 * text or JSON, whatever the span data holds.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatLogRecord, type GatewayLogRecord } from '../../src/gateway/gateway-log.js';
import { ToolwatchGateway, type ToolwatchGatewayOptions } from '../../src/gateway/toolwatch-gateway.js';
import { otlpJsonFromProtobuf } from '../../src/otlp/otlp-protobuf.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import { POLICY_TEXT, protobufOf, recordRun, type Sink, startSink, supportPolicy } from './helpers.js';

const gateways: ToolwatchGateway[] = [];
const sinks: Sink[] = [];
afterEach(async () => {
  for (const g of gateways.splice(0)) await g.close(100);
  for (const s of sinks.splice(0)) await s.close();
  vi.restoreAllMocks();
});

/** A gateway that judged one passing and one failing run (delete_account is forbidden). */
async function judgedTwoRuns(options: Partial<ToolwatchGatewayOptions> = {}) {
  const sink = await startSink();
  sinks.push(sink);
  const records: GatewayLogRecord[] = [];
  const clock = { now: 1_000_000 };
  const gw = new ToolwatchGateway({
    policy: supportPolicy(),
    forward: [sink.url],
    decisionWaitMs: 100,
    now: () => clock.now,
    logger: (r) => records.push(r),
    ...options,
  });
  gateways.push(gw);
  const good = recordRun(['lookup_account']);
  const bad = recordRun(['lookup_account', 'delete_account']);
  expect(gw.ingest(protobufOf([...good, ...bad]), 'http').kind).toBe('accepted');
  clock.now += 1_000;
  await gw.tick();
  await vi.waitFor(() => expect(sink.spans()).toHaveLength(good.length + bad.length), { timeout: 10_000 });
  return { records, sink, good, bad };
}

describe('gateway verdict log', () => {
  it('logs one record per failing verdict by default: trace id, agent, rule, failed scorers', async () => {
    const { records, bad } = await judgedTwoRuns();
    const agent = bad.find((s) => s.name.startsWith('invoke_agent'))!.spanContext();
    // Before: nothing at all was reported per judged trace.
    expect(records).toEqual([
      {
        level: 'warn',
        msg: 'verdict failed',
        attributes: {
          trace_id: agent.traceId,
          span_id: agent.spanId,
          agent: 'support_agent',
          rule: 'support',
          failed_scorers: ['trajectory'],
        },
      },
    ]);
  });

  it('a verdict no scorer judged (out of the sample) is not logged as failing, and reads "not judged"', async () => {
    const sampledOut = () =>
      parsePolicyText(POLICY_TEXT.replace('version: 1', 'version: 1\nsampling: { ratio: 0 }'));
    expect((await judgedTwoRuns({ policy: sampledOut() })).records).toEqual([]);
    const all = await judgedTwoRuns({ policy: sampledOut(), logVerdicts: 'all' });
    expect(all.records.map((r) => [r.level, r.msg])).toEqual([
      ['info', 'verdict not judged'],
      ['info', 'verdict not judged'],
    ]);
  });

  it('logs every verdict with logVerdicts: all, and none with none', async () => {
    const all = await judgedTwoRuns({ logVerdicts: 'all' });
    // The two traces are judged independently: their verdicts may be logged in either order.
    expect(all.records.map((r) => [r.level, r.msg]).sort()).toEqual([
      ['info', 'verdict passed'],
      ['warn', 'verdict failed'],
    ]);
    const none = await judgedTwoRuns({ logVerdicts: 'none' });
    expect(none.records).toEqual([]);
  });

  it('a logger that throws stops neither judging nor forwarding, and the core writes nothing to the console', async () => {
    const console = [vi.spyOn(process.stderr, 'write'), vi.spyOn(process.stdout, 'write')];
    const { sink } = await judgedTwoRuns({
      logger: () => {
        throw new Error('log sink down');
      },
    });
    expect(
      sink.decoded().filter((s) => s.attributes['toolwatch.evaluation.passed'] !== undefined),
    ).toHaveLength(2);
    for (const spy of console) expect(spy).not.toHaveBeenCalled();
  });

  it('forwards gen_ai.evaluation.score.value as doubleValue, whole numbers included', async () => {
    const { sink } = await judgedTwoRuns();
    const values = sink.bodies.flatMap((b) => {
      const json = otlpJsonFromProtobuf(b) as {
        resourceSpans: {
          scopeSpans: { spans: { events?: { attributes: { key: string; value: object }[] }[] }[] }[];
        }[];
      };
      return json.resourceSpans.flatMap((rs) =>
        rs.scopeSpans.flatMap((ss) =>
          ss.spans.flatMap((s) =>
            (s.events ?? []).flatMap((e) =>
              e.attributes.filter((a) => a.key === 'gen_ai.evaluation.score.value').map((a) => a.value),
            ),
          ),
        ),
      );
    });
    // Four results (two runs, two scorers); the whole scores (1) were intValue before.
    expect(values).toHaveLength(4);
    expect(values.filter((v) => JSON.stringify(v) === '{"doubleValue":1}').length).toBeGreaterThanOrEqual(3);
    for (const value of values) expect(Object.keys(value)).toEqual(['doubleValue']);
  });
});

describe('formatLogRecord', () => {
  const record: GatewayLogRecord = {
    level: 'warn',
    msg: 'verdict failed',
    attributes: {
      trace_id: 'ab'.repeat(16),
      agent: 'evil\nagent rule=forged',
      rule: 'support',
      failed_scorers: ['trajectory', 'reliability'],
    },
  };
  const time = new Date('2026-01-02T03:04:05.000Z');

  it('text: one line, values JSON-quoted when span data could break the line or fake a key', () => {
    expect(formatLogRecord(record, 'text', time)).toBe(
      `toolwatch serve: warn verdict failed: trace_id=${'ab'.repeat(16)} agent="evil\\nagent rule=forged" rule=support failed_scorers=trajectory,reliability\n`,
    );
  });

  it('text: a long value is cut to 256 characters', () => {
    const line = formatLogRecord({ ...record, attributes: { agent: 'a'.repeat(10_000) } }, 'text', time);
    expect(line).toBe(
      `toolwatch serve: warn verdict failed: agent=${'a'.repeat(255)}…\n`.replace(/=(a+…)/, '="$1"'),
    );
  });

  it('json: one object per line with time, level, msg and the attributes', () => {
    const line = formatLogRecord(record, 'json', time);
    expect(line.endsWith('\n')).toBe(true);
    expect(line.trimEnd().includes('\n')).toBe(false);
    expect(JSON.parse(line)).toEqual({
      time: '2026-01-02T03:04:05.000Z',
      level: 'warn',
      msg: 'verdict failed',
      ...record.attributes,
    });
  });
});
