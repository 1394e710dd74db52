// Browser figures for docs/performance.md: for each bundle, drop-to-report
// seconds in headless Chromium (the one-file build from file://, built with
// `--features bench`, which adds two timing hooks to the production app), the WASM
// memory at the end, the longest main-thread task, and the native CLI's
// time on the same file for the WASM/native ratio. Each bundle runs
// VLLM_LENS_BENCH_RUNS times (default 3), the CLI then a fresh page, in
// turn: the figures are the median run's (the page's median drop-to-report
// and the run it came from), and the ratio is the median page time over
// the median native time, since this machine's speed moves between runs.
//   node web/tests/bench.mjs DIST_DIR BUNDLE...
import { resolve, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require('./node_modules/playwright-core');
const [distDir, ...bundles] = process.argv.slice(2);
const root = resolve(new URL('../..', import.meta.url).pathname);
const cli = process.env.VLLM_LENS_BIN || join(root, 'target/release/vllm-lens');

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const runs = Math.max(1, Number(process.env.VLLM_LENS_BENCH_RUNS || 3));
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)];
console.log(`Median of ${runs} run(s) per bundle, the CLI and then a fresh page, in turn.\n`);
console.log('| bundle | native (CLI, bundle → HTML) | drop-to-report in Chromium | of which load in WASM | analyse + render in WASM | WASM/native | WASM memory: main worker + inflating worker | page total with the zip | longest main-thread task |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const b of bundles) {
  const natives = [];
  const pages = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    execFileSync(cli, ['report', b, '-o', '/dev/null'], { stdio: 'ignore' });
    natives.push(Number(process.hrtime.bigint() - t0) / 1e9);
    const page = await browser.newPage();
    await page.addInitScript(() => {
      window.__longTasks = [];
      new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longTasks.push(e.duration); }).observe({ type: 'longtask', buffered: true });
    });
    await page.goto(`file://${resolve(distDir)}/vllm-lens.html`);
    await page.waitForFunction(() => window.vllmLens && window.vllmLens.ready === true && window.vllmLens.inflaterReady === true, null, { timeout: 60000 });
    await page.setInputFiles('#input', b);
    await page.waitForFunction(() => (window.vllmLens.reports || 0) > 0, null, { timeout: 600000 });
    pages.push(await page.evaluate(() => ({ s: window.vllmLens.lastSeconds, mem: window.vllmLens.wasmBytes, inf: window.vllmLens.inflaterBytes || 0, via: window.vllmLens.via, tasks: window.__longTasks, load: window.vllmLens.loadMs, total: window.vllmLens.analysisMs })));
    await page.close();
  }
  const native = median(natives);
  const r = pages.find((p) => p.s === median(pages.map((p) => p.s)));
  // The longest task and the memory over every run, not only the median's.
  const longest = Math.max(0, ...pages.flatMap((p) => p.tasks));
  const mem = Math.max(...pages.map((p) => p.mem));
  const inf = Math.max(...pages.map((p) => p.inf));
  // The zip itself sits in the inflating worker's JavaScript heap (read
  // whole by the browser): counted once in the page's total.
  const zipBytes = r.via === 'two workers' ? statSync(b).size : 0;
  const total = mem + inf + zipBytes;
  const all = (xs) => xs.map((x) => x.toFixed(2)).join(', ');
  console.log(`| ${b.split('/').pop()} | ${native.toFixed(2)} s | ${r.s.toFixed(2)} s | ${(r.load / 1000).toFixed(2)} s | ${((r.total - r.load) / 1000).toFixed(2)} s | ${(r.s / native).toFixed(2)} | ${(mem / 1048576).toFixed(0)} + ${(inf / 1048576).toFixed(0)} MiB | ${(total / 1e6).toFixed(0)} MB | ${longest.toFixed(0)} ms |`);
  if (runs > 1) console.error(`bench.mjs: ${b.split('/').pop()}: native ${all(natives)} s; page ${all(pages.map((p) => p.s))} s`);
}
// Inflate and parse alone, in the browser's WebAssembly and natively via
// the same bytes: where the load's extra time goes. (The bundle crosses
// into the page as base64: skipped above 64 MB, which the page would not
// take as one string.)
if (statSync(bundles[0]).size > 64 * 1048576) {
  console.log(`\nInflate and parse alone: skipped, ${bundles[0].split('/').pop()} is over 64 MB.`);
} else {
  const page = await browser.newPage();
  await page.goto(`file://${resolve(distDir)}/vllm-lens.html`);
  const { readFileSync } = await import('node:fs');
  const scrape = readFileSync(join(root, 'tests/data/scrapes/vllm-v1-0.23-2engines.prom'), 'utf8');
  const bundle = bundles[0];
  const b64 = readFileSync(bundle).toString('base64');
  const r = await page.evaluate(async ([data, text]) => {
    // The page's worker script with a handler of our own after it (it
    // replaces the worker's): the bench build exports bench_inflate and
    // bench_parse (`--features bench`).
    const wasmB64 = document.getElementById('vllm-lens-wasm').textContent.trim();
    const src = document.getElementById('vllm-lens-worker').textContent + `
      self.onmessage = (e) => {
        const dec = (s) => { const b = atob(s); const o = new Uint8Array(b.length); for (let i = 0; i < b.length; i++) o[i] = b.charCodeAt(i); return o; };
        wasm_bindgen.initSync({ module: dec(e.data.wasm) });
        const bytes = dec(e.data.bundle);
        let t = performance.now(); const n = wasm_bindgen.bench_inflate(bytes); const inflate = performance.now() - t;
        t = performance.now(); const s = wasm_bindgen.bench_parse(e.data.text, 200); const parse = performance.now() - t;
        const forecastMs = wasm_bindgen.bench_forecast(wasm_bindgen.sample_name(), wasm_bindgen.sample_bundle(), 5);
        self.postMessage({ inflate, n, parse, s, textBytes: e.data.text.length * 200, forecastMs, sample: wasm_bindgen.sample_name() });
      };`;
    const w = new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })));
    return await new Promise((ok) => { w.onmessage = (e) => ok(e.data); w.postMessage({ wasm: wasmB64, bundle: data, text }); });
  }, [b64, scrape]);
  console.log(`\nIn WebAssembly: inflating ${bundle.split('/').pop()} (${(r.n / 1e6).toFixed(0)} MB of text) took ${(r.inflate / 1000).toFixed(2)} s (${(r.n / 1e6 / (r.inflate / 1000)).toFixed(0)} MB/s); parsing a vLLM scrape 200 times ${(r.parse / 1000).toFixed(2)} s (${(r.textBytes / 1e6 / (r.parse / 1000)).toFixed(0)} MB/s); the forecast of ${r.sample} (calibration and the standard scenarios) ${(r.forecastMs / 1000).toFixed(2)} s per run.`);
  await page.close();
}
await browser.close();
