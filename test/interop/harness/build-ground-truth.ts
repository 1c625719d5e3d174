import { isCallTurn, type Script } from './script.js';
import type { RecordedCall } from './tool-recorder.js';
import type { Framework, GroundTruth, ScenarioName, TruthCall, TruthRun } from './types.js';

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * Joins what the scripted models served with what the tool functions recorded. A served request
 * is executed when an unconsumed recorded call of the same agent has the same name and arguments;
 * otherwise it never ran (request-only). Throws when a tool ran that no model asked for, because
 * then the harness itself is wrong.
 */
export function buildGroundTruth(
  framework: Framework,
  scenario: ScenarioName,
  script: Script,
  recorded: readonly RecordedCall[],
  aborted = false,
): GroundTruth {
  const used = new Set<number>();
  const runs: TruthRun[] = [];
  for (const agent of script.agents) {
    const turns = script.served.get(agent.agent) ?? [];
    if (turns.length === 0) continue;
    const calls: TruthCall[] = [];
    for (const turn of turns) {
      if (!isCallTurn(turn)) continue;
      for (const req of turn.calls) {
        const idx = recorded.findIndex(
          (r, i) =>
            !used.has(i) &&
            r.agent === agent.agent &&
            r.name === req.name &&
            canonical(r.args) === canonical(req.args),
        );
        if (idx >= 0) {
          used.add(idx);
          const r = recorded[idx]!;
          calls.push({ name: r.name, args: r.args, status: r.threw ? 'error' : 'ok', requestOnly: false });
        } else {
          calls.push({ name: req.name, args: req.args, status: 'refused', requestOnly: true });
        }
      }
    }
    runs.push({ agent: agent.agent, parent: agent.parent, calls });
  }
  const stray = recorded.filter((_r, i) => !used.has(i));
  if (stray.length > 0) {
    throw new Error(`tool calls nobody scripted: ${JSON.stringify(stray)}`);
  }
  return { framework, scenario, runs, aborted };
}
