import { evaluationExplanation } from '../emission/events.js';
import type { RedactOptions, ScorerResult } from '../types.js';

/**
 * A result's reason as the JSON verdict carries it — scorers quote argument values only as
 * the policy's redaction allows — or, for a result without one, its label and error codes.
 * Every report format says the same thing as `--format json`.
 */
export function resultReason(result: ScorerResult, redact: RedactOptions | undefined): string {
  return result.reason ?? evaluationExplanation(result, redact);
}
