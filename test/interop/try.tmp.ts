import { runScenario } from './harness/run-scenario.ts';

const fw = process.argv[2] as any;
const r = await runScenario(fw, process.argv[3] as any);
console.log(JSON.stringify(r.groundTruth.runs), r.groundTruth.aborted);
const byId = new Map(r.spans.map((x) => [x.spanContext().spanId, x]));
const depth = (x: any): number => {
  const p = x.parentSpanContext?.spanId;
  return p && byId.has(p) ? 1 + depth(byId.get(p)) : 0;
};
const ns = (t: any) => t[0] * 1e9 + t[1];
for (const x of [...r.spans].sort((a, b) => ns(a.startTime) - ns(b.startTime))) {
  console.log(
    '  '.repeat(depth(x)) + x.name,
    'K' + x.kind,
    'S' + x.status.code,
    x.status.message ?? '',
    JSON.stringify(x.attributes).slice(0, 400),
  );
}
process.exit(0);
