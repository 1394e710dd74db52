// End-to-end tests of the browser app in Debian's headless Chromium, driven
// by playwright-core (which never downloads a browser). Run by
// scripts/test.sh after `scripts/web-build.sh`:
//   node web/tests/e2e.mjs DIST_DIR CLI_OUT_DIR [DAY_ZIP NATIVE_DAY_SECONDS]
// CLI_OUT_DIR holds `vllm-lens report` outputs (<name>.json, <name>.html)
// for every sample, made with the same settings the page uses by default.
import { createServer } from 'node:http';
import { readFileSync, readdirSync, writeFileSync, mkdtempSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';

const require = createRequire(import.meta.url);
const { chromium } = require('./node_modules/playwright-core');

const [distDir, cliDir, dayZip, nativeDaySeconds] = process.argv.slice(2);
const root = resolve(new URL('../..', import.meta.url).pathname);
const samplesDir = join(root, 'samples');
const samples = readdirSync(samplesDir).filter((f) => f.endsWith('.zip')).sort();
const tmp = mkdtempSync(join(tmpdir(), 'vllm-lens-e2e-'));
let failures = 0;
const results = [];

async function check(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    results.push(`ok    ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  } catch (e) {
    failures += 1;
    results.push(`FAIL  ${name}: ${e && e.stack ? e.stack.split('\n').slice(0, 4).join(' | ') : e}`);
  }
}

// A static server that logs every request.
const served = [];
const server = createServer((req, res) => {
  served.push(req.url);
  const path = join(resolve(distDir), decodeURIComponent(req.url.split('?')[0]).replace(/^\/+/, '') || 'index.html');
  try {
    const body = readFileSync(path);
    res.writeHead(200, { 'content-type': path.endsWith('.html') ? 'text/html; charset=utf-8' : 'application/octet-stream' });
    res.end(body);
  } catch {
    res.writeHead(404);
    res.end();
  }
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const origin = `http://127.0.0.1:${server.address().port}`;

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

async function openPage(url) {
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  await page.addInitScript(() => {
    window.__longTasks = [];
    try {
      new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); })
        .observe({ type: 'longtask', buffered: true });
    } catch (_) { /* no Long Tasks API */ }
  });
  await page.goto(url);
  // Both workers: the main one, and the one that inflates dropped zips.
  await page.waitForFunction(() => window.vllmLens && window.vllmLens.ready === true && window.vllmLens.inflaterReady === true, null, { timeout: 60000 });
  return { page, context, requests, consoleErrors };
}

const counter = (page, key) => page.evaluate((k) => window.vllmLens[k] || 0, key);
async function waitCounter(page, key, before, timeout = 120000) {
  await page.waitForFunction(([k, b]) => (window.vllmLens[k] || 0) > b, [key, before], { timeout });
}
// The JSON model is made when asked for (what "Download JSON" does).
async function pageJson(page) {
  await page.evaluate(() => window.vllmLens.requestJson());
  await page.waitForFunction(() => window.vllmLens.rendered && window.vllmLens.rendered.json, null, { timeout: 60000 });
  // The worker hands the JSON over as a Blob made of 1 MiB pieces.
  return JSON.parse(await page.evaluate(() => window.vllmLens.rendered.json.text()));
}

async function dropFile(page, path, name) {
  const b64 = readFileSync(path).toString('base64');
  await page.evaluate(([data, fileName]) => {
    const bin = atob(data);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], fileName, { type: 'application/zip' }));
    const drop = document.getElementById('drop');
    drop.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    drop.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, [b64, name]);
}

function cliJson(name) {
  return JSON.parse(readFileSync(join(cliDir, name.replace(/\.zip$/, '.json')), 'utf8'));
}

function sameReport(page, cli, name) {
  assert.deepEqual(page.slo.map((s) => [s.id, s.status, s.value]), cli.slo.map((s) => [s.id, s.status, s.value]), `${name}: scorecard`);
  const ids = (r) => r.analyses.flatMap((a) => a.findings.map((f) => f.id));
  assert.deepEqual(ids(page), ids(cli), `${name}: finding ids`);
  assert.deepEqual(page, cli, `${name}: the whole report model`);
}

