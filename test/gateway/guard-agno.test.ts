import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import { reconstructTraces } from '../../src/reconstruction/reconstruct-trace.js';
import { GUARD_POLICY_TEXT, type Sink, startSink, until } from './helpers.js';

/** The agno venv CI builds (agno 3.1.10, openinference-instrumentation-agno, the OTLP/HTTP exporter). */
const python = process.env.TOOLWATCH_PYTHON ?? join(homedir(), '.cache/toolwatch/py-agent/bin/python');
const run = promisify(execFile);

let sink: Sink;
let gateway: RunningGateway;

beforeEach(async () => {
  sink = await startSink();
  gateway = await startGateway({
    policy: parsePolicyText(GUARD_POLICY_TEXT),
    http: { port: 0 },
    token: 'py-token',
    forward: [sink.url],
    decisionWaitMs: 300,
  });
});
afterEach(async () => {
  await gateway.close();
  await sink.close();
});

describe.skipIf(!existsSync(python) && !process.env.CI)(
  'a Python agno agent guarded through the gateway',
  () => {
    it("agno's tool hook asks /v1/guard: delete_account never runs, the run answers, the verdict counts it refused", async () => {
      const { stdout } = await run(
        python,
        ['test/gateway/python/guarded_agent.py', `http://${gateway.addresses.http}`, 'py-token'],
        { cwd: new URL('../../', import.meta.url).pathname, timeout: 120_000 },
      );
      const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
        executed: string[];
        seen: string[][];
        content: string;
        trace_ids: string[];
      };
      // The forbidden tool's own code never ran; agno's run went on to its answer.
      expect(out.executed).toEqual(['lookup_account']);
      expect(out.content).toBe('I cannot delete the account; it stays active.');
      // The model's third call holds the refusal, with the policy's reason.
      expect(out.seen).toHaveLength(3);
      expect(out.seen[2]!.at(-1)).toBe(
        'Refused by policy: the delete_account call was not run (tool delete_account is forbidden (rule support)).',
      );
      const traceId = out.trace_ids[0]!;
      expect(new Set(out.trace_ids)).toEqual(new Set([traceId]));

      // The gateway judged the run's exported trace and reads the call as refused, never executed
      // (without the decision the hook wrote on the tool span, it would be an ok execution).
      await until('the judged trace to be forwarded', () =>
        sink
          .decoded()
          .some((s) => s.traceId === traceId && s.attributes['toolwatch.evaluation.rule'] === 'support'),
      );
      const spans = sink.decoded().filter((s) => s.traceId === traceId);
      const [trace] = reconstructTraces(spans);
      const agentRun = trace!.runs[0]!;
      expect(agentRun.agent).toBe('support_agent');
      expect(agentRun.calls.map((c) => [c.name, c.status])).toEqual([
        ['lookup_account', 'ok'],
        ['delete_account', 'refused'],
      ]);
      expect(agentRun.executions.map((e) => e.name)).toEqual(['lookup_account']);
      expect(spans.filter((s) => s.attributes['toolwatch.evaluation.rule'] === 'support')).toHaveLength(1);
      const requests = gateway.gateway.registry
        .text()
        .split('\n')
        .filter((l) => l.startsWith('toolwatch_gateway_guard_requests_total'));
      expect(requests.sort()).toEqual([
        'toolwatch_gateway_guard_requests_total{outcome="allow"} 1',
        'toolwatch_gateway_guard_requests_total{outcome="deny"} 1',
      ]);
    }, 150_000);

    it('when the gateway cannot be reached or refuses the request, the hook runs the call by default and refuses it with fail_closed', async () => {
      const script = [
        'import json, sys',
        "sys.path.insert(0, 'examples/python')",
        'from toolwatch_guard import toolwatch_guard',
        'ran = []',
        "call = lambda **kw: ran.append(kw) or 'ran'",
        'out = []',
        // Nothing listens on port 1; the gateway answers 401 to a wrong token.
        "for url, token in (('http://127.0.0.1:1', None), (sys.argv[1], 'wrong')):",
        // The default first, then fail_closed=True.
        '    for options in ({}, {"fail_closed": True}):',
        '        hook = toolwatch_guard(url, token=token, timeout=2, **options)',
        "        out.append(hook(function_name='lookup_account', function_call=call, arguments={'account_id': 'A-1'}))",
        'print(json.dumps({"out": out, "ran": len(ran)}))',
      ].join('\n');
      const { stdout } = await run(python, ['-c', script, `http://${gateway.addresses.http}`], {
        cwd: new URL('../../', import.meta.url).pathname,
        timeout: 60_000,
      });
      const refused =
        'Refused by policy: the lookup_account call was not run (the toolwatch guard could not be reached).';
      expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({
        out: ['ran', refused, 'ran', refused],
        ran: 2,
      });
    }, 60_000);
  },
);
