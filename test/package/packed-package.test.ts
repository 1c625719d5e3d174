// First contact, as a user meets toolwatch: `npm pack` (which builds dist/ through prepack),
// the tarball installed into a fresh project next to the OpenTelemetry packages a user
// brings (the README's install, today), then every code block of the README and of docs/
// run there as written — programs, policies, case files, CLI lines — `require()` from
// CommonJS, the `toolwatch` bin, and a strict type-check of a consumer.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReadmeBlock, readmeBlocks } from './readme-blocks.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const rootLock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
const locked = (name: string) => `${name}@${rootLock.packages[`node_modules/${name}`].version}`;

/** `@opentelemetry/sdk-node` of the SDK release the lockfile's `@opentelemetry/*` packages belong to. */
const SDK_NODE_VERSION = '0.223.0';

let work: string;
let app: string;
let packed: { filename: string; files: Array<{ path: string }> };
let manifest: Record<string, any>;
let installLog: string;
let refundTraceProtobuf: Uint8Array;

function run(cmd: string, args: string[], cwd: string) {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: 240_000,
    env: withoutNpmConfig(),
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** vitest may run under `npm test`: its npm_* settings must not leak into the user's npm. */
function withoutNpmConfig(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  return env;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'toolwatch-pack-'));
  const pack = run('npm', ['pack', '--json', '--pack-destination', work], root);
  if (pack.status !== 0) throw new Error(`npm pack failed:\n${pack.stdout}${pack.stderr}`);
  packed = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('[\n')))[0];
  execFileSync('tar', ['-xzf', join(work, packed.filename), '-C', work]);
  manifest = JSON.parse(readFileSync(join(work, 'package', 'package.json'), 'utf8'));

  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  const install = run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      join(work, packed.filename),
      locked('@opentelemetry/api'),
      locked('@opentelemetry/sdk-trace-base'),
      locked('@opentelemetry/context-async-hooks'),
      locked('@opentelemetry/sdk-trace-node'),
      locked('@opentelemetry/sdk-metrics'),
    ],
    app,
  );
  installLog = install.stdout + install.stderr;
  if (install.status !== 0) throw new Error(`npm install of the tarball failed:\n${installLog}`);

  // One directory per page, holding the page's named files and the repository files its
  // blocks read (as in a checkout: a recorded trace and the policy that matches it).
  for (const page of PAGES) {
    const dir = pageDir(page);
    mkdirSync(dir, { recursive: true });
    for (const file of CHECKOUT_FILES) {
      mkdirSync(join(dir, dirname(file)), { recursive: true });
      copyFileSync(join(root, file), join(dir, file));
    }
    for (const block of blocksOf(page)) if (block.file) writeFileSync(join(dir, block.file), block.code);
  }
  // The README's program starts the NodeSDK, as most Node applications do. It goes in the
  // README page's own directory, not the application's: the SDK's OTLP/gRPC exporters bring
  // @grpc/grpc-js and protobufjs (and its install script), which the tests above and below
  // require a processor-only install to be without. The page's programs still find toolwatch
  // in the application's node_modules, one directory up.
  const readme = pageDir('README.md');
  writeFileSync(
    join(readme, 'package.json'),
    JSON.stringify({ name: 'readme', private: true, type: 'module' }),
  );
  const sdkNode = run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      `@opentelemetry/sdk-node@${SDK_NODE_VERSION}`,
      locked('@opentelemetry/api'),
    ],
    readme,
  );
  if (sdkNode.status !== 0)
    throw new Error(`npm install of the NodeSDK failed:\n${sdkNode.stdout}${sdkNode.stderr}`);
  // The gateway's tests serve the README's policy and send a recorded refund-agent run.
  for (const block of blocksOf('README.md')) if (block.file) writeFileSync(join(app, block.file), block.code);
  writeFileSync(join(app, 'traces.json'), await recordRefundTrace());
}, 420_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The pages whose code blocks are run: the README and every page of docs/. */
const PAGES = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** Files of a checkout that documented programs read. */
const CHECKOUT_FILES = ['test/fixtures/ai-sdk/multi_step.otlp.json', 'examples/policies/weather.yaml'];

const blocksOf = (page: string) => readmeBlocks(readFileSync(join(root, page), 'utf8'));
const pageDir = (page: string) => join(app, 'pages', page.replace(/\W+/g, '-'));

