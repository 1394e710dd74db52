// Browser figures for docs/performance.md: for each bundle, drop-to-report
// seconds in headless Chromium (the one-file build from file://), the WASM
// memory at the end, the longest main-thread task, and the native CLI's
// time on the same file for the WASM/native ratio.
//   node web/tests/bench.mjs DIST_DIR BUNDLE...
import { resolve, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require('../tools/node_modules/playwright-core');
const [distDir, ...bundles] = process.argv.slice(2);
const root = resolve(new URL('../..', import.meta.url).pathname);
const cli = process.env.VLLM_LENS_BIN || join(root, 'target/release/vllm-lens');

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
console.log('| bundle | native (CLI, bundle → HTML) | drop-to-report in Chromium | of which load in WASM | analyse + render in WASM | WASM/native | WASM memory | longest main-thread task |');
console.log('|---|---|---|---|---|---|---|---|');
for (const b of bundles) {
  const t0 = process.hrtime.bigint();
  execFileSync(cli, ['report', b, '-o', '/dev/null'], { stdio: 'ignore' });
  const native = Number(process.hrtime.bigint() - t0) / 1e9;
  const page = await browser.newPage();
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longTasks.push(e.duration); }).observe({ type: 'longtask', buffered: true });
  });
  await page.goto(`file://${resolve(distDir)}/vllm-lens.html`);
  await page.waitForFunction(() => window.vllmLens && window.vllmLens.ready === true, null, { timeout: 60000 });
  await page.setInputFiles('#input', b);
  await page.waitForFunction(() => (window.vllmLens.reports || 0) > 0, null, { timeout: 600000 });
  const r = await page.evaluate(() => ({ s: window.vllmLens.lastSeconds, mem: window.vllmLens.wasmBytes, tasks: window.__longTasks, load: window.vllmLens.loadMs, total: window.vllmLens.analysisMs }));
  const longest = r.tasks.length ? Math.max(...r.tasks) : 0;
  console.log(`| ${b.split('/').pop()} | ${native.toFixed(2)} s | ${r.s.toFixed(2)} s | ${(r.load / 1000).toFixed(2)} s | ${((r.total - r.load) / 1000).toFixed(2)} s | ${(r.s / native).toFixed(2)} | ${(r.mem / 1048576).toFixed(0)} MiB | ${longest.toFixed(0)} ms |`);
  await page.close();
}
await browser.close();
