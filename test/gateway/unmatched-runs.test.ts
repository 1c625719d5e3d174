/**
 * The gateway is not silent about runs it did not judge: an outermost agent run no rule matched
 * is counted by agent name, as the processor and `toolwatch score` count it, and each name is
 * logged once; names beyond a bound count under one overflow series and are not logged.
 */
import { context, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayLogRecord } from '../../src/gateway/gateway-log.js';
import { MAX_UNMATCHED_AGENT_NAMES, ToolwatchGateway } from '../../src/gateway/toolwatch-gateway.js';
import { protobufOf, supportPolicy } from './helpers.js';

const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(
  't',
);
const agentAttributes = (name: string) => ({
  'gen_ai.operation.name': 'invoke_agent',
  'gen_ai.agent.name': name,
});

/** A root agent run of `name`, with a member run of `member` inside it when given. */
function run(name: string, member?: string): ReadableSpan[] {
  exporter.reset();
  const agent = tracer.startSpan(`invoke_agent ${name}`, { attributes: agentAttributes(name) });
  if (member) {
    const inside = trace.setSpan(context.active(), agent);
    tracer.startSpan(`invoke_agent ${member}`, { attributes: agentAttributes(member) }, inside).end();
  }
  agent.end();
  return exporter.getFinishedSpans().slice();
}

const gateways: ToolwatchGateway[] = [];
afterEach(async () => {
  for (const g of gateways.splice(0)) await g.close(100);
});

async function judge(spans: ReadableSpan[]) {
  const records: GatewayLogRecord[] = [];
  const clock = { now: 1_000_000 };
  const gw = new ToolwatchGateway({
    policy: supportPolicy(),
    decisionWaitMs: 10,
    now: () => clock.now,
    logger: (r) => records.push(r),
  });
  gateways.push(gw);
  expect(gw.ingest(protobufOf(spans), 'http').kind).toBe('accepted');
  clock.now += 1_000;
  await gw.tick();
  const unmatched = (labels: Record<string, string>) =>
    gw.registry.value('toolwatch_gateway_agent_runs_unmatched_total', labels);
  return { gw, records, unmatched };
}

describe('agent runs no rule matched', () => {
  it('are counted by agent name and each name logged once; runs inside a judged run are not', async () => {
    const { gw, records, unmatched } = await judge([
      ...run('weather_agent'),
      ...run('weather_agent'),
      ...run('helper_agent'),
      // support_agent is judged (the rule matches); its member run is covered by that verdict.
      ...run('support_agent', 'helper_agent'),
    ]);
    // Before: no metric, no line: a wrong glob looked like nothing arrived.
    expect(unmatched({ agent: 'weather_agent' })).toBe(2);
    expect(unmatched({ agent: 'helper_agent' })).toBe(1);
    expect(gw.registry.total('toolwatch_gateway_agent_runs_unmatched_total')).toBe(3);
    const logged = records.filter((r) => r.msg.startsWith('agent run matched no rule'));
    expect(logged.map((r) => r.attributes.agent)).toEqual(['weather_agent', 'helper_agent']);
    expect(logged[0]!.attributes.rules).toBe(1);
  });

  it('counts an unmatched run once, its nested runs as part of it', async () => {
    const { gw, unmatched } = await judge([...run('weather_agent', 'forecaster'), ...run('forecaster')]);
    expect(unmatched({ agent: 'weather_agent' })).toBe(1);
    // Only the outermost forecaster run; the one inside weather_agent's run is part of it.
    expect(unmatched({ agent: 'forecaster' })).toBe(1);
    expect(gw.registry.total('toolwatch_gateway_agent_runs_unmatched_total')).toBe(2);
  });

  it(`keeps at most ${MAX_UNMATCHED_AGENT_NAMES} names (series and lines); further names count under overflow`, async () => {
    const spans: ReadableSpan[] = [];
    for (let i = 0; i <= MAX_UNMATCHED_AGENT_NAMES + 4; i++) spans.push(...run(`agent-${i}`));
    const { gw, records, unmatched } = await judge(spans);
    expect(gw.registry.total('toolwatch_gateway_agent_runs_unmatched_total')).toBe(
      MAX_UNMATCHED_AGENT_NAMES + 5,
    );
    expect(unmatched({ otel_metric_overflow: 'true' })).toBe(5);
    expect(gw.registry.text().match(/^toolwatch_gateway_agent_runs_unmatched_total\{/gm)).toHaveLength(
      MAX_UNMATCHED_AGENT_NAMES + 1,
    );
    expect(records.filter((r) => r.msg.startsWith('agent run matched no rule'))).toHaveLength(
      MAX_UNMATCHED_AGENT_NAMES,
    );
    expect(records.filter((r) => r.msg.startsWith('more agent names'))).toHaveLength(1);
  });
});