/**
 * Runs a documented program in the fresh project, in its page's directory: JavaScript with
 * node (`.cjs` when it uses `require` and no `import`), TypeScript through the repository's tsx.
 */
function runProgram(program: ReadmeBlock, page = 'README.md') {
  const isCommonJs = /\brequire\(/.test(program.code) && !/^import /m.test(program.code);
  const ext = program.lang === 'ts' ? 'mts' : isCommonJs ? 'cjs' : 'mjs';
  const file = `block-${program.index}.${ext}`;
  const dir = pageDir(page);
  writeFileSync(join(dir, file), program.code);
  const r =
    ext === 'mts'
      ? run(join(root, 'node_modules', '.bin', 'tsx'), [file], dir)
      : run(process.execPath, [file], dir);
  return { ...r, file: `${page} ${file}` };
}

/**
 * One refund-agent run made with the real SDK, encoded by OTel's own serializers: OTLP/JSON
 * (returned) and protobuf (kept in `refundTraceProtobuf`, for OTLP/gRPC).
 */
async function recordRefundTrace(): Promise<string> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  try {
    const tracer = provider.getTracer('refund-agent');
    tracer.startActiveSpan(
      'invoke_agent refund-agent',
      { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'refund-agent' } },
      (agent) => {
        for (const name of ['get_order_detail', 'check_refund_policy']) {
          tracer
            .startSpan(`execute_tool ${name}`, {
              attributes: {
                'gen_ai.operation.name': 'execute_tool',
                'gen_ai.tool.name': name,
                'gen_ai.tool.call.arguments': '{"order_id":"A1024"}',
              },
            })
            .end();
        }
        agent.end();
      },
    );
    await provider.forceFlush();
    refundTraceProtobuf = ProtobufTraceSerializer.serializeRequest(exporter.getFinishedSpans())!;
    return new TextDecoder().decode(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans()));
  } finally {
    context.disable();
    await provider.shutdown();
  }
}