// The CLI's comparisons of the sample pairs, run from samples/ so that the
// bundle names match what the page sees.
const pairs = JSON.parse(readFileSync(join(samplesDir, 'pairs.json'), 'utf8')).pairs;
const cli = process.env.VLLM_LENS_BIN || join(root, 'target/release/vllm-lens');
const cliCompare = {};
for (const p of pairs) {
  const b = `${p.before}.zip`;
  const a = `${p.after}.zip`;
  const json = join(tmp, `${p.before}--${p.after}.json`);
  const html = join(tmp, `${p.before}--${p.after}.html`);
  execFileSync(cli, ['compare', b, a, '--json', json, '-o', html], { cwd: samplesDir, stdio: 'ignore' });
  cliCompare[`${b}|${a}`] = { json, html };
}

async function dropFiles(page, paths) {
  const files = paths.map((p) => [readFileSync(p).toString('base64'), p.split('/').pop()]);
  await page.evaluate((list) => {
    const dt = new DataTransfer();
    for (const [data, name] of list) {
      const bin = atob(data);
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      dt.items.add(new File([bytes], name, { type: 'application/zip' }));
    }
    const drop = document.getElementById('drop');
    drop.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, files);
}

for (const mode of ['served', 'file']) {
  const url = mode === 'served' ? `${origin}/index.html` : `file://${resolve(distDir)}/vllm-lens.html`;
  let session;
  await check(`${mode}: the page starts`, async () => {
    session = await openPage(url);
  });
  if (!session) continue;
  const { page, requests, consoleErrors } = session;
  await check(`${mode}: the form shows the core's defaults, the ones the CLI uses`, async () => {
    // One input per objective of the core's registry (slo-NAME), each
    // holding the default the CLI uses.
    const form = await page.evaluate(() => Object.fromEntries(
      [...document.querySelectorAll('#settings input[id^="slo-"], #window')].map((e) => [e.id, Number(e.value)])));
    const cli = cliJson('a10g-qwen3b-ramp.zip').settings;
    assert.deepEqual(form, {
      window: cli.window_ms, 'slo-ttft-p95': cli.slo.ttft_p95_ms, 'slo-itl-p95': cli.slo.itl_p95_ms,
      'slo-queue-at': cli.slo.queue_concurrency, 'slo-error-abort': cli.slo.error_abort_pct,
    });
    assert.equal(await page.evaluate(() => window.vllmLens.sampleName), 'a10g-qwen3b-ramp.zip');
  });
  await check(`${mode}: every sample through the file input equals the CLI`, async () => {
    for (const s of samples) {
      const before = await counter(page, 'reports');
      await page.setInputFiles('#input', join(samplesDir, s));
      await waitCounter(page, 'reports', before);
      sameReport(await pageJson(page), cliJson(s), s);
      // A zip is inflated by the second worker while the first parses.
      assert.equal(await page.evaluate(() => window.vllmLens.via), 'two workers', s);
    }
  });
  await check(`${mode}: a bundle that is not a zip comes back whole and loads as before, like the CLI`, async () => {
    // A tar.gz of the same files: the inflating worker hands it back, the
    // main worker reads it alone; the report (digest included) is the CLI's.
    const name = 'two-replicas-rr.tar.gz';
    const tgz = join(tmp, name);
    execFileSync('python3', ['-c', `import sys, zipfile, tarfile, io
z = zipfile.ZipFile(sys.argv[1])
with tarfile.open(sys.argv[2], 'w:gz') as t:
    for i in z.infolist():
        if i.is_dir(): continue
        data = z.read(i)
        info = tarfile.TarInfo(i.filename)
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))`, join(samplesDir, 'two-replicas-rr.zip'), tgz]);
    const json = join(tmp, 'two-replicas-rr.tar.json');
    execFileSync(cli, ['report', name, '--json', json, '-o', join(tmp, 'two-replicas-rr.tar.html')], { cwd: tmp, stdio: 'ignore' });
    const before = await counter(page, 'reports');
    await page.setInputFiles('#input', tgz);
    await waitCounter(page, 'reports', before);
    sameReport(await pageJson(page), JSON.parse(readFileSync(json, 'utf8')), name);
    assert.equal(await page.evaluate(() => window.vllmLens.via), 'one worker');
  });
  await check(`${mode}: every sample through a simulated drop equals the CLI`, async () => {
    for (const s of samples) {
      const before = await counter(page, 'reports');
      await dropFile(page, join(samplesDir, s), s);
      await waitCounter(page, 'reports', before);
      sameReport(await pageJson(page), cliJson(s), s);
    }
  });
  await check(`${mode}: the downloaded report is byte-identical to the CLI's`, async () => {
    const before = await counter(page, 'reports');
    await page.setInputFiles('#input', join(samplesDir, 'a10g-qwen3b-ramp.zip'));
    await waitCounter(page, 'reports', before);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#dl-html')]);
    const saved = join(tmp, `${mode}-report.html`);
    await download.saveAs(saved);
    assert.ok(readFileSync(saved).equals(readFileSync(join(cliDir, 'a10g-qwen3b-ramp.html'))), 'download differs from vllm-lens report');
    // The SHA-256 in that report came from the browser's Web Crypto.
    assert.equal(await page.evaluate(() => window.vllmLens.digestBy), 'webcrypto');
    const [dj] = await Promise.all([page.waitForEvent('download'), page.click('#dl-json')]);
    const savedJson = join(tmp, `${mode}-report.json`);
    await dj.saveAs(savedJson);
    assert.ok(readFileSync(savedJson).equals(readFileSync(join(cliDir, 'a10g-qwen3b-ramp.json'))), 'JSON download differs');
    const shown = await page.$eval('#report', (f) => f.getAttribute('sandbox'));
    assert.equal(shown, '', 'the report iframe is sandboxed with no permission');
  });
  await check(`${mode}: two bundles dropped or picked are compared like the CLI`, async () => {
    for (const p of pairs) {
      const b = join(samplesDir, `${p.before}.zip`);
      const a = join(samplesDir, `${p.after}.zip`);
      const want = cliCompare[`${p.before}.zip|${p.after}.zip`];
      for (const how of ['input', 'drop']) {
        const before = await counter(page, 'reports');
        // Picked in the "wrong" order: the file names decide before/after only
        // when they say so, so the picker gets them before-first here.
        if (how === 'input') await page.setInputFiles('#input', [b, a]);
        else await dropFiles(page, [b, a]);
        await waitCounter(page, 'reports', before);
        const got = await pageJson(page);
        assert.deepEqual(got, JSON.parse(readFileSync(want.json, 'utf8')), `${p.name} (${how})`);
        assert.equal(got.fairness, p.fairness, p.name);
      }
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#dl-html')]);
      const saved = join(tmp, `${mode}-${p.before}-compare.html`);
      await download.saveAs(saved);
      assert.ok(readFileSync(saved).equals(readFileSync(want.html)), `${p.name}: downloaded comparison differs from vllm-lens compare`);
    }
  });
  await check(`${mode}: changing the TTFT objective flips its verdict without re-reading`, async () => {
    const first = await counter(page, 'reports');
    await page.setInputFiles('#input', join(samplesDir, 'a10g-qwen3b-ramp.zip'));
    await waitCounter(page, 'reports', first);
    const loads = await counter(page, 'loads');
    const verdict = async () => (await pageJson(page)).slo.find((s) => s.id === 'ttft_p95').status;
    assert.equal(await verdict(), 'pass');
    let before = await counter(page, 'reports');
    await page.fill('#slo-ttft-p95', '50');
    await page.dispatchEvent('#slo-ttft-p95', 'change');
    await waitCounter(page, 'reports', before);
    assert.equal(await verdict(), 'fail');
    before = await counter(page, 'reports');
    await page.fill('#slo-ttft-p95', '300');
    await page.dispatchEvent('#slo-ttft-p95', 'change');
    await waitCounter(page, 'reports', before);
    assert.equal(await verdict(), 'pass');
    assert.equal(await counter(page, 'loads'), loads, 'the bundle was read again');
  });
  await check(`${mode}: a GPU price adds cost per million tokens, and clearing it removes it`, async () => {
    const cost = async () => (await pageJson(page)).capacity.economics.cost_per_million_generated;
    assert.equal(await cost(), null);
    let before = await counter(page, 'reports');
    await page.fill('#cost', '1.2');
    await page.dispatchEvent('#cost', 'change');
    await waitCounter(page, 'reports', before);
    const priced = await cost();
    assert.ok(priced > 0, `cost per million generated tokens: ${priced}`);
    assert.equal((await pageJson(page)).settings.gpu_hour_cost, 1.2);
    before = await counter(page, 'reports');
    await page.fill('#cost', '');
    await page.dispatchEvent('#cost', 'change');
    await waitCounter(page, 'reports', before);
    assert.equal(await cost(), null);
  });
  await check(`${mode}: "Try the sample" works without any file`, async () => {
    const before = await counter(page, 'reports');
    await page.click('#sample');
    await waitCounter(page, 'reports', before);
    sameReport(await pageJson(page), cliJson('a10g-qwen3b-ramp.zip'), 'sample');
  });
  await check(`${mode}: a corrupt zip shows the error panel`, async () => {
    const bad = join(tmp, 'corrupt.zip');
    writeFileSync(bad, Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(200, 7)]));
    const before = await counter(page, 'errors');
    await page.setInputFiles('#input', bad);
    await waitCounter(page, 'errors', before);
    assert.equal(await page.$eval('#errors', (e) => e.hidden), false);
    assert.match(await page.$eval('#error-message', (e) => e.textContent), /corrupt\.zip/);
    assert.equal(await page.evaluate(() => document.body.dataset.state), 'error');
  });
  await check(`${mode}: a zip with no scrape in it says so, and the next zip loads`, async () => {
    // The two-worker load fails at its last step (the plan found nothing
    // to read): the message reaches the panel and the workers carry on.
    const empty = join(tmp, 'notes.zip');
    execFileSync('python3', ['-c', `import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    z.writestr('notes/readme.txt', 'not a scrape')`, empty]);
    const errors = await counter(page, 'errors');
    await page.setInputFiles('#input', empty);
    await waitCounter(page, 'errors', errors);
    assert.match(await page.$eval('#error-message', (e) => e.textContent), /no scrapes found/);
    const before = await counter(page, 'reports');
    await page.setInputFiles('#input', join(samplesDir, 'a10g-qwen3b-ramp.zip'));
    await waitCounter(page, 'reports', before);
    sameReport(await pageJson(page), cliJson('a10g-qwen3b-ramp.zip'), 'after the empty zip');
  });
  await check(`${mode}: a hostile bundle runs no script of its own and sends nothing`, async () => {
    // Label values, a HELP text and folder names carry <script>, <img
    // onerror> and a console/alert marker (tests/data/hostile/injection.zip).
    const marker = 'VLLM-LENS-PWNED';
    const dialogs = [];
    const seen = [];
    const onDialog = (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); };
    const onConsole = (m) => seen.push(m.text());
    page.on('dialog', onDialog);
    page.on('console', onConsole);
    const requestsBefore = requests.length;
    const before = await counter(page, 'reports');
    await page.setInputFiles('#input', join(root, 'tests/data/hostile/injection.zip'));
    await waitCounter(page, 'reports', before);
    // Give anything planted time to fire inside the report's frame.
    await page.waitForTimeout(500);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    assert.ok(frame, 'the report frame is there');
    const text = await frame.evaluate(() => document.body.innerText).catch(() => null);
    const shown = text ?? await page.evaluate(() => window.vllmLens.rendered.html);
    assert.ok(shown.includes(marker), 'the hostile text is shown as text');
    const elements = await frame.evaluate(() => document.querySelectorAll('script:not([type="application/json"]), img[onerror], [onerror]').length).catch(() => 0);
    assert.equal(elements, 0, 'markup from the bundle became elements');
    page.off('dialog', onDialog);
    page.off('console', onConsole);
    assert.deepEqual(dialogs, [], 'a dialog opened');
    assert.deepEqual(seen.filter((t) => t.includes(marker)), [], 'a script from the bundle ran');
    assert.deepEqual(requests.slice(requestsBefore).filter((u) => !u.startsWith('blob:') && !u.startsWith('data:')), [], 'requests left the page');
  });
  await check(`${mode}: three bad lines give the report and three diagnostics`, async () => {
    const good = readFileSync(join(root, 'tests/data/scrapes/vllm-v1-0.23-2engines.prom'), 'utf8');
    const a = join(tmp, '1767225600000.prom');
    const b = join(tmp, '1767225615000.prom');
    writeFileSync(a, good);
    writeFileSync(b, good.replace('\n', '\nthis is not a sample\n{broken\nvllm:num_requests_running{engine="0" 1\n'));
    const before = await counter(page, 'reports');
    await page.setInputFiles('#input', [a, b]);
    await waitCounter(page, 'reports', before);
    assert.equal(await page.$eval('#errors', (e) => e.hidden), false);
    assert.equal(await page.$$eval('#error-list li', (l) => l.length), 3);
    assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready');
  });
  await check(`${mode}: responsiveness and time to report`, async () => {
    // The instrument works: a deliberate 250 ms busy loop is seen.
    await page.evaluate(() => { setTimeout(() => { const t = performance.now(); while (performance.now() - t < 250) { /* busy */ } }, 0); });
    await page.waitForFunction(() => window.__longTasks.some((d) => d >= 250), null, { timeout: 5000 });
    await page.evaluate(() => { window.__longTasks = []; });
    let before = await counter(page, 'reports');
    await page.setInputFiles('#input', join(samplesDir, 'a10g-qwen3b-ramp.zip'));
    await waitCounter(page, 'reports', before);
    const small = await page.evaluate(() => window.vllmLens.lastSeconds);
    const forecastMs = await page.evaluate(() => window.vllmLens.forecastMs);
    let line = `drop-to-report a10g-qwen3b-ramp: ${small.toFixed(2)} s (the forecast ${(forecastMs / 1000).toFixed(2)} s of it)`;
    if (dayZip) {
      before = await counter(page, 'reports');
      await page.setInputFiles('#input', dayZip);
      await waitCounter(page, 'reports', before, 600000);
      const day = await page.evaluate(() => window.vllmLens.lastSeconds);
      line += `; day: ${day.toFixed(2)} s`;
      if (nativeDaySeconds) line += ` (native ${Number(nativeDaySeconds).toFixed(2)} s, WASM/native ${(day / Number(nativeDaySeconds)).toFixed(2)})`;
    }
    const tasks = await page.evaluate(() => window.__longTasks);
    const longest = tasks.length ? Math.max(...tasks) : 0;
    line += `; longest main-thread task ${longest.toFixed(0)} ms`;
    results.push(`      ${mode}: ${line}`);
    assert.ok(longest <= 200, `a main-thread task took ${longest} ms`);
  });
  await check(`${mode}: nothing left the page`, async () => {
    const outside = requests.filter((u) => {
      if (u.startsWith('blob:') || u.startsWith('data:')) return false;
      return mode === 'served' ? !u.startsWith(`${origin}/index.html`) : u !== url;
    });
    assert.deepEqual(outside, [], 'requests beyond the page itself');
    assert.deepEqual(consoleErrors.filter((e) => /Content Security Policy|Refused/.test(e)), [], 'CSP violations');
  });
  await session.context.close();
}
await check('served: the static server saw only the page', async () => {
  assert.deepEqual([...new Set(served)], ['/index.html']);
});

await browser.close();
server.close();
console.log(results.join('\n'));
if (failures) {
  console.error(`e2e: ${failures} check(s) failed`);
  process.exit(1);
}
console.log('e2e: all checks passed');
