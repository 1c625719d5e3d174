import type { PolicyLimits } from '../policy/policy-limits.js';

/** The `parseArgs` options that raise the policy limits, shared by every command that loads a policy. */
export const POLICY_LIMIT_OPTIONS = {
  'max-policy-bytes': { type: 'string' },
  'max-policy-alias-nodes': { type: 'string' },
} as const;

/** The flags' lines of a usage text whose descriptions start at `column`. */
export function policyLimitUsage(column: number): string {
  return [
    ['--max-policy-bytes N', 'the largest policy file read (default 1048576, 1 MiB)'],
    ['--max-policy-alias-nodes N', 'the most nodes YAML aliases may add to the policy (default 100000)'],
  ]
    .map(([flag, text]) => {
      const head = `  ${flag}`;
      return head.length < column - 1
        ? `${head.padEnd(column)}${text}`
        : `${head}\n${' '.repeat(column)}${text}`;
    })
    .join('\n');
}

/** The limits the flags give, or the problem with a value. */
export function policyLimitsOf(values: {
  'max-policy-bytes'?: string | boolean | string[] | undefined;
  'max-policy-alias-nodes'?: string | boolean | string[] | undefined;
}): PolicyLimits | string {
  const limits: PolicyLimits = {};
  for (const [flag, key] of [
    ['max-policy-bytes', 'maxBytes'],
    ['max-policy-alias-nodes', 'maxAliasNodes'],
  ] as const) {
    const raw = values[flag];
    if (raw === undefined) continue;
    const n = Number(raw);
    if (typeof raw !== 'string' || !Number.isSafeInteger(n) || n < 1)
      return `--${flag} must be a positive integer`;
    limits[key] = n;
  }
  return limits;
}