describe('npm pack', () => {
  it('ships the built JavaScript, one bundled declaration file per entry point and the bin', () => {
    const files = packed.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js']));
    expect(files.filter((f) => !f.startsWith('dist/')).sort()).toEqual([
      'LICENSE',
      'README.md',
      'package.json',
    ]);
    expect(files.some((f) => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('scripts/'))).toBe(
      false,
    );
    // One declaration file per entry point (toolwatch, /gateway, each /guard/* adapter);
    // internal modules have none to drift from the bundle.
    const entryTypes = Object.values<{ types?: string }>(manifest.exports)
      .flatMap((e) => (typeof e === 'object' && e.types ? [e.types.replace(/^\.\//, '')] : []))
      .sort();
    expect(entryTypes).toHaveLength(6);
    expect(files.filter((f) => f.endsWith('.d.ts')).sort()).toEqual(entryTypes);
  });

  it('has source maps that carry their sources (src/ is not shipped)', () => {
    const maps = packed.files.map((f) => f.path).filter((f) => f.endsWith('.js.map'));
    expect(maps.length).toBeGreaterThan(10);
    for (const path of maps) {
      const map = JSON.parse(readFileSync(join(work, 'package', path), 'utf8'));
      expect(map.sourcesContent?.length, path).toBe(map.sources.length);
      expect(
        map.sourcesContent.every((s: unknown) => typeof s === 'string' && s.length > 0),
        path,
      ).toBe(true);
    }
  });

  it('publishes no install-time script and no interop tree, and declares the SDK as a peer', () => {
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) {
      expect(manifest.scripts?.[hook], hook).toBeUndefined();
    }
    expect(manifest.peerDependencies).toMatchObject({
      '@opentelemetry/api': '^1.9.0',
      '@opentelemetry/sdk-trace-base': '^2.0.0',
    });
    for (const range of Object.values<string>(manifest.dependencies)) expect(range).toMatch(/^\^/);
    expect(manifest.exports['.']).toMatchObject({ import: './dist/index.js', require: './dist/index.js' });
  });

  it('installs into a fresh project without engine, peer or install-script warnings', () => {
    expect(installLog).not.toMatch(/EBADENGINE|ERESOLVE|peer dep|deprecated toolwatch|install-scripts/i);
  });

  it('brings no gRPC stack: @grpc/grpc-js is an optional peer, only the gateway’s gRPC listener loads it', () => {
    expect(manifest.dependencies['@grpc/grpc-js']).toBeUndefined();
    expect(manifest.peerDependencies['@grpc/grpc-js']).toMatch(/^\^1\./);
    // @openai/agents is the OpenAI Agents guard adapter's optional peer: never installed for it.
    expect(manifest.peerDependenciesMeta).toEqual({
      '@grpc/grpc-js': { optional: true },
      '@openai/agents': { optional: true },
    });
    for (const name of ['@grpc/grpc-js', '@grpc/proto-loader', 'protobufjs', 'yargs', '@openai/agents']) {
      expect(existsSync(join(app, 'node_modules', name)), name).toBe(false);
    }
  });
});

describe('the README, run against the installed tarball', () => {
  const blocks = blocksOf('README.md');
  const programs = blocks.filter((b) => b.lang === 'js' || b.lang === 'ts');

  it('has code blocks to run', () => {
    expect(programs.length).toBeGreaterThanOrEqual(3);
  });

  it('the NodeSDK program: the forbidden call is flagged live and the verdict fails, as shown', () => {
    const program = programs[0]!;
    expect(program.code).toContain('new NodeSDK(');
    const r = runProgram(program);
    expect(r.status, r.stderr).toBe(0);
    const shown = blocks.find((b) => b.lang === 'text' && b.index > program.index)!;
    for (const line of shown.code.trim().split('\n')) expect(r.stdout + r.stderr).toContain(line);
    expect(r.stdout).toContain("'toolwatch.evaluation.passed': false");
    expect(r.stdout).toContain("'gen_ai.evaluation.name': 'trajectory'");
  });

  it("the metrics program exports toolwatch's counters through a real MeterProvider", () => {
    const r = runProgram(programs.find((p) => p.code.includes('new MeterProvider('))!);
    expect(r.status, r.stderr).toBe(0);
    // As the README's comment says: the policy's zero series, exported once at shutdown.
    for (const name of ['toolwatch.evaluations', 'toolwatch.tool.misuse']) {
      expect(r.stdout).toContain(`name: '${name}'`);
    }
  });

  it('the offline program scores the recorded trace and prints what the README says', () => {
    const r = runProgram(programs.find((p) => p.code.includes('evaluateTraces'))!);
    expect(r.status, r.stderr).toBe(0);
    const said = /prints `([^`]+)`/.exec(readFileSync(join(root, 'README.md'), 'utf8'))![1]!;
    expect(r.stdout.trim()).toBe(said);
  });
});

describe.each(PAGES)('%s, run against the installed tarball', (page) => {
  const blocks = blocksOf(page);

  it('every program runs to completion as written, and prints what the page says it prints', () => {
    for (const program of blocks.filter((b) => b.lang === 'js' || b.lang === 'ts')) {
      const r = runProgram(program, page);
      expect(r.status, `${r.file}\n${program.code}\n${r.stderr}`).toBe(0);
      expect(r.stderr, r.file).not.toMatch(/Error|ExperimentalWarning/);
      // A `text` block right after it, introduced by "It prints:", is its output.
      const shown = blocks[program.index + 1];
      if (shown?.lang === 'text' && /\bprints:\s*$/.test(shown.intro)) {
        for (const line of shown.code.trim().split('\n')) expect(r.stdout + r.stderr, r.file).toContain(line);
      }
    }
  });

  it('every policy loads, and every case file checks', () => {
    for (const block of blocks.filter((b) => b.lang === 'yaml')) {
      const file = block.file ?? `block-${block.index}.yaml`;
      writeFileSync(join(pageDir(page), file), block.code);
      // Policy files: top-level `version` and `rules`; case files: `cases:` or a list.
      const isPolicy = /^version:/m.test(block.code) && /^rules:/m.test(block.code);
      const r = isPolicy
        ? run(
            process.execPath,
            [
              '--input-type=module',
              '-e',
              `const { loadPolicy } = await import('toolwatch'); const p = await loadPolicy(${JSON.stringify(file)}); console.log(p.rules.length);`,
            ],
            pageDir(page),
          )
        : run('npx', ['--no-install', 'toolwatch', 'cases', 'check', file], pageDir(page));
      expect(r.status, `${page} ${file}\n${block.code}\n${r.stderr}`).toBe(0);
      if (isPolicy) expect(Number(r.stdout.trim())).toBeGreaterThan(0);
    }
  });

  it('every CLI line runs, and gives the same output with --jobs 2', () => {
    for (const block of blocks.filter((b) => b.lang === 'sh')) {
      for (const line of block.code.trim().split('\n')) {
        const [, ...args] = line.split(/\s+/);
        const outAt = args.indexOf('--out');
        const output = () =>
          outAt >= 0 ? readFileSync(join(pageDir(page), args[outAt + 1]!), 'utf8') : undefined;
        const once = run('npx', ['--no-install', ...args], pageDir(page));
        expect(once.status, `${line}\n${once.stderr}`).toBe(0);
        const first = output() ?? once.stdout;
        // One run of the recorded trace, scored under the policy's rule.
        expect(first).toMatch(/\bweather\b/);
        if (args[0] !== 'score') continue;
        // The installed bin's worker threads (dist/cli/score-worker.js) give the same report.
        const parallel = run('npx', ['--no-install', ...args, '--jobs', '2'], pageDir(page));
        expect(parallel.status, parallel.stderr).toBe(0);
        expect(output() ?? parallel.stdout).toBe(first);
      }
    }
  });
});

describe('CommonJS', () => {
  it.each([
    ['toolwatch', 'ToolwatchSpanProcessor'],
    ['toolwatch/gateway', 'startGateway'],
  ])('CommonJS: require(%j) gives the same API as import', (entry, expected) => {
    const cjs = run(
      process.execPath,
      ['-e', `const t = require(${JSON.stringify(entry)}); console.log(Object.keys(t).sort().join(","))`],
      app,
    );
    const esm = run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const t = await import(${JSON.stringify(entry)}); console.log(Object.keys(t).sort().join(","))`,
      ],
      app,
    );
    expect(cjs.status, cjs.stderr).toBe(0);
    expect(esm.status, esm.stderr).toBe(0);
    expect(cjs.stdout).toBe(esm.stdout);
    expect(cjs.stdout.trim().split(',')).toContain(expected);
  });
});

