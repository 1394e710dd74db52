// The Web Worker's own code, appended to the wasm-bindgen glue (with its
// `export` keywords removed) to form the worker script. The page hands it
// the wasm (base64) once, then bundles; it keeps the loaded bundle in a
// Session and renders the report for any settings without re-reading it.
let vllmLensSession = null;
let vllmLensPair = null;
let vllmLensLoadMs = 0;

function vllmLensDecode(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function vllmLensRender(settings, t0) {
  const r = vllmLensPair
    ? compare_sessions(vllmLensPair[0], vllmLensPair[1], JSON.stringify(settings))
    : vllmLensSession.report(JSON.stringify(settings));
  const msg = {
    type: 'report', html: r.html, markdown: r.markdown, json: r.json, ms: performance.now() - t0,
    wasmBytes: wasm.memory.buffer.byteLength,
    loadMs: vllmLensLoadMs,
  };
  r.free();
  self.postMessage(msg);
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

self.onmessage = (event) => {
  const m = event.data;
  const t0 = performance.now();
  try {
    if (m.type === 'init') {
      initSync({ module: vllmLensDecode(m.wasm) });
      self.postMessage({ type: 'ready', version: version() });
    } else if (m.type === 'load-bytes') {
      vllmLensReplace(new Session(m.name, new Uint8Array(m.buffer)));
      vllmLensLoadMs = performance.now() - t0;
      vllmLensRender(m.settings, t0);
    } else if (m.type === 'load-files') {
      vllmLensReplace(Session.from_files(m.name, m.paths, m.buffers.map((b) => new Uint8Array(b))));
      vllmLensRender(m.settings, t0);
    } else if (m.type === 'load-pair') {
      const a = new Session(m.names[0], new Uint8Array(m.buffers[0]));
      const b = new Session(m.names[1], new Uint8Array(m.buffers[1]));
      vllmLensFree();
      vllmLensPair = [a, b];
      const diags = JSON.parse(a.diagnostics()).concat(JSON.parse(b.diagnostics()));
      self.postMessage({ type: 'loaded', diagnostics: JSON.stringify(diags) });
      vllmLensRender(m.settings, t0);
    } else if (m.type === 'sample') {
      vllmLensReplace(new Session(sample_name(), sample_bundle()));
      vllmLensRender(m.settings, t0);
    } else if (m.type === 'render') {
      if (vllmLensSession || vllmLensPair) vllmLensRender(m.settings, t0);
    }
  } catch (err) {
    self.postMessage({ type: 'error', message: String((err && err.message) || err), fatal: err instanceof WebAssembly.RuntimeError });
  }
};
