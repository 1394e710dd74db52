// The Web Worker's own code. web/pack.mjs appends it, unchanged, to the
// wasm-bindgen glue, also unchanged: together they form the worker script.
// The glue is wasm-bindgen's `no-modules` output, which defines one global,
// `wasm_bindgen`, with `initSync` and the crate's exports: a classic
// worker, because Chromium refuses a module worker from a Blob on a page
// opened from file:// (tried: the worker fails before its first line). The
// page hands it the wasm (base64) once, then bundles; it keeps the loaded
// bundle in a Session and renders the report for any settings without
// re-reading it.
const { initSync, Session, Inflater, Loading, Hasher, compare_sessions, default_settings, slo_fields, sample_bundle, sample_name, version } = wasm_bindgen;
let vllmLensSession = null;
let vllmLensExports = null; // the wasm instance's exports, from initSync
let vllmLensPair = null;
let vllmLensLoadMs = 0;
let vllmLensDigestBy = null; // 'webcrypto' or 'wasm': who hashed the last bundle
let vllmLensPort = null; // to the inflating worker (the main worker's side), when the page started one
let vllmLensInflaterBytes = 0; // the inflating worker's WebAssembly memory after the last zip
let vllmLensVia = null; // 'two workers' or 'one worker': how the last bundle was read
let vllmLensLoadSeq = 0;
let vllmLensRendered = null; // the last report, kept for its JSON until the next

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
    type: 'report', html: r.html, ms: performance.now() - t0, forecastMs: r.forecast_ms,
    wasmBytes: vllmLensExports.memory.buffer.byteLength,
    inflaterBytes: vllmLensInflaterBytes,
    via: vllmLensVia,
    loadMs: vllmLensLoadMs,
    digestBy: vllmLensDigestBy,
  });
  // The Markdown (small) follows the report on screen; the JSON model
  // (every window of every table: 156 MB of text for a fleet-day, the
  // largest step of the page's memory) is made only when asked for.
  self.postMessage({ type: 'extras', markdown: r.markdown });
  vllmLensForget();
  vllmLensRendered = r;
}

function vllmLensJsonBlob(r) {
  const parts = [];
  r.json_parts((piece) => { parts.push(piece); });
  return new Blob(parts, { type: 'application/json' });
}

function vllmLensForget() {
  if (vllmLensRendered) vllmLensRendered.free();
  vllmLensRendered = null;
}

