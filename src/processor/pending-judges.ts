import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { completeRunAsync, type RunEvaluation } from '../evaluation/evaluate-run.js';
import type { JudgeLimiter } from '../evaluation/judge-limiter.js';
import { errorResult } from '../scorers/scorer-result.js';
import type { AgentRun, JudgeFunction, Policy, Rule, ScorerResult } from '../types.js';
import { raceAbort } from './race-abort.js';

/**
 * Scorers and judges run here: tracing suppressed, and none of the application's context
 * (its active span, its baggage) leaks into what they do. Built once, not per run.
 */
export const UNTRACED = suppressTracing(ROOT_CONTEXT);

interface Job {
  controller: AbortController;
  timer: ReturnType<typeof setTimeout>;
  evaluation: RunEvaluation;
  settled: boolean;
  done: (extra: ScorerResult[]) => void;
}

export interface PendingJudgesOptions {
  policy: Policy;
  judges: Record<string, JudgeFunction | unknown> | undefined;
  limiter: JudgeLimiter;
  timeoutMs: number;
  problem: (kind: string, message: string, error?: unknown) => void;
}

/**
 * Judges still running, and every other piece of work the processor finishes later. Each
 * judged run has its own abort controller and an unref'd timer: a hanging judge neither
 * holds the process nor a flush past `judgeTimeoutMs`, and `abortAll` settles every run at
 * once, synchronously, so its results are emitted while the exporters still accept spans.
 */
export class PendingJudges {
  private readonly _jobs = new Set<Job>();
  private readonly _work = new Set<Promise<unknown>>();

  constructor(private readonly _options: PendingJudgesOptions) {}

  /** Runs the evaluation's pending judges on `run`; `done` gets their results exactly once. */
  start(run: AgentRun, rule: Rule, evaluation: RunEvaluation, done: (extra: ScorerResult[]) => void): void {
    const controller = new AbortController();
    const { timeoutMs } = this._options;
    const job: Job = {
      controller,
      evaluation,
      settled: false,
      done,
      timer: setTimeout(
        () => controller.abort(new Error(`judge timed out after ${timeoutMs} ms`)),
        timeoutMs,
      ),
    };
    job.timer.unref?.();
    this._jobs.add(job);
    let judged: Promise<ScorerResult[]>;
    try {
      judged = context.with(UNTRACED, () =>
        completeRunAsync(run, rule, this._options.policy, evaluation, {
          judges: this._options.judges,
          limiter: this._options.limiter,
          signal: controller.signal,
        }),
      );
    } catch (error) {
      judged = Promise.reject(error);
    }
    this.track(
      raceAbort(judged, controller.signal).then(
        (extra) => this._settle(job, extra),
        (error) => {
          this._options.problem('judge', `judges of rule ${rule.name} failed`, error);
          this._settle(job, errorResults(job, error));
        },
      ),
    );
  }

  /** Aborts every running judge now: each run's pending judges become `error` results, delivered synchronously. */
  abortAll(reason: Error): void {
    for (const job of [...this._jobs]) {
      job.controller.abort(reason);
      this._settle(job, errorResults(job, reason));
    }
  }

  track(promise: Promise<unknown>): void {
    const tracked = promise.catch((error) =>
      this._options.problem('pending', 'pending evaluation failed', error),
    );
    this._work.add(tracked);
    void tracked.finally(() => this._work.delete(tracked));
  }

  /** Waits for everything tracked, including work queued while waiting. */
  async drain(): Promise<void> {
    while (this._work.size > 0) await Promise.all([...this._work]);
  }

  private _settle(job: Job, extra: ScorerResult[]): void {
    if (job.settled) return;
    job.settled = true;
    clearTimeout(job.timer);
    this._jobs.delete(job);
    try {
      job.done(extra);
    } catch (error) {
      this._options.problem('judge_done', 'delivering judged results failed', error);
    }
  }
}

function errorResults(job: Job, error: unknown): ScorerResult[] {
  return job.evaluation.pending.map((scorer) => errorResult(scorer, error));
}
