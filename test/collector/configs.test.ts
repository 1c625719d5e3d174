import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collectorBinary, configDir, freePort, startCollector, startProcess, until } from './harness.js';

const binary = collectorBinary();
const describeCollector = binary ? describe : describe.skip;
if (!binary) console.warn('no Go toolchain: skipping the Collector tests (CI builds the Collector)');

const CONFIGS = [
  'collector-single.yaml',
  'scale-out/load-balancer.yaml',
  'scale-out/load-balancer-dns.yaml',
  'scale-out/sampler.yaml',
];

async function ports() {
  return {
    OTLP_GRPC_ENDPOINT: `127.0.0.1:${await freePort()}`,
    OTLP_HTTP_ENDPOINT: `127.0.0.1:${await freePort()}`,
    HEALTH_ENDPOINT: `127.0.0.1:${await freePort()}`,
  };
}

describeCollector('collector-config/ with a real Collector', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolwatch-collector-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the binary has exactly the components the configs use, under their 2026 ids', () => {
    const out = spawnSync(binary!, ['components'], { encoding: 'utf8' }).stdout;
    for (const id of [
      'otlp',
      'batch',
      'memory_limiter',
      'tail_sampling',
      'load_balancing',
      'otlp_grpc',
      'otlp_http',
      'file',
      'debug',
      'health_check',
    ]) {
      expect(out).toMatch(new RegExp(`- name: ${id}\\n`));
    }
  });

  for (const config of CONFIGS) {
    it(`${config}: validates and starts (validate alone misses bad tail_sampling policies)`, async () => {
      const env = await ports();
      const validate = spawnSync(binary!, ['validate', `--config=${configDir}${config}`], {
        encoding: 'utf8',
        env: { ...process.env, ...env },
      });
      expect(validate.status, validate.stderr).toBe(0);
      const proc = await startCollector(binary!, [`${configDir}${config}`], env);
      expect(await proc.stop()).toBe(0);
      expect(proc.output()).not.toMatch(/\berror\b.*cannot start|Error: /);
    });
  }

  // collector-config/README.md, "Older Collectors": the ids to rename for a Collector before
  // v0.161.0. Every config, renamed as the table says, must still validate and start: the
  // table is complete (no new id left) and names real former ids (this Collector accepts both).
  const formerIds = [
    ...readFileSync(`${configDir}README.md`, 'utf8')
      .split('<!-- ids: before v0.161.0 -->')[1]!
      .split('\n\n')[0]!
      .matchAll(/^\| `([a-z_]+)`[^|]*\| `([a-z]+)` \|$/gm),
  ].map((m) => [m[1]!, m[2]!] as const);

  it('the README names the former id of every renamed component', () => {
    expect(formerIds).toEqual([
      ['load_balancing', 'loadbalancing'],
      ['otlp_http', 'otlphttp'],
      ['otlp_grpc', 'otlp'],
    ]);
  });

  for (const config of CONFIGS) {
    it(`${config} with the ids of Collectors before v0.161.0: validates and starts`, async () => {
      let text = readFileSync(`${configDir}${config}`, 'utf8');
      for (const [now, before] of formerIds) text = text.replace(new RegExp(`\\b${now}\\b`, 'g'), before);
      expect(text).not.toMatch(/\b(load_balancing|otlp_http|otlp_grpc)\b/);
      const file = join(dir, config.replace('/', '-'));
      writeFileSync(file, text);
      const env = await ports();
      const validate = spawnSync(binary!, ['validate', `--config=${file}`], {
        encoding: 'utf8',
        env: { ...process.env, ...env },
      });
      expect(validate.status, validate.stderr).toBe(0);
      const proc = await startCollector(binary!, [file], env);
      expect(await proc.stop()).toBe(0);
      expect(proc.output()).not.toMatch(/\berror\b.*cannot start|Error: /);
    });
  }

  it('a misspelt tail_sampling policy passes validate but fails to start: why every config is started', async () => {
    const bad = join(dir, 'bad.yaml');
    const text = (await import('node:fs'))
      .readFileSync(`${configDir}collector-single.yaml`, 'utf8')
      .replace('status_codes: [ERROR]', 'status_codes: [FAILED]');
    writeFileSync(bad, text);
    const env = await ports();
    expect(
      spawnSync(binary!, ['validate', `--config=${bad}`], { env: { ...process.env, ...env } }).status,
    ).toBe(0);
    const proc = startProcess(binary!, ['--config', bad], env);
    await until('exit', () => proc.child.exitCode !== null || undefined, 20_000);
    expect(proc.child.exitCode).not.toBe(0);
    expect(proc.output()).toContain('unknown status code "FAILED"');
  });
});