// Runs the built-in sample through load, analysis and rendering once and
// throws the result away. V8 first runs WebAssembly from a baseline
// compiler and optimises a function only after it has run a while; doing
// that on the sample while the page starts (≈ 0.17 s in the main worker,
// 0.07 s in the inflating one, off the page's thread) saves about as much
// on the first real bundle (docs/performance.md). The load takes the
// two-worker path's code (Inflater, Loading), which a dropped zip runs;
// the inflating worker warms only that half.
function vllmLensWarmUp(report) {
  try {
    // The sample through the same two halves a dropped zip takes (here in
    // one worker), then, in the main worker, its report and downloads.
    const bytes = sample_bundle();
    const inf = new Inflater(sample_name(), bytes.length, (pos, len) => bytes.subarray(pos, pos + len));
    const loading = new Loading(sample_name(), inf.listing());
    const pass = (order) => {
      inf.set_order(order);
      for (let b = inf.next_batch(VLLM_LENS_BATCH); b; b = inf.next_batch(VLLM_LENS_BATCH)) {
        const data = b.take_bytes();
        loading.feed(b.take_indices(), b.take_ends(), data, b.errors());
        b.free();
      }
    };
    const mi = loading.manifest_member();
    if (mi !== undefined) pass(new Uint32Array([mi]));
    pass(loading.order());
    inf.free();
    const s = loading.finish();
    if (report) {
      const r = s.report('{}');
      void r.html;
      void r.markdown;
      void vllmLensJsonBlob(r);
      r.free();
    }
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
  vllmLensVia = 'one worker';
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

// A zip dropped on the page, read by two workers at once (web/src/split.rs):
// the inflating worker holds the file, lists it and sends its members
// inflated, in batches of about 4 MiB; this worker parses each batch as it
// comes. At most 32 MiB of batches are in flight, so neither side holds
// more than that of text. Resolves to the Session; a bundle that is not a
// zip comes back whole and loads as before.
const VLLM_LENS_BATCH = 4 << 20;
const VLLM_LENS_IN_FLIGHT = 32 << 20;

function vllmLensLoadZip(name, file) {
  const port = vllmLensPort;
  const seq = ++vllmLensLoadSeq;
  return new Promise((resolve, reject) => {
    let loading = null;
    let phase = 'listing';
    let fed = 0;
    let total = 0;
    let lastProgress = 0;
    const fail = (err) => {
      port.onmessage = null;
      port.postMessage({ type: 'cancel', seq });
      if (loading) loading.free();
      loading = null;
      reject(err);
    };
    const files = () => {
      phase = 'files';
      const order = loading.order();
      total = order.length;
      port.postMessage({ type: 'read', seq, order, last: true, budget: VLLM_LENS_BATCH, inFlight: VLLM_LENS_IN_FLIGHT }, [order.buffer]);
    };
    port.onmessage = (event) => {
      const r = event.data;
      if (r.seq !== seq) return;
      try {
        if (r.type === 'listing') {
          loading = new Loading(name, r.listing);
          const mi = loading.manifest_member();
          if (mi === undefined) {
            files();
          } else {
            phase = 'manifest';
            port.postMessage({ type: 'read', seq, order: new Uint32Array([mi]), last: false, budget: VLLM_LENS_BATCH, inFlight: VLLM_LENS_IN_FLIGHT });
          }
        } else if (r.type === 'batch') {
          loading.feed(r.indices, r.ends, r.bytes, r.errors);
          port.postMessage({ type: 'ack', seq, bytes: r.bytes.byteLength });
          if (phase === 'files') {
            fed += r.indices.length;
            const now = performance.now();
            if (now - lastProgress > 100) {
              lastProgress = now;
              self.postMessage({ type: 'progress', done: fed, total });
            }
          }
        } else if (r.type === 'done') {
          if (phase === 'manifest') {
            files();
            return;
          }
          port.onmessage = null;
          vllmLensInflaterBytes = r.wasmBytes;
          // finish() consumes the Loading, even when it throws (a zip
          // with no scrape in it): never free it again.
          const done = loading;
          loading = null;
          const session = done.finish();
          vllmLensDigestBy = r.sha256 && session.set_sha256(r.sha256) ? r.digestBy : null;
          vllmLensVia = 'two workers';
          resolve(session);
        } else if (r.type === 'not-zip') {
          port.onmessage = null;
          resolve(vllmLensLoad(name, new Uint8Array(r.buffer)));
        } else if (r.type === 'fatal') {
          const err = new Error(r.message);
          err.restart = r.restart;
          fail(err);
        }
      } catch (err) {
        fail(err);
      }
    };
    port.postMessage({ type: 'open', seq, name, file });
  });
}

// The inflating worker's side: one bundle at a time, a batch at a time,
// waiting for acknowledgements when the main worker falls behind.
const vllmLensInflating = { seq: 0, inflater: null, source: null, inFlight: 0, wake: null, digest: null };

function vllmLensInflaterMessage(port, m) {
  const st = vllmLensInflating;
  if (m.type === 'ack') {
    if (m.seq === st.seq) st.inFlight -= m.bytes;
    if (st.wake) { const w = st.wake; st.wake = null; w(); }
  } else if (m.type === 'cancel') {
    if (m.seq === st.seq) vllmLensInflaterClose();
    if (st.wake) { const w = st.wake; st.wake = null; w(); }
  } else if (m.type === 'open') {
    vllmLensInflaterClose();
    st.seq = m.seq;
    vllmLensInflaterOpen(port, m).catch((err) => vllmLensInflaterFailed(port, m, err));
  } else if (m.type === 'read') {
    vllmLensInflaterRead(port, m).catch((err) => vllmLensInflaterFailed(port, m, err));
  }
}

// A bundle that cannot be read stops its load; a trap in WebAssembly (out
// of memory) also asks the page for fresh workers.
function vllmLensInflaterFailed(port, m, err) {
  vllmLensInflaterClose();
  port.postMessage({ type: 'fatal', seq: m.seq, message: String((err && err.message) || err), restart: err instanceof WebAssembly.RuntimeError });
}

function vllmLensInflaterClose() {
  const st = vllmLensInflating;
  if (st.inflater) st.inflater.free();
  st.inflater = null;
  st.source = null;
  st.digest = null;
  st.inFlight = 0;
}

// The dropped file, read whole by the browser in the background; until
// then, the inflater's first reads (the zip's directory at its end, the
// manifest at its start) come from 16 MiB slices read on demand, so the
// listing and the plan overlap the read. Then every read comes from the
// whole copy, and the slices go.
function vllmLensFileSource(file) {
  const CHUNK = 16 << 20;
  const src = { full: null, chunks: new Map(), reader: new FileReaderSync() };
  const chunk = (k) => {
    let c = src.chunks.get(k);
    if (!c) {
      c = new Uint8Array(src.reader.readAsArrayBuffer(file.slice(k * CHUNK, Math.min(file.size, (k + 1) * CHUNK))));
      src.chunks.set(k, c);
    }
    return c;
  };
  src.read = (pos, len) => {
    if (src.full) return src.full.subarray(pos, pos + len);
    const end = Math.min(pos + len, file.size);
    const k = Math.floor(pos / CHUNK);
    if (end <= (k + 1) * CHUNK) return chunk(k).subarray(pos - k * CHUNK, end - k * CHUNK);
    const out = new Uint8Array(end - pos);
    for (let at = pos; at < end;) {
      const c = chunk(Math.floor(at / CHUNK));
      const off = at % CHUNK;
      const n = Math.min(c.length - off, end - at);
      out.set(c.subarray(off, off + n), at - pos);
      at += n;
    }
    return out;
  };
  src.whole = file.arrayBuffer().then((buffer) => {
    src.full = new Uint8Array(buffer);
    src.chunks.clear();
    return buffer;
  });
  return src;
}

async function vllmLensInflaterOpen(port, m) {
  const st = vllmLensInflating;
  const src = vllmLensFileSource(m.file);
  const head = src.read(0, 4);
  const zip = head.length === 4 && head[0] === 0x50 && head[1] === 0x4b && (head[2] === 3 || head[2] === 5) && (head[3] === 4 || head[3] === 6);
  if (!zip) {
    const buffer = await src.whole;
    if (st.seq !== m.seq) return;
    src.full = null;
    port.postMessage({ type: 'not-zip', seq: m.seq, buffer }, [buffer]);
    return;
  }
  st.source = src;
  // The digest: Web Crypto's, on its own thread, once the file is read
  // whole; else here, in slices, after the members.
  st.digest = src.whole.then((buffer) => {
    const webcrypto = vllmLensDigest(buffer);
    return webcrypto ? webcrypto.then((hex) => hex && { hex, by: 'webcrypto' }) : null;
  });
  st.inflater = new Inflater(m.name, m.file.size, src.read);
  port.postMessage({ type: 'listing', seq: m.seq, listing: st.inflater.listing() });
}

async function vllmLensInflaterRead(port, m) {
  const st = vllmLensInflating;
  if (st.seq !== m.seq || !st.inflater) return;
  // The members proper wait for the file in memory: reading it in slices
  // here while the browser reads it whole would read it twice.
  if (m.last) await st.source.whole;
  if (st.seq !== m.seq || !st.inflater) return;
  st.inflater.set_order(m.order);
  for (;;) {
    while (st.inFlight > m.inFlight && st.seq === m.seq && st.inflater) {
      await new Promise((wake) => { st.wake = wake; });
    }
    if (st.seq !== m.seq || !st.inflater) return;
    const batch = st.inflater.next_batch(m.budget);
    if (!batch) break;
    const bytes = batch.take_bytes();
    const msg = { type: 'batch', seq: m.seq, indices: batch.take_indices(), ends: batch.take_ends(), bytes, errors: batch.errors() };
    batch.free();
    st.inFlight += bytes.byteLength;
    // Acknowledgements (and a cancel) are read while this waits above.
    port.postMessage(msg, [bytes.buffer, msg.indices.buffer, msg.ends.buffer]);
  }
  let digest = null;
  if (m.last) {
    if (st.digest) digest = await st.digest;
    if (st.seq !== m.seq || !st.inflater) return;
    if (!digest) {
      const whole = st.source.full || new Uint8Array(await st.source.whole);
      if (st.seq !== m.seq || !st.inflater) return;
      const h = new Hasher();
      for (let at = 0; at < whole.length; at += 8 << 20) h.update(whole.subarray(at, at + (8 << 20)));
      digest = { hex: h.hex(), by: 'wasm' };
    }
  }
  const wasmBytes = vllmLensExports.memory.buffer.byteLength;
  if (m.last) vllmLensInflaterClose();
  port.postMessage({ type: 'done', seq: m.seq, sha256: digest && digest.hex, digestBy: digest && digest.by, wasmBytes });
}

function vllmLensFree() {
  vllmLensForget();
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
    if (m.type === 'init' && m.role === 'inflater') {
      // The inflating worker: it only reads zips for the main worker.
      vllmLensExports = initSync({ module: vllmLensDecode(m.wasm) });
      m.port.onmessage = (e) => vllmLensInflaterMessage(m.port, e.data);
      vllmLensWarmUp(false);
      self.postMessage({ type: 'ready', role: 'inflater' });
    } else if (m.type === 'init') {
      vllmLensExports = initSync({ module: vllmLensDecode(m.wasm) });
      vllmLensPort = m.port || null;
      vllmLensWarmUp(true);
      self.postMessage({ type: 'ready', version: version(), sample: sample_name(), defaults: JSON.parse(default_settings()), slos: JSON.parse(slo_fields()) });
    } else if (m.type === 'load-bytes') {
      vllmLensReplace(await vllmLensLoad(m.name, new Uint8Array(m.buffer)));
      vllmLensLoadMs = performance.now() - t0;
      vllmLensRender(m, t0);
    } else if (m.type === 'load-file') {
      // Sent only once the inflating worker is ready (web/app.js).
      vllmLensReplace(await vllmLensLoadZip(m.name, m.file));
      vllmLensLoadMs = performance.now() - t0;
      vllmLensRender(m, t0);
    } else if (m.type === 'load-files') {
      vllmLensVia = 'one worker';
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
      vllmLensVia = 'one worker';
      vllmLensReplace(new Session(sample_name(), sample_bundle()));
      vllmLensRender(m, t0);
    } else if (m.type === 'json') {
      // In 1 MiB pieces made into a Blob: the model is never one string
      // in WebAssembly memory (156 MB of JSON for a fleet-day).
      if (vllmLensRendered) self.postMessage({ type: 'json', json: vllmLensJsonBlob(vllmLensRendered) });
    } else if (m.type === 'render') {
      if (vllmLensSession || vllmLensPair) vllmLensRender(m, t0);
    }
  } catch (err) {
    self.postMessage({ type: 'error', message: String((err && err.message) || err), fatal: err instanceof WebAssembly.RuntimeError || Boolean(err && err.restart) });
  }
}
