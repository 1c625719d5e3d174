import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';

/** Support agents may not delete accounts, makes at most 3 calls, and no identical call twice. */
const GUARD_POLICY = `version: 1
rules:
  - name: support
    match: { agent: 'support*' }
    guard: { mode: enforce }
    scorers:
      - kind: trajectory
        expected_tools: [lookup_account, notify]
        forbidden_tools: [delete_account]
        max_calls: 3
        max_repeats: 1
  - name: billing
    match: { agent: billing_agent }
    guard: { mode: observe }
    scorers:
      - kind: trajectory
        forbidden_tools: [refund]
`;

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const OTHER_TRACE = 'b7ad6b7169203331b7ad6b7169203331';

let running: RunningGateway | undefined;
let url: string;

async function start(options: Partial<Parameters<typeof startGateway>[0]> = {}) {
  running = await startGateway({ policy: parsePolicyText(GUARD_POLICY), http: { port: 0 }, ...options });
  url = `http://${running.addresses.http}/v1/guard`;
}

afterEach(async () => {
  await running?.close();
  running = undefined;
});

function ask(body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function decide(tool: string, args: unknown = {}, trace = TRACE, agent = 'support_agent') {
  const res = await ask({ trace_id: trace, agent, tool, arguments: args });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/json');
  return (await res.json()) as Record<string, unknown>;
}

function metric(name: string): string[] {
  return running!.gateway.registry
    .text()
    .split('\n')
    .filter((l) => l.startsWith(name));
}

describe('POST /v1/guard', () => {
  it('answers the decision with snake_case keys: allow, and an enforced deny with rule, kind and reasons', async () => {
    await start();
    expect(await decide('lookup_account', { account_id: 'A-1' })).toEqual({
      allowed: true,
      decision: 'allow',
      enforced: false,
      reasons: [],
    });
    const denied = await decide('delete_account', { account_id: 'A-1' }, OTHER_TRACE);
    expect(denied).toEqual({
      allowed: false,
      decision: 'deny',
      enforced: true,
      reasons: [expect.stringContaining('delete_account is forbidden')],
      rule: 'support',
      kind: 'forbidden',
    });
    // Observe mode: the policy says deny, the call may run.
    expect(await decide('refund', {}, TRACE, 'billing_agent')).toMatchObject({
      allowed: true,
      decision: 'deny',
      enforced: false,
      rule: 'billing',
      kind: 'forbidden',
    });
    // No rule for this agent: allow.
    expect(await decide('delete_account', {}, TRACE, 'someone_else')).toMatchObject({ allowed: true });
    expect(metric('toolwatch_gateway_guard_requests_total')).toEqual(
      expect.arrayContaining([
        'toolwatch_gateway_guard_requests_total{outcome="allow"} 2',
        'toolwatch_gateway_guard_requests_total{outcome="deny"} 1',
        'toolwatch_gateway_guard_requests_total{outcome="would_deny"} 1',
      ]),
    );
    // The same decision counter as the processor's, by decision, kind, tool, agent and rule.
    expect(metric('toolwatch_tool_guard_decisions_total')).toContain(
      'toolwatch_tool_guard_decisions_total{gen_ai_agent_name="support_agent",gen_ai_tool_name="delete_account",toolwatch_guard_decision="deny",toolwatch_guard_kind="forbidden",toolwatch_rule="support"} 1',
    );
  });

  it('keeps each run’s calls across requests: budgets and repeats hold per trace id and agent', async () => {
    await start();
    expect((await decide('lookup_account', { account_id: 'A-1', region: 'eu' })).allowed).toBe(true);
    // The same call again (arguments compare as values, whatever their key order): repeated.
    expect(await decide('lookup_account', { region: 'eu', account_id: 'A-1' })).toMatchObject({
      allowed: false,
      kind: 'repeated_call',
    });
    // The refused call counts, as the verdict on the trace counts it: a third call is the last of max_calls 3.
    expect((await decide('lookup_account', { account_id: 'A-2' })).allowed).toBe(true);
    expect(await decide('notify', { to: 'A-1' })).toMatchObject({ allowed: false, kind: 'call_budget' });
    // Another trace, or another agent in the same trace, is another run.
    expect((await decide('notify', { to: 'A-1' }, OTHER_TRACE)).allowed).toBe(true);
    expect((await decide('notify', { to: 'A-1' }, TRACE, 'support_helper')).allowed).toBe(true);
  });

  it.each([
    ['not JSON', '{"trace_id":', 'body is not JSON'],
    ['an array', '[]', 'body must be a JSON object'],
    ['no trace_id', { agent: 'a', tool: 't' }, 'trace_id must be 32 hex digits'],
    ['a short trace_id', { trace_id: 'abc', agent: 'a', tool: 't' }, 'trace_id must be 32 hex digits'],
    ['an all-zero trace_id', { trace_id: '0'.repeat(32), agent: 'a', tool: 't' }, 'not all zero'],
    ['no agent', { trace_id: TRACE, tool: 't' }, 'agent must be a non-empty string'],
    ['an empty tool', { trace_id: TRACE, agent: 'a', tool: '' }, 'tool must be a non-empty string'],
    ['a long tool name', { trace_id: TRACE, agent: 'a', tool: 'x'.repeat(300) }, 'tool is longer than 256'],
    [
      'arguments as a list',
      { trace_id: TRACE, agent: 'a', tool: 't', arguments: [1] },
      'arguments must be a JSON object',
    ],
    ['a misspelt key', { trace_id: TRACE, agent: 'a', tool: 't', args: {} }, 'unknown field "args"'],
  ])('refuses %s with 400 and says why', async (_what, body, message) => {
    await start();
    const res = await ask(body);
    expect(res.status).toBe(400);
    const status = (await res.json()) as { code: number; message: string };
    expect(status.code).toBe(3);
    expect(status.message).toContain(message);
    expect(metric('toolwatch_gateway_guard_requests_total')).toEqual([
      'toolwatch_gateway_guard_requests_total{outcome="invalid"} 1',
    ]);
  });

  it('is under the gateway’s bearer token, body limits and content rules', async () => {
    await start({ token: 's3cret', maxRequestBytes: 1024 });
    const body = { trace_id: TRACE, agent: 'support_agent', tool: 'lookup_account', arguments: {} };
    const missing = await ask(body);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect((await ask(body, { authorization: 'Bearer wrong' })).status).toBe(401);
    const auth = { authorization: 'Bearer s3cret' };
    expect((await ask(body, auth)).status).toBe(200);
    const large = await ask({ ...body, arguments: { text: 'x'.repeat(2000) } }, auth);
    expect(large.status).toBe(413);
    expect(((await large.json()) as { message: string }).message).toBe('request body over 1024 bytes');
    const gz = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', ...auth },
      body: gzipSync(JSON.stringify(body)),
    });
    expect(gz.status).toBe(200);
    expect((await ask(JSON.stringify(body), { ...auth, 'content-type': 'text/plain' })).status).toBe(415);
    expect((await fetch(url, { headers: auth })).status).toBe(405);
    // The OTLP route is untouched.
    expect(
      (await fetch(url.replace('/v1/guard', '/v1/nothing'), { method: 'POST', headers: auth })).status,
    ).toBe(404);
  });
});
