import { execFile } from 'node:child_process';

/** The DOM after the page's script ran, from Debian's headless Chromium (installed by .ci/run). */
export function dumpDom(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'chromium',
      ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--dump-dom', url],
      { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    );
  });
}
