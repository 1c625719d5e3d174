#!/usr/bin/env node
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { CliIo } from './cli-io.js';
import { SCORE_USAGE, scoreCommand } from './commands/score.js';
import { usageError } from './usage-error.js';
import { OutputError } from './verdict-output.js';

const USAGE = `usage: toolwatch <command> [options]

commands:
  score FILE... --policy P [--format json|table|junit|markdown|html] [--out PATH]
                [--gate [--baseline B] [--allow-unreadable]] [--judges M] [--window N]
                              score recorded OTLP traces against a policy, as a stream
  baseline save FILE... --policy P --out B
                              save verdicts as a baseline for --baseline
  cases check FILE            validate an eval-dataset case file
  rollouts --cases C --agent MODULE [-k 6] [-c 6] [--policy P] [--format F] [--gate]
                              run an agent k times per case, judge every rollout,
                              print the calibration grid
  serve --policy P [--http H:P] [--grpc H:P] [--forward URL]... [--metrics H:P]
                              the gateway: judge OTLP traces received, forward them

  toolwatch <command> --help  the command's options
  toolwatch --version         the version

exit status: 0 ok, 1 a gate failed or nothing readable was found, 2 bad usage /
invalid policy or case file / output that cannot be written, 3 internal error (a bug:
please report it with the command line; TOOLWATCH_DEBUG=1 prints the stack)`;

const BASELINE_USAGE = `usage: toolwatch baseline save FILE... --policy P --out B [--judges M] [--window N]

Scores FILE... like \`toolwatch score\` and writes the verdicts (JSON Lines) to B, for
\`toolwatch score --gate --baseline B\`. The baseline records the policy digest: a
baseline is refused under a different policy. Exit 1 when nothing was scored.`;

function version(): string {
  // dist/cli/main.js and src/cli/main.ts are both two levels below the package root.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** Runs one CLI invocation; returns the exit code. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'score':
      return scoreCommand(rest, io);
    // Loaded when used: `score` (a CI step, a short run) does not pay for the gateway's gRPC
    // server, the OpenTelemetry SDK the rollouts run under, or the case-file checker.
    case 'serve':
      return (await import('./commands/serve.js')).serveCommand(rest, io);
    case 'cases':
      return (await import('./commands/cases.js')).casesCommand(rest, io);
    case 'rollouts':
      return (await import('./commands/rollouts.js')).rolloutsCommand(rest, io);
    case 'baseline': {
      // A baseline is the verdicts of a reference run, as `score --format json` writes them.
      const [sub, ...args] = rest;
      if (sub === '--help' || sub === '-h' || args.includes('--help') || args.includes('-h')) {
        io.stdout(`${BASELINE_USAGE}\n`);
        return 0;
      }
      if (sub !== 'save' || !args.some((a) => a === '--out' || a === '-o' || a.startsWith('--out='))) {
        return usageError(io, 'baseline', sub === 'save' ? '--out is required' : 'unknown subcommand');
      }
      if (args.some((a) => a === '--format' || a === '-f' || a.startsWith('--format=') || a === '--gate'))
        return usageError(io, 'baseline', 'save: --format and --gate do not apply');
      return scoreCommand([...args, '--format', 'json'], io, 'baseline save');
    }
    case '--version':
    case '-V':
    case 'version':
      io.stdout(`toolwatch ${version()}\n`);
      return 0;
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      io.stdout(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      io.stderr(
        `toolwatch: unknown command ${JSON.stringify(command)}\nrun \`toolwatch --help\` for the commands\n`,
      );
      return 2;
  }
}

export { SCORE_USAGE };

/** `process.exit` as Node made it: `toolwatch rollouts` guards it while the agent runs. */
const exit = process.exit.bind(process);

/** How long `toolwatch rollouts` waits for the agent's open handles to close before exiting. */
const ROLLOUTS_GRACE_MS = 2000;

/** Run as a program (directly or through the `toolwatch` bin link), not imported. */
function isMain(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  // `toolwatch score … | head -1`: the reader went away; stop quietly, as Unix tools do.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') exit(0);
    process.stderr.write(`toolwatch: cannot write to stdout: ${err.message}\n`);
    exit(2);
  });
  // Diagnostics that cannot be written (`2>&1 | head -1`, a full disk) are dropped: the run
  // goes on, so verdicts still reach stdout or --out and the exit status still means what it
  // says (an unhandled EPIPE on stderr ended the run with exit 1, as if a gate had failed).
  let stderrOpen = true;
  process.stderr.on('error', () => {
    stderrOpen = false;
  });
  const io: CliIo = {
    stdout: (text) => {
      if (!process.stdout.write(text)) return new Promise((resolve) => process.stdout.once('drain', resolve));
    },
    stderr: (text) => {
      if (stderrOpen) process.stderr.write(text);
    },
    stdin: process.stdin,
    stderrIsTTY: process.stderr.isTTY === true,
  };
  const argvCommand = process.argv[2];
  main(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
      // An agent module that leaves a timer or a socket open (an interval, a keep-alive
      // client) would keep `toolwatch rollouts` alive after its report, and the CI job with
      // it: a grace period for the agent's own teardown, then exit with the report's status.
      // Unref'd: a process with nothing left open ends at once.
      if (argvCommand === 'rollouts')
        setTimeout(() => {
          io.stderr(
            `toolwatch rollouts: the agent left handles open (timers, sockets) ${ROLLOUTS_GRACE_MS / 1000} s after the rollouts ended; exiting\n`,
          );
          // The real exit (the agent guard makes process.exit throw) with the status as it
          // stands: an error the agent raised after the report may have failed the gate.
          exit();
        }, ROLLOUTS_GRACE_MS).unref();
    },
    (err: unknown) => {
      if (err instanceof OutputError) {
        process.stderr.write(`toolwatch: ${err.message}\n`);
        process.exitCode = 2;
        return;
      }
      process.stderr.write(
        `toolwatch: internal error (exit 3; please report it): ${err instanceof Error ? (process.env.TOOLWATCH_DEBUG ? (err.stack ?? err.message) : err.message) : String(err)}\n`,
      );
      process.exitCode = 3;
    },
  );
}
