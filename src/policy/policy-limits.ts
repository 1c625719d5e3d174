/**
 * Bounds on what loading one policy may cost. A policy is read once, at start, by the
 * gateway and the CLI: a file of unbounded size (or `/dev/zero`), or an anchor of thousands
 * of nodes aliased into every rule, would hold the process's memory for its whole life.
 */
export interface PolicyLimits {
  /**
   * The largest policy file read, in bytes. Default 1 MiB (1,048,576): a policy with a
   * hundred rules and their argument constraints is tens of kilobytes.
   */
  maxBytes?: number;
  /**
   * The most nodes (scalars, lists, mappings) YAML aliases may add to a policy when they are
   * expanded, over all aliases of the file. Default 100,000. A list of 20,000 tools aliased
   * into 100 rules adds 2,000,000.
   */
  maxAliasNodes?: number;
}

export const DEFAULT_POLICY_LIMITS: Required<PolicyLimits> = {
  maxBytes: 1024 * 1024,
  maxAliasNodes: 100_000,
};
