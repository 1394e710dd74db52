// The page: drop zone, file pickers, settings, the report in a sandboxed
// iframe, downloads. All analysis runs in a Web Worker built from inline
// sources; nothing is fetched and nothing is sent anywhere.
(() => {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const state = { worker: null, rendered: null, name: null, pending: null, started: 0, frameUrl: null };
  window.vllmLens = state; // a handle for the browser tests

  const setState = (s) => { document.body.dataset.state = s; };
  const status = (text) => { $('status').textContent = text; };
  const progress = (done, total) => {
    const p = $('progress');
    if (total > 0) { p.max = total; p.value = done; } else { p.removeAttribute('value'); }
  };
  const mb = (n) => (n / 1048576).toFixed(n < 10485760 ? 1 : 0) + ' MiB';

  // The form's fields and where each sits in the core's Settings (JSON);
  // the objectives' inputs are built from the core's registry and the
  // defaults come from the core, both when the worker is ready.
  const FIELDS = [
    ['window', ['window_ms']],
  ];

  // One input per objective of the core's registry: id `slo-NAME` (the
  // `--slo` name), its label, its unit's step.
  function buildSloFields(slos) {
    const box = $('slo-fields');
    if (state.sloBuilt || !slos) return;
    state.sloBuilt = true;
    for (const s of slos) {
      const label = document.createElement('label');
      label.title = s.meaning;
      label.append(s.label + ' ');
      const input = document.createElement('input');
      input.id = 'slo-' + s.name;
      input.type = 'number';
      input.min = s.unit === 'percent' ? '0' : '1';
      input.step = s.unit === 'requests' ? '1' : 'any';
      label.appendChild(input);
      box.appendChild(label);
      FIELDS.push([input.id, ['slo', s.field]]);
    }
  }

  // Once, when the worker first starts (a restarted worker keeps what the
  // user typed).
  function fillDefaults(defaults) {
    if (state.filled) return;
    state.filled = true;
    for (const [id, path] of FIELDS) {
      const v = path.reduce((o, k) => (o == null ? o : o[k]), defaults);
      if (v != null) $(id).value = String(v);
    }
  }

  // What the worker is asked for: the settings (a field left empty takes
  // the core's default; optional facts left empty are "not given").
  function request() {
    const settings = { slo: {} };
    for (const [id, path] of FIELDS) {
      const v = optional(id);
      if (v === null) continue;
      if (path.length === 1) settings[path[0]] = v; else settings[path[0]][path[1]] = v;
    }
    settings.gpu_hour_cost = optional('cost');
    settings.shared_prefix_tokens = optional('prefix');
    const gb = optional('weights');
    settings.model_bytes = gb === null ? null : gb * 1e9;
    return { settings };
  }

  function optional(id) {
    const v = $(id).value.trim();
    return v === '' || !Number.isFinite(Number(v)) ? null : Number(v);
  }

  function startWorker() {
    if (state.worker) state.worker.terminate();
    if (state.inflater) state.inflater.terminate();
    // The worker script (the wasm-bindgen glue and web/worker.js, as
    // web/pack.mjs put them together) runs from a Blob: the page is one
    // file, and works from file://. Two workers run it: the main one loads
    // bundles and renders reports; the inflating one reads a dropped zip
    // and inflates its members for the main one, on the second core
    // (web/src/split.rs), over a channel of their own.
    const source = $('vllm-lens-worker').textContent;
    const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
    const w = new Worker(url);
    let inflater = null;
    try { inflater = new Worker(url); } catch (_) { inflater = null; }
    URL.revokeObjectURL(url);
    const channel = inflater ? new MessageChannel() : null;
    w.onmessage = onMessage;
    // A worker that failed after it was ready is started again; one that
    // cannot start at all is not (that would loop), and the page says so.
    w.onerror = (e) => {
      showError(e.message || 'the analysis stopped unexpectedly', []);
      if (state.ready) { startWorker(); } else { status('The analysis engine could not start in this browser.'); setState('error'); }
    };
    state.ready = false;
    state.inflaterReady = false;
    const wasm = $('vllm-lens-wasm').textContent.trim();
    w.postMessage({ type: 'init', wasm, port: channel && channel.port1 }, channel ? [channel.port1] : []);
    state.worker = w;
    state.inflater = inflater;
    if (inflater) {
      // Without it (it failed to start), zips are read here and loaded by
      // the main worker alone, as other bundles are.
      inflater.onmessage = (e) => { if (e.data.type === 'ready') state.inflaterReady = true; };
      inflater.onerror = (e) => {
        if (!state.inflaterReady) return;
        showError(e.message || 'the analysis stopped unexpectedly', []);
        startWorker();
      };
      inflater.postMessage({ type: 'init', role: 'inflater', wasm, port: channel.port2 }, [channel.port2]);
    }
  }

  function showError(message, diagnostics) {
    const panel = $('errors');
    panel.hidden = false;
    $('error-message').textContent = message || '';
    const list = $('error-list');
    list.textContent = '';
    for (const d of diagnostics) {
      const li = document.createElement('li');
      li.textContent = d.file + (d.line ? ':' + d.line : '') + ': ' + d.message;
      li.className = 'diag ' + d.severity;
      list.appendChild(li);
    }
    $('error-count').textContent = diagnostics.length ? diagnostics.length + ' problem(s) in the bundle; the rest was analysed.' : '';
  }

  function onMessage(event) {
    const m = event.data;
    if (m.type === 'ready') {
      $('version').textContent = 'vLLM Lens ' + m.version;
      state.defaults = m.defaults;
      state.sampleName = m.sample;
      buildSloFields(m.slos);
      fillDefaults(m.defaults);
      state.ready = true;
      if (document.body.dataset.state === 'starting') setState('idle');
      if (state.pending) { const p = state.pending; state.pending = null; p(); }
    } else if (m.type === 'loaded') {
      const diags = JSON.parse(m.diagnostics);
      state.diagnostics = diags;
      state.loads = (state.loads || 0) + 1;
      $('errors').hidden = true;
      if (diags.length) showError('', diags);
      status('Analysing…');
    } else if (m.type === 'report') {
      state.rendered = { html: m.html, json: null, markdown: null };
      state.reports = (state.reports || 0) + 1;
      state.wasmBytes = m.wasmBytes;
      state.inflaterBytes = m.inflaterBytes;
      state.via = m.via;
      state.loadMs = m.loadMs;
      state.digestBy = m.digestBy;
      state.analysisMs = m.ms;
      state.forecastMs = m.forecastMs;
      const frame = $('report');
      if (state.frameUrl) URL.revokeObjectURL(state.frameUrl);
      state.frameUrl = URL.createObjectURL(new Blob([m.html], { type: 'text/html' }));
      frame.src = state.frameUrl;
      frame.hidden = false;
      $('dl-html').disabled = false;
      for (const id of ['dl-json', 'copy-md']) $(id).disabled = true;
      const secs = (performance.now() - state.started) / 1000;
      state.lastSeconds = secs;
      status(state.name + ': report ready in ' + secs.toFixed(2) + ' s (analysis ' + (m.ms / 1000).toFixed(2) + ' s' + (m.forecastMs ? ', of which the forecast ' + (m.forecastMs / 1000).toFixed(2) + ' s' : '') + ')');
      progress(1, 1);
      setState('ready');
    } else if (m.type === 'progress') {
      progress(m.done, m.total);
      status('Reading ' + state.name + ': ' + m.done + ' of ' + m.total + ' files');
    } else if (m.type === 'extras') {
      // The Markdown follows the report by a moment; the JSON model comes
      // when asked for (withJson).
      if (state.rendered) {
        state.rendered.markdown = m.markdown;
        for (const id of ['dl-json', 'copy-md']) $(id).disabled = false;
      }
    } else if (m.type === 'json') {
      if (state.rendered) {
        state.rendered.json = m.json;
        const then = state.afterJson;
        state.afterJson = null;
        if (then) then();
      }
    } else if (m.type === 'error') {
      state.errors = (state.errors || 0) + 1;
      showError(m.message, []);
      status('Could not analyse ' + (state.name || 'the input'));
      progress(0, 1);
      setState('error');
      if (m.fatal) startWorker();
    }
  }

  function run(message, transfer) {
    setState('loading');
    const go = () => state.worker.postMessage(Object.assign(request(), message), transfer || []);
    if (!state.ready) state.pending = go; else go();
  }

  async function readFile(file, onBytes) {
    const buf = new Uint8Array(file.size);
    let at = 0;
    const reader = file.stream().getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf.set(value, at);
      at += value.length;
      onBytes(value.length);
    }
    return buf.buffer;
  }

  async function load(files) {
    // files: [{file, path}]
    if (!files.length) return;
    state.started = performance.now();
    setState('loading');
    $('errors').hidden = true;
    if (files.length === 1 && !files[0].path.includes('/') && state.inflaterReady) {
      // One file: the inflating worker reads it (a zip is inflated there
      // while the main worker parses; anything else comes back whole).
      state.name = files[0].file.name;
      status('Reading ' + state.name + '…');
      progress(0, 0);
      run({ type: 'load-file', name: state.name, file: files[0].file });
      return;
    }
    const total = files.reduce((n, f) => n + f.file.size, 0);
    let read = 0;
    let count = 0;
    const tick = (n) => { read += n; progress(read, total); status('Read ' + mb(read) + ' of ' + mb(total) + ' (' + count + ' of ' + files.length + ' files)'); };
    const buffers = [];
    for (const f of files) {
      buffers.push(await readFile(f.file, tick));
      count += 1;
      tick(0);
    }
    status('Analysing…');
    progress(0, 0);
    const archive = /\.(zip|tar\.gz|tgz|tar)$/i;
    if (files.length === 2 && files.every((f) => archive.test(f.file.name) && !f.path.includes('/'))) {
      // Two bundles: before and after. A name saying "before" or "after"
      // decides the order; otherwise the first is before.
      let order = [0, 1];
      if (/after/i.test(files[0].file.name) || /before/i.test(files[1].file.name)) order = [1, 0];
      const names = order.map((i) => files[i].file.name);
      const bufs = order.map((i) => buffers[i]);
      state.name = 'comparison';
      status('Comparing ' + names[0] + ' (before) with ' + names[1] + ' (after)…');
      run({ type: 'load-pair', names, buffers: bufs }, bufs);
    } else if (files.length === 1 && !files[0].path.includes('/')) {
      state.name = files[0].file.name;
      run({ type: 'load-bytes', name: state.name, buffer: buffers[0] }, [buffers[0]]);
    } else {
      const top = files[0].path.split('/')[0];
      state.name = files[0].path.includes('/') ? top : files.length + ' files';
      run({ type: 'load-files', name: state.name, paths: files.map((f) => f.path), buffers }, buffers);
    }
  }

  async function entries(entry, prefix, out) {
    if (entry.isFile) {
      const file = await new Promise((ok, ko) => entry.file(ok, ko));
      out.push({ file, path: prefix + entry.name });
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((ok, ko) => reader.readEntries(ok, ko));
        if (!batch.length) break;
        for (const e of batch) await entries(e, prefix + entry.name + '/', out);
      }
    }
  }

  async function onDrop(e) {
    e.preventDefault();
    $('drop').classList.remove('over');
    const items = [...(e.dataTransfer.items || [])];
    const out = [];
    const withEntries = items.map((i) => i.webkitGetAsEntry && i.webkitGetAsEntry()).filter(Boolean);
    if (withEntries.length && withEntries.some((x) => x.isDirectory)) {
      for (const en of withEntries) await entries(en, '', out);
    } else {
      for (const f of e.dataTransfer.files) out.push({ file: f, path: f.name });
    }
    load(out);
  }

  // The report's JSON model is made in the worker only when wanted: for a
  // large bundle it is the largest thing the page would hold.
  function withJson(then) {
    if (!state.rendered) return;
    if (state.rendered.json) { then(); return; }
    state.afterJson = then;
    state.worker.postMessage({ type: 'json' });
  }
  state.requestJson = () => withJson(() => {});

  // `what` is text or a Blob (the JSON comes from the worker as one).
  function download(what, name, type) {
    const a = document.createElement('a');
    a.href = URL.createObjectURL(what instanceof Blob ? what : new Blob([what], { type }));
    a.download = name;
    document.body.appendChild(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }
  const base = () => (state.name || 'bundle').replace(/\.(zip|tar\.gz|tgz|tar|gz)$/i, '');

  window.addEventListener('DOMContentLoaded', () => {
    setState('starting');
    const drop = $('drop');
    drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
    drop.addEventListener('dragleave', () => drop.classList.remove('over'));
    drop.addEventListener('drop', onDrop);
    $('input').addEventListener('change', (e) => load([...e.target.files].map((f) => ({ file: f, path: f.name }))));
    $('folder').addEventListener('change', (e) => load([...e.target.files].map((f) => ({ file: f, path: f.webkitRelativePath || f.name }))));
    $('sample').addEventListener('click', () => { state.started = performance.now(); state.name = state.sampleName; status('Analysing the sample…'); run({ type: 'sample' }); });
    $('settings').addEventListener('change', () => { if (state.rendered) { state.started = performance.now(); setState('loading'); state.worker.postMessage(Object.assign(request(), { type: 'render' })); } });
    $('settings').addEventListener('submit', (e) => e.preventDefault());
    $('dl-html').addEventListener('click', () => download(state.rendered.html, base() + '.report.html', 'text/html'));
    $('dl-json').addEventListener('click', () => withJson(() => download(state.rendered.json, base() + '.report.json', 'application/json')));
    $('copy-md').addEventListener('click', async () => {
      try { await navigator.clipboard.writeText(state.rendered.markdown); status('Markdown copied.'); }
      catch (_) { download(state.rendered.markdown, base() + '.report.md', 'text/markdown'); }
    });
    startWorker();
  });
})();
