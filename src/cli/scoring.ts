import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { EvalCase } from '../cases/eval-case.js';
import type { TraceGroup } from '../input/trace-window.js';
import { loadPolicy } from '../policy/load-policy.js';
import type { PolicyLimits } from '../policy/policy-limits.js';
import type { Policy } from '../types.js';

/** The files a score run judges with; the workers of `--jobs` load the same. */
export interface ScoringSources {
  policy?: string;
  cases?: string;
  matchInput: boolean;
  /** Whether judges are configured (a case with `answer_facts` then gets an `llm_judge`). */
  judge: boolean;
  /** Bounds on the policy file (default `DEFAULT_POLICY_LIMITS`). */
  limits?: PolicyLimits;
}

export interface Scoring {
  policy: Policy;
  cases?: EvalCase[];
  /** With a case file: the case's policy for a trace, or undefined when no case is tied to it. */
  select?: (group: TraceGroup) => Policy | undefined;
  ruleTags?: ReturnType<CaseModules['caseTags']>;
}

/** The policy (or the case file's policies) a score run judges with. Throws what the loaders throw. */
export async function loadScoring(sources: ScoringSources): Promise<Scoring> {
  if (!sources.cases) return { policy: await loadPolicy(sources.policy!, sources.limits) };
  // The eval-dataset modules are loaded only with --cases: a policy run starts without them.
  const m = await loadCaseModules();
  const cases = await m.loadCases(sources.cases);
  const base = sources.policy ? await m.loadSettings(sources.policy, sources.limits) : undefined;
  const policy = m.casesPolicy(cases, { ...(base ? { base } : {}), judge: sources.judge });
  const select = m.caseSelector(policy, cases, { matchInput: sources.matchInput, source: sources.cases });
  return { policy, cases, select, ruleTags: m.caseTags(cases) };
}

type CaseModules = Awaited<ReturnType<typeof loadCaseModules>>;

async function loadCaseModules() {
  const [{ casesPolicy, caseTags }, { loadCases }, { caseSelector }, { loadSettings }] = await Promise.all([
    import('../cases/cases-policy.js'),
    import('../cases/load-cases.js'),
    import('../cases/tie-cases.js'),
    import('./load-settings.js'),
  ]);
  return { casesPolicy, caseTags, loadCases, caseSelector, loadSettings };
}

/** `judges` by name, or the default export as the `default` judge. */
export async function loadJudges(path: string): Promise<Record<string, unknown>> {
  const mod = (await import(pathToFileURL(resolve(path)).href)) as { judges?: unknown; default?: unknown };
  if (mod.judges && typeof mod.judges === 'object') return mod.judges as Record<string, unknown>;
  if (mod.default !== undefined) return { default: mod.default };
  throw new Error('the module exports neither `judges` nor a default judge');
}
