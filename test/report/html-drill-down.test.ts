/**
 * The HTML report's failing runs open to what toolwatch rebuilt — tool calls in order with
 * status and arguments (redacted as the policy says), nested member runs, and every
 * scorer's expectations, each met or unmet — checked in headless Chromium on recorded traces
 * through `toolwatch score --format html`, with `--jobs` too.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { dumpDom } from './chromium.js';

const fixture = (path: string) => fileURLToPath(new URL(`../fixtures/${path}`, import.meta.url));
const INPUTS = [
  fixture('agno/team_depth3.otlp.json'),
  fixture('mastra-v1/tool_error.otlp.json'),
  fixture('mastra-v1/subagent_as_tool.otlp.json'),
];

const POLICY = `version: 1
rules:
  - name: weather
    scorers:
      - kind: tool_calls
        expected_tools: [getWeather]
      - kind: trajectory
        expected_tools: [getWeather]
        forbidden_tools: [flakyDb]
`;

let dir: string;

async function report(policy: string, out: string, extra: string[] = []): Promise<string> {
  await writeFile(join(dir, `${out}.yaml`), policy);
  const file = join(dir, `${out}.html`);
  const code = await main(
    ['score', ...INPUTS, '--policy', join(dir, `${out}.yaml`), '--format', 'html', '--out', file, ...extra],
    { stdout: () => {}, stderr: () => {} },
  );
  expect(code).toBe(0);
  return file;
}

/** An expectation line the scorer found unmet. */
const unmet = (text: string) => `<li class="unmet"><span class="mark">unmet</span> ${text}</li>`;

/** The failing-runs row of `agent`. */
function row(dom: string, agent: string): string {
  const failing = /<table id="failing"[\s\S]*?<\/table>/.exec(dom)![0];
  const rows = failing.split('<tr').filter((r) => r.includes(`<td>${agent}</td>`));
  expect(rows, agent).toHaveLength(1);
  return rows[0]!;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-drill-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('HTML report: what toolwatch rebuilt of a failing run', () => {
  it('opens to the calls in order, with status and redacted arguments, and every expectation met or unmet', async () => {
    const file = await report(POLICY, 'redacted');
    // A filter that leaves one run opens it.
    const dom = await dumpDom(`${pathToFileURL(file).href}#filter=weather_agent`);
    expect(dom).toContain('<body data-ready="1">');
    const weather = row(dom, 'weather_agent');
    expect(weather).toContain('<details class="rebuilt" open="">');
    expect(weather).toContain(
      '<li class="call"><code class="tool">flakyDb</code> <span class="status status-error">error</span> <code class="args">{"query": …}</code> <span class="error">unknown</span></li>',
    );
    // Values redacted (the default): neither the argument nor the error message.
    expect(weather).not.toContain('orders');
    expect(weather).not.toContain('DB connection refused');
    // The reason whole, in the why column and under the scorer that found it unmet.
    expect(weather).toContain("tool_calls: expected tool 'getWeather' has no clean execution");
    expect(weather).toContain(
      `<li class="scorer-fail"><code>tool_calls</code> <span class="mark">unmet</span><ul>${unmet("expected tool 'getWeather' has no clean execution")}</ul></li>`,
    );
    expect(weather).toContain(
      `<li class="scorer-fail"><code>trajectory</code> <span class="mark">unmet</span><ul>${unmet('expected tool getWeather was not called')}${unmet('forbidden tool flakyDb was executed (1 call)')}</ul></li>`,
    );
    // What held is listed too: the orchestrator failed tool_calls, and met trajectory's expectation.
    const orchestrator = row(dom, 'orchestrator');
    expect(orchestrator).toContain('<code>tool_calls</code> <span class="mark">unmet</span>');
    expect(orchestrator).toContain(
      '<li class="scorer-pass"><code>trajectory</code> <span class="mark">met</span><ul><li class="met"><span class="mark">met</span> expected tool getWeather was called and succeeded</li></ul></li>',
    );
    // Other runs stay closed.
    expect(row(dom, 'Travel Desk')).toContain('<details class="rebuilt">');
  }, 120_000);

  it('nests member runs, each with its own calls; values shown when the policy does not redact them', async () => {
    const file = await report(
      POLICY.replace('version: 1', 'version: 1\nredact: { values: false }'),
      'plain',
      ['--jobs', '2'],
    );
    const dom = await dumpDom(pathToFileURL(file).href);
    const team = row(dom, 'Travel Desk');
    const calls = [...team.matchAll(/<code class="tool">([^<]+)<\/code>/g)].map((m) => m[1]);
    expect(calls).toEqual([
      'lookup_policy',
      'delegate_task_to_member',
      'notify_customer',
      'delegate_task_to_member',
      'get_weather',
    ]);
    expect(team).toMatch(
      /<details class="member" open=""><summary>member run <code>Research Team<\/code> \(1 calls\)<\/summary>[\s\S]*<details class="member" open=""><summary>member run <code>Weather Agent<\/code> \(1 calls\)/,
    );
    expect(team).toContain('<code class="args">{"city":"Paris"}</code>');
    const weather = row(dom, 'weather_agent');
    expect(weather).toContain('<code class="args">{"query":"orders"}</code>');
    expect(weather).toContain('<span class="error">unknown: DB connection refused</span>');
    // The file is the report: nothing but it was written.
    expect(await readFile(file, 'utf8')).toMatch(/^<!doctype html>/);
  }, 120_000);
});
