import { CONVENTIONS_READ } from '../conventions/conventions-read.js';
import { terminalText } from '../input/printable.js';
import type { Policy, Rule } from '../types.js';
import type { ScoreStats } from './score-stream.js';

/** Agent names of unmatched runs named in the summary, the most frequent first. */
export const NAMES_SHOWN = 5;

/**
 * What a score run found, beyond its counts, for stderr: how many agent runs the input held,
 * which no rule matched (the most frequent names), and — when there was no agent run at all
 * — which conventions toolwatch reads, so that "my spans are not understood" and "my glob is
 * wrong" read differently. Empty when every run found was matched.
 */
export function scoreNotes(stats: ScoreStats, policy: Policy, prefix: string): string[] {
  // Nothing read (said apart), or no trace judged (with --cases: none tied to a case, said in
  // the counts line): no run could have been found.
  if (stats.spans === 0 || stats.traces === 0) return [];
  if (stats.agentRuns === 0) {
    return [
      `${prefix}: no agent runs found in ${stats.spans} spans of ${stats.traces} traces: toolwatch reads agent and tool spans of the ${CONVENTIONS_READ.join('; ')}`,
    ];
  }
  const tally = stats.unmatchedRuns;
  if (tally.total === 0) return [`${prefix}: ${stats.agentRuns} agent runs found, every one matched a rule`];
  const shown = tally
    .top(NAMES_SHOWN)
    .map(([name, n]) => `${terminalText(JSON.stringify(name))} ×${n}`)
    .join(', ');
  const more = tally.size > NAMES_SHOWN || tally.others > 0 ? ', …' : '';
  const rules = policy.rules.slice(0, RULES_SHOWN).map(describeMatch);
  if (policy.rules.length > RULES_SHOWN) rules.push(`${policy.rules.length - RULES_SHOWN} more rules`);
  return [
    `${prefix}: ${stats.agentRuns} agent runs found, ${tally.total} matched no rule: ${shown}${more} (${terminalText(rules.join('; '))})`,
  ];
}

const RULES_SHOWN = 3;

/** `rule refunds matches agent "refund-*"`. */
function describeMatch(rule: Rule): string {
  const { agent, attributes } = rule.match;
  const who = agent === undefined ? 'any agent' : `agent ${JSON.stringify(agent)}`;
  return `rule ${JSON.stringify(rule.name)} matches ${who}${attributes ? ` with attributes ${JSON.stringify(attributes)}` : ''}`;
}