describe('the public API', () => {
  it('exports what users need and no internals', () => {
    const r = run(
      process.execPath,
      ['--input-type=module', '-e', 'console.log(Object.keys(await import("toolwatch")).sort().join(","))'],
      app,
    );
    const names = r.stdout.trim().split(',');
    expect(names).toEqual(
      expect.arrayContaining([
        'PolicyError',
        'ToolwatchSpanProcessor',
        'checkGates',
        'definePolicy',
        'evaluateTraces',
        'fromReadableSpan',
        'llmJudge',
        'loadPolicy',
        'reconstructTrace',
        'reliability',
        'spansFromOtlpJson',
        'toolCalls',
        'toolOrder',
        'trajectory',
      ]),
    );
    for (const internal of ['ToolwatchMetrics', 'isSampled', 'configDigest', 'PyFloat', 'parsePolicy']) {
      expect(names).not.toContain(internal);
    }
  });

  it('type-checks strict ESM and CommonJS consumers without loading zod or internal modules', () => {
    writeFileSync(
      join(app, 'consumer.ts'),
      [
        "import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';",
        "import { definePolicy, evaluateTraces, ToolwatchSpanProcessor, trajectory, type Verdict } from 'toolwatch';",
        "import { startGateway, type StartGatewayOptions } from 'toolwatch/gateway';",
        'export const start: (options: StartGatewayOptions) => unknown = startGateway;',
        "const policy = definePolicy({ rules: [{ name: 'r', scorers: [trajectory({ forbiddenTools: ['x'] })] }] });",
        'const processor = new ToolwatchSpanProcessor({ policy, onVerdict: (v: Verdict) => void v.passed });',
        'new BasicTracerProvider({ spanProcessors: [processor] });',
        'export const pending: Promise<Verdict[]> = evaluateTraces([], policy);',
        '',
      ].join('\n'),
    );
    // CommonJS TypeScript: `module: nodenext` (TypeScript ≥ 5.8) knows Node's require(esm).
    writeFileSync(
      join(app, 'consumer-cjs.cts'),
      "import toolwatch = require('toolwatch');\nexport const load: typeof toolwatch.loadPolicy = toolwatch.loadPolicy;\n",
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          skipLibCheck: false,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          types: [],
          noEmit: true,
        },
        files: ['consumer.ts', 'consumer-cjs.cts'],
      }),
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const list = run(process.execPath, [tsc, '-p', '.', '--listFilesOnly'], app);
    expect(list.status, list.stdout + list.stderr).toBe(0);
    const loaded = list.stdout.split('\n').filter((f) => f.includes('/node_modules/'));
    expect(loaded.filter((f) => f.includes('/node_modules/zod/'))).toEqual([]);
    expect(loaded.filter((f) => f.includes('/node_modules/toolwatch/')).sort()).toEqual([
      expect.stringMatching(/node_modules\/toolwatch\/dist\/gateway\/index\.d\.ts$/),
      expect.stringMatching(/node_modules\/toolwatch\/dist\/index\.d\.ts$/),
    ]);
    const check = run(process.execPath, [tsc, '-p', '.'], app);
    expect(check.status, check.stdout + check.stderr).toBe(0);
  });
});

