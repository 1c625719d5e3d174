import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import type { SpanLike } from '../../src/types.js';
import { runExample } from './run-example.js';

describe('examples/otlp-export.ts', () => {
  it('exports agent spans that carry the verdict to an OTLP/HTTP receiver', async () => {
    const bodies: unknown[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => {
        body += d.toString();
      });
      req.on('end', () => {
        if (req.url === '/v1/traces') bodies.push(JSON.parse(body));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      const { code, output } = await runExample('examples/otlp-export.ts', [
        `http://127.0.0.1:${port}/v1/traces`,
      ]);
      expect(code, output).toBe(0);
    } finally {
      server.close();
    }

    const spans: SpanLike[] = bodies.flatMap((b) => spansFromOtlpJson(b));
    const agents = spans
      .filter((s) => s.name === 'ai.generateText')
      .sort((a, b) => a.startTime - b.startTime);
    expect(agents).toHaveLength(3);
    expect(agents.map((s) => s.attributes['toolwatch.evaluation.passed'])).toEqual([true, false, false]);
    // The first run judged, every deterministic scorer passing (a skipped record also has
    // passed: true). Its judge is sampled by trace id at 0.05 and not escalated: out of the
    // sample (19 runs in 20) it is `skipped` here; in it, its result comes later, on an
    // `evaluate` span (the trace ids are random, so the test takes either, exactly).
    const first = agents[0]!.events
      .filter((e) => e.name === 'gen_ai.evaluation.result')
      .map((e) => [e.attributes['gen_ai.evaluation.name'], e.attributes['gen_ai.evaluation.score.label']]);
    const judgeSampledIn = first.length === 4;
    expect(first).toEqual([
      ['reliability', 'pass'],
      ['grounded', 'pass'],
      ['tool_order', 'pass'],
      ['trajectory', 'pass'],
      ...(judgeSampledIn ? [] : [['llm_judge', 'skipped']]),
    ]);
    expect(agents.map((s) => s.attributes['toolwatch.keep'])).toEqual([false, true, true]);
    expect(agents[2]!.attributes['toolwatch.evaluation.failed']).toEqual([
      'reliability',
      'tool_order',
      'trajectory',
    ]);
    for (const agent of agents) {
      expect(agent.attributes['toolwatch.evaluation.rule']).toBe('refunds');
      const events = agent.events.filter((e) => e.name === 'gen_ai.evaluation.result');
      expect(events.map((e) => e.attributes['gen_ai.evaluation.name'])).toEqual(
        expect.arrayContaining(['reliability', 'grounded', 'tool_order', 'trajectory']),
      );
    }
    // The escalated judge results arrive later, on `evaluate refund-agent` spans parented to the run.
    const late = spans.filter((s) => s.name === 'evaluate refund-agent');
    expect(late.map((s) => s.parentSpanId).sort()).toEqual(
      (judgeSampledIn ? agents : agents.slice(1)).map((a) => a.spanId).sort(),
    );
    for (const s of late) {
      expect(s.events.map((e) => e.attributes['gen_ai.evaluation.name'])).toEqual(['llm_judge']);
    }
  });
});
