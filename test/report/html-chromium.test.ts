import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkGates } from '../../src/evaluation/check-gates.js';
import { renderHtml } from '../../src/report/render-html.js';
import { dumpDom } from './chromium.js';
import { fixtureReport } from './report-fixture.js';

let dir: string;
let file: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-html-'));
  const { builder, policy, verdicts } = await fixtureReport();
  builder.setGates(checkGates(verdicts, policy));
  file = join(dir, 'report.html');
  await writeFile(file, renderHtml(builder.build()));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('HTML report in headless Chromium', () => {
  it('renders the bar chart and every table, runs its script, and filters failing runs from the URL', async () => {
    const dom = await dumpDom(`${pathToFileURL(file).href}#filter=shipping.jsonl`);
    expect(dom).toContain('<body data-ready="1">');
    const chart = /<svg id="chart"[\s\S]*?<\/svg>/.exec(dom)?.[0] ?? '';
    // One bar per tool with expectations (3), intent (2) and risk (2).
    expect(chart.match(/<rect class="bar"/g)).toHaveLength(7);
    expect(chart).toContain('tool get_order_detail: 9/10');
    expect(chart).toContain('risk high: 7/10');
    for (const id of ['grid', 'by-rule', 'by-scorer', 'by-tool', 'by-intent', 'by-risk', 'failing']) {
      expect(dom, id).toContain(`<table id="${id}" class="sortable">`);
    }
    expect(dom).toContain('<li class="gate-failed">gate forbidden_tool_calls: 1 (max 0) FAILED</li>');
    // The filter ran in the browser: only the failing shipping run is shown.
    const failing = /<table id="failing"[\s\S]*?<\/table>/.exec(dom)![0];
    const rows = failing.match(/<tr( hidden="")?><td>/g) ?? [];
    expect(rows).toHaveLength(4);
    expect(rows.filter((r) => !r.includes('hidden'))).toHaveLength(1);
    expect(dom).toContain('<span id="shown">1</span>');
  }, 90_000);

  it('sorts a table by a column in the browser (#sort=TABLE.-COLUMN: descending)', async () => {
    const keys = (dom: string) =>
      [.../<table id="by-rule"[\s\S]*?<\/table>/.exec(dom)![0].matchAll(/<tr><td>([^<]+)<\/td>/g)].map(
        (m) => m[1],
      );
    const [asIs, byRateDesc, byRateAsc] = await Promise.all([
      dumpDom(pathToFileURL(file).href),
      dumpDom(`${pathToFileURL(file).href}#sort=by-rule.-3`),
      dumpDom(`${pathToFileURL(file).href}#sort=by-rule.3`),
    ]);
    // refunds 70.0 %, shipping 75.0 %.
    expect(keys(asIs)).toEqual(['refunds', 'shipping']);
    expect(keys(byRateDesc)).toEqual(['shipping', 'refunds']);
    expect(keys(byRateAsc)).toEqual(['refunds', 'shipping']);
    expect(byRateDesc).toContain('<th class="num" data-dir="desc">pass rate</th>');
  }, 90_000);
});
