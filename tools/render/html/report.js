// report.js: the page of report.html. Reads the model (the JSON in #fl-data, tools/analyze/html_model.h)
// and draws the linked views: tables, flame graph, heatmap over the counter timeline, MRC. Plain DOM,
// canvas and SVG; no library.
(function () {
  'use strict';
  const D = JSON.parse(document.getElementById('fl-data').textContent);
  const G = D.grid, N = D.names, K = ['', 'first-touch', 'refault', 'soft', 'concurrent', 'access'];
  const ngroups = D.groups.length;
  const state = { kind: (D.kinds & 30) || !(D.kinds & 32) ? 0 : 5, brush: null, sel: null, tab: 0, sortCol: 1, sortDesc: true, zoom: null, t0: 0, t1: Math.max(1, G.cols) };
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
  const fmt = (n) => n.toLocaleString('en-US');
  $('title').textContent = D.title;
  $('header').textContent = D.header;
  // an empty selection (no fault of the selected kinds, or none with a time on this axis): the
  // page's message (html_report.c) under the header, and no empty grid, tables or flame graph
  const EMPTY = !D.cells.length;
  if (EMPTY) {
    $('notes').after($('empty'));
    ['controls', 'heat', 'tables', 'flame'].forEach((id) => { $(id).style.display = 'none'; });
  }
  // the kinds the page holds (visualize --kind): the others cannot be chosen; access samples
  // alone are shown as such
  [...$('kind').options].forEach((o) => {
    const k = +o.value;
    o.disabled = k ? !(D.kinds & (1 << k)) : !(D.kinds & 30);
  });
  if (!(D.kinds & 30) && (D.kinds & 32)) $('kind').value = '5';
  if (D.cells.length) $('notes').textContent = 'What the buckets lose: faults are counted per (address row x time column x kind x stack, allocation site, thread); a row is ' +
    fmt(G.row_bytes) + ' bytes, a column ' + (G.col_ns / 1e6).toFixed(3) + ' ms (' + G.rows + ' x ' + G.cols + ' grid, bounds ' + D.bounds.rows + ' x ' + D.bounds.cols +
    ', at most ' + fmt(D.bounds.cells) + ' cells and ' + fmt(D.bounds.groups) + ' groups). Exact addresses, times and the order inside a cell are lost; a brush selects whole cells. ' +
    (D.bounds.merged_groups ? fmt(D.bounds.merged_groups) + ' groups with the fewest faults are folded into [other stacks]. ' : '') +
    (D.bounds.coarsened ? 'The grid was halved ' + D.bounds.coarsened + ' times to fit the cell bound. ' : '') +
    (D.bounds.untimed ? fmt(D.bounds.untimed) + ' faults without a time on this axis are left out. ' : '') + 'Time axis: ' +
    (D.pid && !D.virtual ? 'wall time since pid ' + D.pid + ' started (' + (D.origin_ns / 1e9).toFixed(3) + ' s after the recording started)' : D.time_label) + '.';

  // ---------------------------------------------------------------- aggregation
  function inBrush(r, c) {
    const b = state.brush;
    return !b || (r >= b.r0 && r <= b.r1 && c >= b.c0 && c <= b.c1);
  }
  function kindOk(k) { return state.kind ? k === state.kind : k !== 5; }
  // per group: [total, by kind 1..5] of the cells in the brush (kind filter not applied here)
  function groupCounts() {
    const g = new Float64Array(ngroups * 6), c = D.cells;
    for (let i = 0; i < c.length; i += 5) {
      if (!inBrush(c[i], c[i + 1])) continue;
      const k = c[i + 2], o = c[i + 3] * 6;
      g[o + k] += c[i + 4];
      if (k !== 5) g[o] += c[i + 4];
    }
    return g;
  }
  const TABLES = [
    { name: 'callsites', field: 1, label: (i) => N[D.callsites[i]], n: D.callsites.length },
    { name: 'functions', field: 2, label: (i) => N[D.functions[i]], n: D.functions.length },
    { name: 'allocation sites', field: 3, label: (i) => N[D.sites[i][0]], n: D.sites.length, site: true },
    { name: 'threads', field: 4, label: (i) => 'pid ' + D.threads[i][0] + ' tid ' + D.threads[i][1], n: D.threads.length },
    { name: 'processes', field: 5, label: (i) => N[D.procs[i]], n: D.procs.length },
  ];
  function selectedGroups() {
    if (!state.sel) return null;
    const t = TABLES[state.sel.tab], s = new Uint8Array(ngroups);
    D.groups.forEach((g, i) => { if (g[t.field] === state.sel.row) s[i] = 1; });
    return s;
  }

  // ---------------------------------------------------------------- tables
  const tabs = $('tabs');
  TABLES.forEach((t, i) => {
    const b = document.createElement('button');
    b.textContent = t.name;
    b.onclick = () => { state.tab = i; state.sortCol = 1; state.sortDesc = true; renderTable(); };
    tabs.appendChild(b);
  });
  $('filter').oninput = () => renderTable();
  function renderTable() {
    const t = TABLES[state.tab], gc = groupCounts(), rows = [];
    for (let i = 0; i < t.n; i++) rows.push({ i: i, name: t.label(i), v: [0, 0, 0, 0, 0, 0] });
    D.groups.forEach((g, gi) => {
      const r = rows[g[t.field]];
      for (let k = 0; k < 6; k++) r.v[k] += gc[gi * 6 + k];
    });
    const col = (r) => (state.kind ? r.v[state.kind] : r.v[0]);
    const total = rows.reduce((s, r) => s + col(r), 0) || 1;
    const re = $('filter').value.toLowerCase();
    let shown = rows.filter((r) => col(r) > 0 && (!re || r.name.toLowerCase().includes(re)));
    const heads = ['name', 'faults', '%', 'first-touch', 'refault', 'soft', 'access'];
    if (t.site) heads.push('allocs (run)', 'bytes (run)', 'objects faulted (run)', 'faults (run)');
    const key = (r, c) => {
      if (c === 0) return r.name;
      if (c === 1 || c === 2) return col(r);
      if (c <= 5) return r.v[c - 2];
      if (c === 6) return r.v[5];
      const s = D.sites[r.i];
      return s.length > 1 ? s[c - 6] : -1;
    };
    shown.sort((a, b) => {
      const x = key(a, state.sortCol), y = key(b, state.sortCol);
      const d = x < y ? -1 : x > y ? 1 : 0;
      return state.sortDesc ? -d : d;
    });
    const more = shown.length > 500 ? shown.length - 500 : 0;
    shown = shown.slice(0, 500);
    let h = '<table><thead><tr>' + heads.map((x, c) => '<th data-c="' + c + '">' + x + (c === state.sortCol ? (state.sortDesc ? ' ▼' : ' ▲') : '') + '</th>').join('') + '</tr></thead><tbody>';
    for (const r of shown) {
      const sel = state.sel && state.sel.tab === state.tab && state.sel.row === r.i;
      h += '<tr data-r="' + r.i + '"' + (sel ? ' class="sel"' : '') + '><td class="name" title="' + esc(r.name) + '">' + esc(r.name) + '</td><td>' + fmt(col(r)) +
        '</td><td>' + (100 * col(r) / total).toFixed(1) + '</td><td>' + fmt(r.v[1]) + '</td><td>' + fmt(r.v[2]) + '</td><td>' + fmt(r.v[3]) + '</td><td>' + fmt(r.v[5]) + '</td>';
      if (t.site) {
        const s = D.sites[r.i];
        h += s.length > 1 ? '<td>' + fmt(s[1]) + '</td><td>' + fmt(s[2]) + '</td><td>' + fmt(s[3]) + '</td><td>' + fmt(s[4]) + '</td>' : '<td></td><td></td><td></td><td></td>';
      }
      h += '</tr>';
    }
    h += '</tbody></table>' + (more ? '<p class="note">' + more + ' more rows (filter to find them)</p>' : '');
    $('tablewrap').innerHTML = h;
    [...tabs.children].forEach((b, i) => b.classList.toggle('on', i === state.tab));
    $('tablewrap').querySelectorAll('th').forEach((th) => th.onclick = () => {
      const c = +th.dataset.c;
      if (state.sortCol === c) state.sortDesc = !state.sortDesc; else { state.sortCol = c; state.sortDesc = c !== 0; }
      renderTable();
    });
    $('tablewrap').querySelectorAll('tbody tr').forEach((tr) => tr.onclick = () => {
      const r = +tr.dataset.r;
      state.sel = state.sel && state.sel.tab === state.tab && state.sel.row === r ? null : { tab: state.tab, row: r };
      renderAll();
    });
  }

  // ---------------------------------------------------------------- flame graph
  let flameRoot = null;
  function buildFlame() {
    const gc = groupCounts(), root = { name: 'all', v: 0, kids: new Map(), groups: [] };
    D.groups.forEach((g, gi) => {
      const v = state.kind ? gc[gi * 6 + state.kind] : gc[gi * 6];
      if (!v) return;
      let n = root;
      root.v += v;
      for (const f of D.stacks[g[0]]) {
        let k = n.kids.get(f);
        if (!k) { k = { name: N[f], v: 0, kids: new Map(), groups: [] }; n.kids.set(f, k); }
        k.v += v;
        n = k;
      }
      n.groups.push(gi);
    });
    return root;
  }
  function markSelected(n, sel) {
    let any = n.groups.some((g) => sel[g]);
    for (const k of n.kids.values()) any = markSelected(k, sel) || any;
    n.sel = any;
    return any;
  }
  function renderFlame() {
    flameRoot = buildFlame();
    const sel = selectedGroups();
    if (sel) markSelected(flameRoot, sel);
    const svg = $('flamesvg'), W = 1200, H = 17;
    let zoom = state.zoom && findPath(flameRoot, state.zoom);
    const top = zoom ? zoom[zoom.length - 1] : flameRoot;
    let re = null;
    try { re = $('search').value ? new RegExp($('search').value) : null; } catch (e) { re = null; }
    const out = [];
    let depthMax = 0, matched = 0;
    const path = zoom || [flameRoot];
    // ancestors of the zoomed frame: full width
    path.forEach((n, d) => out.push([n, d, 0, W]));
    function lay(n, d, x, w) {
      depthMax = Math.max(depthMax, d);
      let cx = x;
      for (const k of [...n.kids.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const kw = w * k.v / (n.v || 1);
        if (kw >= 0.5) { out.push([k, d + 1, cx, kw]); lay(k, d + 1, cx, kw); }
        cx += kw;
      }
    }
    lay(top, path.length - 1, 0, W);
    if (re) {
      const count = (n) => (re.test(n.name) ? n.v : [...n.kids.values()].reduce((s, k) => s + count(k), 0));
      matched = count(flameRoot);
      $('matched').textContent = 'Matched: ' + (100 * matched / (flameRoot.v || 1)).toFixed(2) + '%';
    } else $('matched').textContent = '';
    const height = (depthMax + 2) * H;
    svg.setAttribute('height', height);
    let h = '';
    out.forEach(([n, d, x, w], i) => {
      const y = height - (d + 1) * H, hue = 10 + (hash(n.name) % 40);
      const cls = (re && re.test(n.name) ? 'match ' : '') + (n.sel ? 'sel' : '');
      h += '<g class="' + cls + '" data-i="' + i + '"><title>' + esc(n.name) + ' (' + fmt(n.v) + ' faults, ' + (100 * n.v / (flameRoot.v || 1)).toFixed(2) + '%)</title><rect x="' + x.toFixed(1) + '" y="' + y + '" width="' + Math.max(0.5, w).toFixed(1) +
        '" height="' + (H - 1) + '" fill="hsl(' + hue + ',90%,' + (n.sel ? 45 : 60) + '%)"></rect>' + (w > 40 ? '<text x="' + (x + 3).toFixed(1) + '" y="' + (y + 12) + '">' + esc(n.name.slice(0, Math.floor(w / 7))) + '</text>' : '') + '</g>';
    });
    svg.innerHTML = h;
    svg.querySelectorAll('g').forEach((g) => g.onclick = () => {
      const [n] = out[+g.dataset.i];
      state.zoom = pathNames(flameRoot, n);
      renderFlame();
    });
  }
  function hash(s) { let h = 0; for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0; return h; }
  function pathNames(root, target) {
    const walk = (n, acc) => {
      if (n === target) return acc;
      for (const k of n.kids.values()) { const r = walk(k, acc.concat([k.name])); if (r) return r; }
      return null;
    };
    return walk(root, []);
  }
  function findPath(root, names) {
    const p = [root];
    let n = root;
    for (const name of names) {
      n = [...n.kids.values()].find((k) => k.name === name);
      if (!n) return null;
      p.push(n);
    }
    return p;
  }
  $('resetzoom').onclick = () => { state.zoom = null; renderFlame(); };
  $('search').oninput = () => renderFlame();

  // ---------------------------------------------------------------- heatmap and timeline
  const hm = $('heatmap'), tl = $('timeline'), L = 90, R = 10, T = 10, B = 24;
  const PW = hm.width - L - R, PH = hm.height - T - B;
  const colX = (c) => L + (c - state.t0) / (state.t1 - state.t0) * PW;
  const rowY = (r) => T + PH - (r + 1) * PH / Math.max(1, G.rows);
  function xToCol(x) { return state.t0 + (x - L) / PW * (state.t1 - state.t0); }
  function yToRow(y) { return (T + PH - y) / PH * G.rows; }
  let objectsShown = [];
  let cellsShown = new Map(); // row * 65536 + col -> [faults, of them selected], as last drawn
  function renderHeatmap() {
    const ctx = hm.getContext('2d'), c = D.cells, sel = selectedGroups();
    ctx.clearRect(0, 0, hm.width, hm.height);
    const per = new Map();
    cellsShown = per;
    let max = 1;
    for (let i = 0; i < c.length; i += 5) {
      if (!kindOk(c[i + 2])) continue;
      const key = c[i] * 65536 + c[i + 1];
      let e = per.get(key);
      if (!e) { e = [0, 0]; per.set(key, e); }
      e[0] += c[i + 4];
      if (sel && sel[c[i + 3]]) e[1] += c[i + 4];
      max = Math.max(max, e[0]);
    }
    const cw = PW / (state.t1 - state.t0), rh = PH / Math.max(1, G.rows);
    const clip = () => { ctx.save(); ctx.beginPath(); ctx.rect(L, T, PW, PH); ctx.clip(); }; // zoomed: nothing past the plot
    clip();
    for (const [key, e] of per) {
      const r = Math.floor(key / 65536), col = key % 65536, x = colX(col);
      if (x + cw < L || x > L + PW) continue;
      const a = Math.log(1 + e[0]) / Math.log(1 + max);
      ctx.fillStyle = sel ? (e[1] ? 'rgba(220,40,0,' + (0.3 + 0.7 * Math.log(1 + e[1]) / Math.log(1 + max)) + ')' : 'rgba(120,120,120,' + (0.15 + 0.3 * a) + ')')
        : 'rgba(' + Math.round(255 * a) + ',' + Math.round(80 * (1 - a)) + ',' + Math.round(200 * (1 - a)) + ',' + (0.25 + 0.75 * a) + ')';
      ctx.fillRect(x, rowY(r), Math.max(1, cw), Math.max(1, rh));
    }
    ctx.restore();
    if (!per.size) {
      ctx.fillStyle = '#000'; ctx.font = '14px sans-serif'; ctx.textAlign = 'center';
      ctx.fillText('no fault of the kind chosen', L + PW / 2, T + PH / 2);
      ctx.textAlign = 'start';
    }
    // hot ranges: a bar on the left of the plot
    ctx.font = '10px sans-serif';
    D.hot.forEach((h) => {
      const r0 = (h[0] - G.addr0) / G.row_bytes, r1 = (h[1] - G.addr0) / G.row_bytes;
      const y0 = T + PH - r1 * rh, y1 = T + PH - r0 * rh;
      ctx.fillStyle = 'rgba(0,150,0,0.6)';
      ctx.fillRect(L - 6, y0, 5, Math.max(1, y1 - y0));
      ctx.strokeStyle = 'rgba(0,150,0,0.5)';
      ctx.strokeRect(L, y0, PW, Math.max(1, y1 - y0));
    });
    // objects of the selected allocation site: their lifetimes
    clip();
    ctx.strokeStyle = '#000';
    objectsShown.forEach((o) => {
      const x0 = L + (o[4] / G.col_ns - state.t0) / (state.t1 - state.t0) * PW;
      const end = o[5] < 0 ? G.cols * G.col_ns : o[5];
      const x1 = L + (end / G.col_ns - state.t0) / (state.t1 - state.t0) * PW;
      const y1 = T + PH - (o[2] - G.addr0) / G.row_bytes * rh, y0 = T + PH - (o[2] + o[3] - G.addr0) / G.row_bytes * rh;
      ctx.strokeRect(x0, y0, Math.max(1, x1 - x0), Math.max(1, y1 - y0));
    });
    if (state.brush) {
      const b = state.brush;
      ctx.strokeStyle = '#06c'; ctx.lineWidth = 2;
      ctx.strokeRect(colX(b.c0), rowY(b.r1), colX(b.c1 + 1) - colX(b.c0), rowY(b.r0 - 1) - rowY(b.r1));
      ctx.lineWidth = 1;
    }
    ctx.restore();
    if (drag) { ctx.strokeStyle = '#06c'; ctx.strokeRect(drag.x0, drag.y0, drag.x1 - drag.x0, drag.y1 - drag.y0); }
    ctx.fillStyle = '#000';
    ctx.fillText('0x' + G.addr0.toString(16), 2, T + PH);
    ctx.fillText('0x' + (G.addr0 + G.rows * G.row_bytes).toString(16), 2, T + 10);
    axis(ctx, hm.height - B + 12);
  }
  // The time axis under a plot: ticks at a round step (about 8 in the visible span), each label
  // with as many decimals as the step needs, centred on its tick but kept inside the canvas.
  function niceStep(span, target) {
    const raw = span / target, mag = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
  }
  const decimalsFor = (stepS) => Math.min(9, Math.max(0, -Math.floor(Math.log10(stepS) + 1e-9)));
  const secs = (ns, stepNs) => (ns / 1e9).toFixed(decimalsFor(Math.max(1e-9, stepNs / 1e9)));
  let ticksShown = []; // the heatmap's axis labels as last drawn: [text, left, right] (for tests)
  function axis(ctx, y) {
    const drawn = [];
    const s0 = state.t0 * G.col_ns / 1e9, s1 = state.t1 * G.col_ns / 1e9, W = ctx.canvas.width;
    ctx.fillStyle = '#000';
    ctx.strokeStyle = '#444';
    ctx.font = '10px sans-serif';
    ctx.textAlign = 'center';
    if (s1 > s0) {
      const step = niceStep(s1 - s0, 8), d = decimalsFor(step);
      for (let k = Math.ceil(s0 / step - 1e-9); k * step <= s1 + step * 1e-9; k++) {
        const x = L + (k * step - s0) / (s1 - s0) * PW, text = (k * step).toFixed(d) + ' s';
        const half = ctx.measureText(text).width / 2;
        ctx.beginPath(); ctx.moveTo(x, y - 13); ctx.lineTo(x, y - 9); ctx.stroke();
        const at = Math.min(Math.max(x, half + 1), W - half - 1);
        ctx.fillText(text, at, y);
        drawn.push([text, at - half, at + half]);
      }
    }
    ctx.textAlign = 'start';
    if (ctx.canvas === hm) ticksShown = drawn;
  }
  // The visible span: at least one column (the grid's resolution), at most the whole axis, inside it.
  function clampView() {
    const cols = Math.max(1, G.cols);
    const span = Math.min(cols, Math.max(Math.min(1, cols), state.t1 - state.t0));
    const t0 = Math.min(Math.max(0, state.t0), cols - span);
    state.t0 = t0; state.t1 = t0 + span;
  }
  // A counter timeline strip per series: the model's steps (timeline_steps.h), a cumulative
  // counter's rate per second of the axis, a gauge's level; each strip scaled to its own maximum.
  const compact = (v) => { const u = ['', 'k', 'M', 'G', 'T']; let i = 0; while (Math.abs(v) >= 1000 && i < 4) { v /= 1000; i++; } return (i && Math.abs(v) < 100 ? v.toFixed(1) : Math.round(v)) + u[i]; };
  function renderTimeline() {
    const chosen = state.series.filter((x) => x).length, height = Math.max(160, 20 + 40 * chosen);
    if (tl.height !== height) tl.height = height;
    const ctx = tl.getContext('2d'), h = tl.height - 20;
    ctx.clearRect(0, 0, tl.width, tl.height);
    ctx.font = '10px sans-serif';
    const series = D.series.filter((s, i) => state.series[i]);
    if (!D.series.length) { ctx.fillStyle = '#000'; ctx.fillText('no counter timeline in this recording (record --timeline)', L, 20); return; }
    if (!series.length) { ctx.fillStyle = '#000'; ctx.fillText('no counter chosen (tick some below)', L, 20); return; }
    const sh = h / series.length;
    ctx.save(); ctx.beginPath(); ctx.rect(L, 0, PW, h); ctx.clip(); // zoomed: no line past the plot
    series.forEach((s, i) => {
      const max = Math.max(1e-12, ...s.v), y0 = (i + 1) * sh;
      const X = (ns) => L + (ns / G.col_ns - state.t0) / (state.t1 - state.t0) * PW, Y = (v) => y0 - 2 - v / max * (sh - 6);
      ctx.strokeStyle = 'hsl(' + (i * 60) + ',70%,40%)';
      ctx.beginPath();
      for (let j = 0; j < s.v.length; j++) {
        j ? ctx.lineTo(X(s.x0[j]), Y(s.v[j])) : ctx.moveTo(X(s.x0[j]), Y(s.v[j]));
        ctx.lineTo(X(s.x1[j]), Y(s.v[j]));
      }
      ctx.stroke();
    });
    ctx.restore();
    series.forEach((s, i) => {
      const y0 = (i + 1) * sh;
      ctx.fillStyle = '#000';
      ctx.fillText(s.label + (s.gauge ? '' : ' /s') + (pids > 1 ? ' pid ' + s.pid : ''), 2, y0 - sh / 2);
      ctx.fillText('max ' + compact(Math.max(1e-12, ...s.v)), 2, y0 - sh / 2 + 11);
    });
    axis(ctx, tl.height - 4);
  }
  // which series are drawn: the first MAX_SHOWN at first; every series the page holds can be ticked
  const MAX_SHOWN = 6;
  state.series = D.series.map((s, i) => i < MAX_SHOWN);
  function renderSeriesChoice() {
    const box = $('serieschoice');
    if (!D.series.length && !D.series_dropped) { box.innerHTML = ''; return; }
    const drawn = state.series.filter((x) => x).length;
    let h = '<span class="note">' + drawn + ' of ' + D.series.length + ' counter series drawn' +
      (D.series.length > drawn ? ', ' + (D.series.length - drawn) + ' more series not shown (tick to draw them)' : '') +
      (D.series_dropped ? '; ' + D.series_dropped + ' more series not kept in this page (at most ' + D.series.length + ')' : '') + ':</span> ';
    D.series.forEach((s, i) => {
      h += '<label><input type="checkbox" data-i="' + i + '"' + (state.series[i] ? ' checked' : '') + '>' + esc(s.label) + (pids > 1 ? ' (pid ' + s.pid + ')' : '') + '</label> ';
    });
    box.innerHTML = h;
    box.querySelectorAll('input').forEach((c) => c.onchange = () => { state.series[+c.dataset.i] = c.checked; renderSeriesChoice(); renderTimeline(); });
  }
  const pids = new Set(D.series.map((s) => s.pid)).size;
  let drag = null;
  hm.onmousedown = (e) => { const r = hm.getBoundingClientRect(); drag = { x0: e.clientX - r.left, y0: e.clientY - r.top, x1: e.clientX - r.left, y1: e.clientY - r.top }; };
  hm.onmousemove = (e) => {
    const r = hm.getBoundingClientRect();
    if (drag) { drag.x1 = e.clientX - r.left; drag.y1 = e.clientY - r.top; renderHeatmap(); return; }
    // no drag: what is under the pointer, on the line under the heatmap
    const col = Math.floor(xToCol(e.clientX - r.left)), row = Math.floor(yToRow(e.clientY - r.top));
    if (row < 0 || row >= G.rows || col < 0 || col >= G.cols) { $('hover').textContent = '\u00a0'; return; }
    const lo = G.addr0 + row * G.row_bytes, e2 = cellsShown.get(row * 65536 + col);
    const hot = D.hot.find((h) => h[0] < lo + G.row_bytes && h[1] > lo);
    $('hover').textContent = '0x' + lo.toString(16) + '-0x' + (lo + G.row_bytes).toString(16) + ', ' + secs(col * G.col_ns, G.col_ns) + '-' +
      secs((col + 1) * G.col_ns, G.col_ns) + ' s: ' + fmt(e2 ? e2[0] : 0) + ' faults' + (e2 && state.sel ? ' (' + fmt(e2[1]) + ' of the selection)' : '') +
      (hot ? '; hot range ' + hot[2].toFixed(1) + '% of the faults' + (hot[3] ? ', ' + hot[3] : '') : '');
  };
  hm.onmouseleave = () => { $('hover').textContent = '\u00a0'; }; // never empty: the page below must not move
  hm.onmouseup = () => {
    if (!drag) return;
    const d = drag;
    drag = null;
    if (Math.abs(d.x1 - d.x0) < 3 || Math.abs(d.y1 - d.y0) < 3) { renderHeatmap(); return; }
    const c0 = Math.floor(xToCol(Math.min(d.x0, d.x1))), c1 = Math.floor(xToCol(Math.max(d.x0, d.x1)));
    const r0 = Math.floor(yToRow(Math.max(d.y0, d.y1))), r1 = Math.floor(yToRow(Math.min(d.y0, d.y1)));
    state.brush = { r0: Math.max(0, r0), r1: r1, c0: Math.max(0, c0), c1: c1 };
    renderAll();
  };
  hm.onwheel = tl.onwheel = (e) => {
    e.preventDefault();
    const span = state.t1 - state.t0;
    if (e.shiftKey) {
      const d = span * 0.1 * Math.sign(e.deltaY || e.deltaX);
      state.t0 += d; state.t1 += d;
    } else {
      const r = hm.getBoundingClientRect(), at = xToCol(e.clientX - r.left), f = e.deltaY > 0 ? 1.25 : 0.8;
      state.t0 = at - (at - state.t0) * f; state.t1 = at + (state.t1 - at) * f;
    }
    clampView();
    renderHeatmap(); renderTimeline();
  };
  $('clearbrush').onclick = () => { state.brush = null; renderAll(); };
  $('clearsel').onclick = () => { state.sel = null; renderAll(); };
  $('kind').onchange = () => { state.kind = +$('kind').value; renderAll(); };

  function renderObjects() {
    objectsShown = [];
    const box = $('objects');
    if (!state.sel || !TABLES[state.sel.tab].site) { box.innerHTML = ''; return; }
    objectsShown = D.objects.filter((o) => o[0] === state.sel.row);
    box.innerHTML = '<p class="note">' + objectsShown.length + ' objects of ' + esc(N[D.sites[state.sel.row][0]]) + ' with the most faults, outlined on the heatmap (address x lifetime):</p><table><tr><th>pid</th><th>address</th><th>size</th><th>allocated (s)</th><th>freed (s)</th><th>faults</th></tr>' +
      objectsShown.map((o) => '<tr><td>' + o[1] + '</td><td>0x' + o[2].toString(16) + '</td><td>' + fmt(o[3]) + '</td><td>' + secs(o[4], G.col_ns) + '</td><td>' + (o[5] < 0 ? 'live at end' : secs(o[5], G.col_ns)) + '</td><td>' + fmt(o[6]) + '</td></tr>').join('') + '</table>';
  }
  // A curve of refaults against local memory (log scale) into the SVG element svg: points
  // { bytes, y, lo, hi (a band, optional), tip, ring (this recording), square (the knee) }.
  function plotCurve(svg, pts) {
    const W = 600, H = 260, l = 70, b = 40, top = 12;
    const xs = pts.map((p) => Math.log2(Math.max(1, p.bytes)));
    const x0 = Math.min(...xs), x1 = Math.max(...xs), ym = Math.max(1, ...pts.map((p) => (p.hi !== undefined ? p.hi : p.y)));
    const X = (x) => l + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (W - l - 20), Y = (y) => H - b - y / ym * (H - b - top);
    const mib = (n) => (n >= 1048576 ? (n / 1048576).toFixed(n % 1048576 ? 1 : 0) + ' MiB' : (n / 1024).toFixed(0) + ' KiB');
    let h = '';
    if (pts[0].hi !== undefined) {
      const band = pts.map((p, i) => X(xs[i]) + ',' + Y(p.hi)).concat(pts.map((p, i) => X(xs[i]) + ',' + Y(p.lo)).reverse());
      h += '<polygon fill="rgba(200,60,0,0.15)" stroke="none" points="' + band.join(' ') + '"/>';
    }
    h += '<line x1="' + l + '" y1="' + Y(0) + '" x2="' + (W - 10) + '" y2="' + Y(0) + '" stroke="#888"/><line x1="' + l + '" y1="' + Y(0) + '" x2="' + l + '" y2="' + top + '" stroke="#888"/>';
    for (let i = 0; i <= 4; i++) h += '<text x="' + (l - 4) + '" y="' + (Y(ym * i / 4) + 4) + '" font-size="10" text-anchor="end">' + fmt(Math.round(ym * i / 4)) + '</text>';
    h += '<polyline fill="none" stroke="#c30" stroke-width="2" points="' + pts.map((p, i) => X(xs[i]) + ',' + Y(p.y)).join(' ') + '"/>';
    const every = Math.max(1, Math.ceil(pts.length / 8));
    pts.forEach((p, i) => {
      const x = X(xs[i]), y = Y(p.y);
      if (p.square) h += '<rect x="' + (x - 6) + '" y="' + (y - 6) + '" width="12" height="12" fill="none" stroke="#06c" stroke-width="2"/>';
      if (p.ring) h += '<circle cx="' + x + '" cy="' + y + '" r="7" fill="none" stroke="#000" stroke-width="2"/>';
      h += '<circle class="point" cx="' + x + '" cy="' + y + '" r="3" fill="#c30"><title>-L ' + mib(p.bytes) + ': ' + p.tip + '</title></circle>';
      if (i % every === 0 || i === pts.length - 1) h += '<text x="' + x + '" y="' + (H - b + 14) + '" font-size="10" text-anchor="middle">' + mib(p.bytes) + '</text>';
    });
    h += '<text x="' + ((l + W) / 2) + '" y="' + (H - 6) + '" font-size="11" text-anchor="middle">local memory (-L, log scale)</text>';
    svg.innerHTML = h;
  }
  function renderCurves() {
    // with --pid: the curve is the process's; the sweep's counts are whole recordings' (say so)
    if (D.pid) {
      $('mrcnote').textContent = 'Of pid ' + D.pid + ' only (its sampled pages), at the sizes faultline mrc takes for the whole recording.';
      $('sweepnote').textContent = 'Every process of each recording: the sweep counts whole recordings, not pid ' + D.pid + ' alone.';
    }
    if (!D.mrc.length) $('mrcsec').style.display = 'none';
    else plotCurve($('mrcsvg'), D.mrc.map((p) => ({ bytes: p[0], y: p[1], lo: p[2], hi: p[3],
      tip: fmt(Math.round(p[1])) + ' refaults predicted (' + fmt(Math.round(p[2])) + ' to ' + fmt(Math.round(p[3])) + ')' })));
    // sweep points: [local bytes, refaults, faults, this recording, the knee]
    if (!D.sweep.length) $('sweepsec').style.display = 'none';
    else plotCurve($('sweepsvg'), D.sweep.map((p) => ({ bytes: p[0], y: p[1], ring: p[3] === 1, square: p[4] === 1,
      tip: fmt(p[1]) + ' refaults, ' + fmt(p[2]) + ' faults measured' + (p[3] ? ' (this recording)' : '') + (p[4] ? ' (the knee)' : '') })));
  }
  function renderAll() {
    const b = state.brush;
    $('brushinfo').textContent = b ? 'brush: addresses 0x' + (G.addr0 + b.r0 * G.row_bytes).toString(16) + '-0x' + (G.addr0 + (b.r1 + 1) * G.row_bytes).toString(16) +
      ', ' + secs(b.c0 * G.col_ns, G.col_ns) + '-' + secs((b.c1 + 1) * G.col_ns, G.col_ns) + ' s' : 'no brush';
    renderTable(); renderObjects(); renderHeatmap(); renderTimeline(); renderFlame();
  }
  if (!EMPTY) { renderSeriesChoice(); renderAll(); }
  renderCurves();
  // for tests and the console: the state, and the pixel of an (address, time) on the heatmap canvas
  window.faultline = {
    state: state, data: D,
    pixel: (addr, ns) => ({ x: colX(ns / G.col_ns), y: T + PH - (addr - G.addr0) / G.row_bytes * PH / Math.max(1, G.rows) }),
    plot: { left: L, right: L + PW, top: T, bottom: T + PH },
    ticks: () => ticksShown,
  };
})();