/** Runs the installed `toolwatch serve` until it says where it listens (or exits); `stop` sends SIGTERM. */
async function serveUntilListening(args: string[]) {
  const child = spawn(join(app, 'node_modules', '.bin', 'toolwatch'), ['serve', ...args], {
    cwd: app,
    env: withoutNpmConfig(),
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started = await new Promise<boolean>((resolve) => {
    child.stderr.on('data', (d) => {
      stderr += d;
      if (/listening/.test(stderr)) resolve(true);
    });
    void exited.then(() => resolve(false));
  });
  return {
    started,
    stderr: () => stderr,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

describe('the gateway’s gRPC listener, an optional peer', () => {
  const listeners = ['--http', '127.0.0.1:0', '--metrics', 'off'];

  it('without @grpc/grpc-js: `serve --grpc` exits 2 with the npm command to run, no stack trace; `--grpc off` serves OTLP/HTTP', async () => {
    for (const grpcFlag of [['--grpc', '127.0.0.1:0'], []]) {
      const r = run(
        join(app, 'node_modules', '.bin', 'toolwatch'),
        ['serve', '--policy', 'toolwatch.yaml', ...listeners, ...grpcFlag],
        app,
      );
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain(
        'toolwatch serve: cannot start: OTLP/gRPC needs the optional package @grpc/grpc-js, which is not installed: run `npm install @grpc/grpc-js`, or turn the gRPC listener off (`toolwatch serve --grpc off`)',
      );
      expect(r.stderr).not.toMatch(/^\s+at /m);
      expect(r.stderr).not.toMatch(/listening/);
    }
    const served = await serveUntilListening(['--policy', 'toolwatch.yaml', ...listeners, '--grpc', 'off']);
    expect(served.started, served.stderr()).toBe(true);
    const address = /listening http (\S+)/.exec(served.stderr())![1];
    const res = await fetch(`http://${address}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: readFileSync(join(app, 'traces.json')),
    });
    expect(res.status).toBe(200);
    expect(await served.stop()).toBe(0);
    expect(served.stderr()).toMatch(/spans received 3\b/);
  }, 60_000);

  it('with @grpc/grpc-js installed: `serve --grpc` takes an OTLP/gRPC export, as documented', async () => {
    const install = run(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', locked('@grpc/grpc-js')],
      app,
    );
    expect(install.status, install.stdout + install.stderr).toBe(0);
    const served = await serveUntilListening([
      '--policy',
      'toolwatch.yaml',
      ...listeners,
      '--grpc',
      '127.0.0.1:0',
    ]);
    expect(served.started, served.stderr()).toBe(true);
    const address = /grpc (\S+)/.exec(served.stderr())![1]!;
    const client = new grpc.Client(address, grpc.credentials.createInsecure());
    const error = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest(
        '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from(refundTraceProtobuf),
        new grpc.Metadata(),
        (err) => resolve(err ?? null),
      ),
    );
    client.close();
    expect(error).toBeNull();
    expect(await served.stop()).toBe(0);
    expect(served.stderr()).toMatch(/spans received 3\b/);
  }, 300_000);
});
