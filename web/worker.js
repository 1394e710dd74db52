// The Web Worker's own code. web/pack.mjs appends it, unchanged, to the
// wasm-bindgen glue, also unchanged: together they form the worker script.
// The glue is wasm-bindgen's `no-modules` output, which defines one global,
// `wasm_bindgen`, with `initSync` and the crate's exports: a classic
// worker, because Chromium refuses a module worker from a Blob on a page
// opened from file:// (tried: the worker fails before its first line). The
// page hands it the wasm (base64) once, then bundles; it keeps the loaded
// bundle in a Session and renders the report for any settings without
// re-reading it.
const { initSync, Session, compare_sessions, default_settings, sample_bundle, sample_name, version } = wasm_bindgen;
let vllmLensSession = null;
let vllmLensExports = null; // the wasm instance's exports, from initSync
let vllmLensPair = null;
let vllmLensLoadMs = 0;
let vllmLensDigestBy = null; // 'webcrypto' or 'wasm': who hashed the last bundle

function vllmLensDecode(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function vllmLensRender(options, t0) {
  const settings = JSON.stringify(options.settings);
  const r = vllmLensPair
    ? compare_sessions(vllmLensPair[0], vllmLensPair[1], settings)
    : vllmLensSession.report(settings);
  self.postMessage({
    type: 'report', html: r.html, ms: performance.now() - t0,
    wasmBytes: vllmLensExports.memory.buffer.byteLength,
    loadMs: vllmLensLoadMs,
    digestBy: vllmLensDigestBy,
  });
  // The downloads' other formats follow the report on screen.
  const extras = { type: 'extras', markdown: r.markdown, json: r.json };
  r.free();
  self.postMessage(extras);
}

// Runs the built-in sample through load, analysis and rendering once and
// throws the result away. V8 first runs WebAssembly from a baseline
// compiler and optimises a function only after it has run a while; doing
// that on the sample while the page starts (≈ 0.15 s, in this worker, off
// the page's thread) saves about as much on the first real bundle
// (docs/performance.md).
function vllmLensWarmUp() {
  try {
    const s = Session.unhashed(sample_name(), sample_bundle());
    const r = s.report('{}');
    void r.html;
    void r.markdown;
    void r.json;
    r.free();
    s.free();
  } catch (_) {
    // A failure here shows again, with its message, on the first real load.
  }
}

// SHA-256 of a bundle by the browser's Web Crypto, which hashes on its own
// thread while the bundle loads here; null where it is unavailable (the
// core then hashes in WebAssembly).
function vllmLensDigest(bytes) {
  try {
    if (!self.crypto || !self.crypto.subtle) return null;
    return self.crypto.subtle.digest('SHA-256', bytes).then(
      (d) => Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, '0')).join(''),
      () => null);
  } catch (_) {
    return null;
  }
}

async function vllmLensLoad(name, bytes) {
  const digest = vllmLensDigest(bytes);
  const session = Session.unhashed(name, bytes);
  const hex = digest ? await digest : null;
  if (hex && session.set_sha256(hex)) {
    vllmLensDigestBy = 'webcrypto';
  } else {
    session.hash(bytes);
    vllmLensDigestBy = 'wasm';
  }
  return session;
}

function vllmLensFree() {
  if (vllmLensSession) vllmLensSession.free();
  if (vllmLensPair) { vllmLensPair[0].free(); vllmLensPair[1].free(); }
  vllmLensSession = null;
  vllmLensPair = null;
}

function vllmLensReplace(session) {
  vllmLensFree();
  vllmLensSession = session;
  self.postMessage({ type: 'loaded', diagnostics: session.diagnostics() });
}

// Messages are handled one at a time, in order, though loading awaits the
// digest: a second drop never interleaves with the first.
let vllmLensQueue = Promise.resolve();
self.onmessage = (event) => {
  vllmLensQueue = vllmLensQueue.then(() => vllmLensHandle(event));
};

async function vllmLensHandle(event) {
  const m = event.data;
  const t0 = performance.now();
  try {
    if (m.type === 'init') {
      vllmLensExports = initSync({ module: vllmLensDecode(m.wasm) });
      vllmLensWarmUp();
      self.postMessage({ type: 'ready', version: version(), sample: sample_name(), defaults: JSON.parse(default_settings()) });
    } else if (m.type === 'load-bytes') {
      vllmLensReplace(await vllmLensLoad(m.name, new Uint8Array(m.buffer)));
      vllmLensLoadMs = performance.now() - t0;
      vllmLensRender(m, t0);
    } else if (m.type === 'load-files') {
      vllmLensReplace(Session.from_files(m.name, m.paths, m.buffers.map((b) => new Uint8Array(b))));
      vllmLensRender(m, t0);
    } else if (m.type === 'load-pair') {
      const a = await vllmLensLoad(m.names[0], new Uint8Array(m.buffers[0]));
      const b = await vllmLensLoad(m.names[1], new Uint8Array(m.buffers[1]));
      vllmLensFree();
      vllmLensPair = [a, b];
      const diags = JSON.parse(a.diagnostics()).concat(JSON.parse(b.diagnostics()));
      self.postMessage({ type: 'loaded', diagnostics: JSON.stringify(diags) });
      vllmLensRender(m, t0);
    } else if (m.type === 'sample') {
      vllmLensReplace(new Session(sample_name(), sample_bundle()));
      vllmLensRender(m, t0);
    } else if (m.type === 'render') {
      if (vllmLensSession || vllmLensPair) vllmLensRender(m, t0);
    }
  } catch (err) {
    self.postMessage({ type: 'error', message: String((err && err.message) || err), fatal: err instanceof WebAssembly.RuntimeError });
  }
}
