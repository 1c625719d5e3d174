import type { Policy } from '../types.js';
import { configDigest } from '../util/digest.js';

/**
 * sha256 of the canonical policy: snake_case keys, defaults filled in, each scorer as its
 * canonical config plus name and sampling. Two files that mean the same policy (YAML or
 * JSON, keys in any order, defaults written out or not) get the same digest. The gates are
 * left out: they judge the verdicts and change none, so a baseline saved before a gate was
 * tightened still compares (a changed rule, scorer, sampling or redaction still refuses it).
 */
export function policyDigest(policy: Omit<Policy, 'digest'>): string {
  return configDigest({
    version: policy.version,
    sampling: { ratio: policy.sampling.ratio },
    judge: {
      max_per_minute: policy.judge.maxPerMinute,
      max_concurrent: policy.judge.maxConcurrent,
      escalate_on: [...policy.judge.escalateOn],
    },
    redact: { values: policy.redact.values },
    rules: policy.rules.map((rule) => ({
      name: rule.name,
      match: {
        agent: rule.match.agent ?? null,
        root_only: rule.match.rootOnly,
        attributes: rule.match.attributes ?? {},
      },
      scorers: rule.scorers.map((s) => ({
        ...s.config,
        kind: s.kind,
        name: s.name,
        digest: s.digest,
        sampling: s.sampling ? { ratio: s.sampling.ratio } : null,
      })),
      // Only where present: policies without guards keep the digests they always had.
      ...(rule.guard ? { guard: { mode: rule.guard.mode, checks: [...rule.guard.checks] } } : {}),
    })),
  });
}
