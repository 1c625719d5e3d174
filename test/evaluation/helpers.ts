import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { reconstructTraces } from '../../src/reconstruction/reconstruct-trace.js';
import type { AgentRun, Scorer, ScorerResult } from '../../src/types.js';
import type { TraceBuilder } from '../helpers/trace-builder.js';

/** A trace id whose low 56 bits are `fraction` of 2^56 (so `isSampled(id, r)` ⇔ fraction < r). */
export function traceIdAt(fraction: number): string {
  const low = BigInt(Math.floor(fraction * 2 ** 56));
  return 'a1b2c3d4e5f60718' + '00' + low.toString(16).padStart(14, '0');
}

/** The outermost runs of a builder trace, through decoding and reconstruction. */
export function runsOf(t: TraceBuilder): AgentRun[] {
  return reconstructTraces(spansFromOtlpJson(t.toOtlp())).flatMap((trace) => trace.runs);
}

/** A scorer with a scripted outcome that counts its calls. */
export function fakeScorer(
  name: string,
  outcome: 'pass' | 'fail' | 'throw',
  options: { async?: boolean; ratio?: number; delayMs?: number } = {},
): Scorer & { calls: number } {
  const scorer = {
    name,
    kind: options.async ? 'fake_judge' : 'fake',
    digest: `digest-${name}`,
    async: options.async ?? false,
    ...(options.ratio !== undefined ? { sampling: { ratio: options.ratio } } : {}),
    config: { kind: 'fake', name },
    calls: 0,
    score(): ScorerResult | Promise<ScorerResult> {
      scorer.calls++;
      if (outcome === 'throw') throw new Error(`${name} exploded`);
      const result: ScorerResult = {
        scorer: name,
        kind: scorer.kind,
        passed: outcome === 'pass',
        score: outcome === 'pass' ? 1 : 0,
        label: outcome,
        reason: null,
        digest: scorer.digest,
        detail: {},
      };
      if (!options.async) return result;
      return new Promise((resolve) => setTimeout(() => resolve(result), options.delayMs ?? 0));
    },
  };
  return scorer;
}
