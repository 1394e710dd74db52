// Trunk's post-build step: turns trunk's output (index.html, the
// wasm-bindgen glue and the .wasm) into one self-contained HTML file that
// works from file:// with no request but the document itself: the worker
// script (the glue as wasm-bindgen wrote it for `no-modules`, then
// web/worker.js, neither changed) as inert text the page starts as a
// worker from a Blob, the wasm as base64, the page's script inline. Writes index.html and vllm-lens.html
// in the staging folder and removes the loose .js/.wasm. Fails above 3 MB.
import { readFileSync, writeFileSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) {
  console.error('pack.mjs: TRUNK_STAGING_DIR is not set (run through `trunk build`)');
  process.exit(2);
}
const files = readdirSync(dir);
const glueName = files.find((f) => f.endsWith('.js'));
const wasmName = files.find((f) => f.endsWith('.wasm'));
if (!glueName || !wasmName) {
  console.error(`pack.mjs: no glue or wasm in ${dir}: ${files.join(', ')}`);
  process.exit(2);
}
let html = readFileSync(join(dir, 'index.html'), 'utf8');
// Trunk's own loader: preload links and the module script that fetches.
html = html
  .replace(/<link rel="(modulepreload|preload)"[^>]*>\s*/g, '')
  .replace(/<script type="module"[^>]*>[\s\S]*?<\/script>\s*/g, '');
const glue = readFileSync(join(dir, glueName), 'utf8');
const worker = readFileSync('web/worker.js', 'utf8');
const app = readFileSync('web/app.js', 'utf8');
const wasm = readFileSync(join(dir, wasmName)).toString('base64');
for (const [name, text] of [['glue', glue], ['worker', worker], ['app', app]]) {
  if (/<\/script/i.test(text) || text.includes('<!--')) {
    console.error(`pack.mjs: ${name} contains </script or <!--; it cannot be inlined`);
    process.exit(1);
  }
}
const marker = '<!-- vllm-lens:inline -->';
if (!html.includes(marker)) {
  console.error('pack.mjs: index.html lacks the inline marker');
  process.exit(1);
}
const inline =
  `<script type="text/plain" id="vllm-lens-worker">${glue}\n${worker}</script>\n` +
  `<script type="text/plain" id="vllm-lens-wasm">${wasm}</script>\n` +
  `<script>${app}</script>`;
html = html.replace(marker, () => inline);
if (/https?:|src="\/|href="\//.test(html.replace(/https?:\/\/www\.w3\.org\/2000\/svg/g, ''))) {
  const m = html.match(/.{0,60}(https?:|src="\/|href="\/).{0,60}/);
  console.error(`pack.mjs: the page would reference something outside itself: ${m && m[0]}`);
  process.exit(1);
}
writeFileSync(join(dir, 'index.html'), html);
writeFileSync(join(dir, 'vllm-lens.html'), html);
unlinkSync(join(dir, glueName));
unlinkSync(join(dir, wasmName));
const size = Buffer.byteLength(html);
console.log(`pack.mjs: dist/vllm-lens.html is ${size} bytes (wasm ${wasm.length} base64 chars)`);
// The bench build (scripts/bench.sh: timing hooks and their zip reader,
// never shipped) is not held to the page's budget.
if (size > 3 * 1024 * 1024 && process.env.VLLM_LENS_PAGE_BUDGET !== 'off') {
  console.error('pack.mjs: over the 3 MB budget');
  process.exit(1);
}
