#!/usr/bin/env node
import { type CliIo, scoreCommand } from './commands/score.js';

const USAGE = `usage: toolwatch <command> [options]

commands:
  score FILE... --policy P [--format json|table|junit|markdown|html] [--out PATH] [--gate] [--baseline B]
                              score OTLP/JSON traces against a policy
  baseline save FILE... --policy P --out B
                              save verdicts as a baseline for --baseline`;

/** Runs one CLI invocation; returns the exit code (0 ok, 2 bad usage or policy, 3 internal error). */
async function main(argv: string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'score':
      return scoreCommand(rest, io);
    case 'baseline': {
      // A baseline is the verdicts of a reference run, as `score --format json` writes them.
      const [sub, ...args] = rest;
      if (sub !== 'save' || !args.some((a) => a === '--out' || a === '-o' || a.startsWith('--out='))) {
        io.stderr(`toolwatch baseline: usage: toolwatch baseline save FILE... --policy P --out B\n`);
        return 2;
      }
      return scoreCommand([...args, '--format', 'json'], io);
    }
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      io.stdout(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      io.stderr(`toolwatch: unknown command ${JSON.stringify(command)}\n${USAGE}\n`);
      return 2;
  }
}

const io: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

main(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`toolwatch: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 3;
  },
);
