// ferry server's dashboard: polls the JSON API (/v1/jobs, /v1/overview)
// and draws the jobs, a job's dead letters, the volumes and the cache.
// No framework and nothing fetched from elsewhere: this file is served from
// the binary. Text from the API only ever goes into textContent.
'use strict';

const params = new URLSearchParams(location.search);
const REFRESH_MS = Math.max(250, Number(params.get('refresh')) || 2000);
const $ = (id) => document.getElementById(id);
let dlqJob = null;

function token() { return sessionStorage.getItem('ferry-token') || ''; }

async function api(method, path, body) {
  const headers = {};
  if (token()) headers['Authorization'] = 'Bearer ' + token();
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let j = null;
  try { j = await r.json(); } catch (e) { j = null; }
  if (r.status === 401) $('token-box').hidden = false;
  if (!r.ok) {
    const msg = j && j.error ? j.error.message : 'HTTP ' + r.status;
    throw new Error(msg);
  }
  return j;
}

function bytes(n) {
  if (n === null || n === undefined || isNaN(n)) return '–';
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let i = 0;
  while (Math.abs(n) >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return (i === 0 ? Math.round(n) : n.toFixed(n < 10 ? 2 : 1)) + ' ' + units[i];
}
function num(n, digits) {
  if (n === null || n === undefined || isNaN(n)) return '–';
  return Number(n).toLocaleString('en-US', { maximumFractionDigits: digits === undefined ? 1 : digits });
}
function duration(s) {
  if (s === null || s === undefined) return '–';
  s = Math.round(s);
  if (s < 60) return s + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
  return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
}
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('data-')) e.setAttribute(k, v);
    else if (k === 'title') e.title = v;
    else e[k] = v;
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}
function progressBar(done, total, label, kind) {
  const pct = total > 0 ? Math.min(100, (100 * done) / total) : (kind === 'done' ? 100 : 0);
  const bar = el('div', { class: 'bar' + (kind ? ' ' + kind : ''), 'data-pct': pct.toFixed(1) });
  const fill = el('span');
  fill.style.width = pct.toFixed(1) + '%';
  bar.append(fill, el('em', {}, label));
  return bar;
}

// A line chart of points [[t_ms, value...]] (value at index `col`), as SVG.
// `fmt` formats the peak in the chart's caption.
function chart(svg, points, col, col2, fmt) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const NS = 'http://www.w3.org/2000/svg';
  if (!points || points.length < 2) {
    setLabel(svg, '· collecting the last hour…');
    return;
  }
  const t0 = points[0][0], t1 = points[points.length - 1][0];
  const max = Math.max(1e-9, ...points.map((p) => p[col]), ...(col2 ? points.map((p) => p[col2]) : []));
  const xy = (p, c) => [((p[0] - t0) / Math.max(1, t1 - t0)) * 600, 76 - (p[c] / max) * 70];
  const line = (c, cls) => {
    const path = document.createElementNS(NS, 'path');
    path.setAttribute('d', points.map((p, i) => (i ? 'L' : 'M') + xy(p, c).map((v) => v.toFixed(1)).join(' ')).join(' '));
    path.setAttribute('class', cls);
    return path;
  };
  const area = document.createElementNS(NS, 'path');
  area.setAttribute('d', 'M0 76 ' + points.map((p) => 'L' + xy(p, col).map((v) => v.toFixed(1)).join(' ')).join(' ') + ' L600 76 Z');
  area.setAttribute('class', 'area');
  svg.append(area, line(col, 'line'));
  if (col2) svg.append(line(col2, 'line2'));
  setLabel(svg, '· peak ' + (fmt || num)(max) + ' · last ' + duration((t1 - t0) / 1000));
}
function setLabel(svg, text) {
  const label = document.getElementById(svg.id + '-label');
  if (label) label.textContent = text;
}

// Per-second rates between successive cumulative points [[t, a, b...]].
function rates(points) {
  const out = [];
  for (let i = 1; i < points.length; i++) {
    const dt = (points[i][0] - points[i - 1][0]) / 1000;
    if (dt <= 0) continue;
    out.push([points[i][0], ...points[i].slice(1).map((v, k) => Math.max(0, (v - points[i - 1][k + 1]) / dt))]);
  }
  return out;
}

function renderJobs(jobs) {
  const tbody = $('jobs').tBodies[0];
  tbody.replaceChildren();
  $('no-jobs').hidden = jobs.length > 0;
  let running = 0;
  for (const j of jobs) {
    if (j.state === 'running') running++;
    const finished = j.transferred + j.skipped;
    const total = j.listed;
    const kind = j.state === 'completed' ? 'done' : j.state === 'failed' ? 'failed' : '';
    const active = ['created', 'running', 'interrupted'].includes(j.state);
    const label = num(finished, 0) + ' / ' + num(total, 0) + (j.listing_done || !active ? '' : ' (listing…)') +
      (j.failed ? ' · ' + num(j.failed, 0) + ' failed' : '') + ' · ' + bytes(j.bytes);
    const live = j.live || {};
    const circuits = live.circuits ? el('span', { class: 'circuit-open' }, live.circuits) : (j.live ? 'closed' : '–');
    const pacing = j.live ? 'src ' + live.src_concurrency + ' · dst ' + live.dst_concurrency + (live.throttles ? ' · ' + live.throttles + ' throttled' : '') : '–';
    const actions = el('td', { class: 'actions' });
    if (j.failed > 0 || j.state === 'failed') {
      actions.append(el('button', { class: 'link dlq-open', type: 'button', onclick: () => openDlq(j.job) }, 'dead letters (' + j.failed + ')'));
    }
    if (active) {
      actions.append(el('button', { class: 'link', type: 'button', onclick: () => cancel(j.job) }, 'cancel'));
    }
    const tr = el('tr', { class: 'job', 'data-job': j.job, 'data-state': j.state },
      el('td', { class: 'id', title: 'created ' + j.created }, j.job),
      el('td', { class: 'path', title: j.src + ' → ' + j.dst }, j.src + ' → ' + j.dst),
      el('td', {}, el('span', { class: 'badge ' + j.state }, j.state)),
      el('td', { class: 'wide' }, progressBar(finished, total, label, kind)),
      el('td', { class: 'rate' }, j.state === 'running' ? num(j.objects_per_s) : '–'),
      el('td', {}, j.state === 'running' ? num(j.bytes_per_s / 1e6, 2) : '–'),
      el('td', { class: 'eta' }, j.state === 'running' ? duration(j.eta_seconds) : j.state === 'completed' ? 'done' : '–'),
      el('td', {}, pacing),
      el('td', {}, circuits),
      actions);
    tbody.append(tr);
  }
  $('pool-running').textContent = running;
}

async function openDlq(id) {
  dlqJob = id;
  $('dlq').hidden = false;
  $('dlq-job').textContent = id;
  $('dlq-note').textContent = '';
  await renderDlq();
}
async function renderDlq() {
  if (!dlqJob) return;
  const d = await api('GET', '/v1/jobs/' + encodeURIComponent(dlqJob) + '/dlq');
  const tbody = $('dlq-table').tBodies[0];
  tbody.replaceChildren();
  for (const x of d.dead_letters) {
    tbody.append(el('tr', { class: 'dead-letter' }, el('td', { class: 'path' }, x.key), el('td', {}, bytes(x.size)),
      el('td', {}, x.reason), el('td', {}, x.attempts), el('td', { class: 'path', title: x.last_error }, x.last_error), el('td', {}, x.at)));
  }
  $('dlq-retry').disabled = d.dead_letters.length === 0;
  if (d.dead_letters.length === 0 && !$('dlq-note').textContent) $('dlq-note').textContent = 'No dead letters.';
}
async function retryDlq() {
  try {
    const r = await api('POST', '/v1/jobs/' + encodeURIComponent(dlqJob) + '/dlq/retry');
    $('dlq-note').textContent = r.requeued + ' key(s) sent back to the pool.';
    await renderDlq();
  } catch (e) { $('dlq-note').textContent = e.message; }
}
async function cancel(id) {
  if (!confirm('Cancel job ' + id + '?')) return;
  try { await api('POST', '/v1/jobs/' + encodeURIComponent(id) + '/cancel'); } catch (e) { alert(e.message); }
  refresh();
}

async function submitJob(ev) {
  ev.preventDefault();
  const f = ev.target;
  const out = $('job-form-result');
  let options = {};
  try {
    options = f.options.value.trim() ? JSON.parse(f.options.value) : {};
  } catch (e) { out.textContent = 'More options: not JSON (' + e.message + ')'; out.className = 'error'; return; }
  for (const k of ['concurrency', 'src-profile', 'dst-profile']) {
    const v = f.elements[k].value.trim();
    if (v) options[k] = k === 'concurrency' ? Number(v) : v;
  }
  try {
    const j = await api('POST', '/v1/jobs', { src: f.src.value.trim(), dst: f.dst.value.trim(), options });
    out.textContent = 'Job ' + j.job + ' created.';
    out.className = 'note';
    out.dataset.job = j.job;
    f.reset();
    refresh();
  } catch (e) { out.textContent = e.message; out.className = 'error'; }
}

function renderVolumes(v) {
  $('volumes').hidden = false;
  $('volumes-source').textContent = v.source;
  $('volumes-error').hidden = !v.error;
  $('volumes-error').textContent = v.error ? 'not answering: ' + v.error : '';
  const tbody = $('volumes-table').tBodies[0];
  tbody.replaceChildren();
  for (const x of v.list) {
    tbody.append(el('tr', { class: 'volume', 'data-volume': x.name },
      el('td', { class: 'id' }, x.name), el('td', { class: 'path' }, x.from || ''), el('td', {}, el('span', { class: 'badge' }, x.state)),
      el('td', { class: 'wide' }, progressBar(x.hydrated, x.chunks, num(x.hydrated, 0) + ' / ' + num(x.chunks, 0) + ' chunks', x.hydrated >= x.chunks ? 'done' : '')),
      el('td', {}, num(x.triggers, 0)), el('td', {}, bytes(x.bytes_from_origin)), el('td', {}, bytes(x.bytes_from_cache)), el('td', {}, x.pool || '')));
  }
  $('vol-count').textContent = v.list.length;
  const r = rates(v.history || []);
  const last = r.length ? r[r.length - 1] : [0, 0, 0, 0];
  $('vol-origin').textContent = bytes(last[2]);
  $('vol-cache').textContent = bytes(last[3]);
  chart($('volumes-chart'), r, 2, 3, (v) => bytes(v) + '/s');
}

function renderCache(c) {
  $('cache').hidden = false;
  $('cache-source').textContent = c.source;
  $('cache-error').hidden = !c.error;
  $('cache-error').textContent = c.error ? 'not answering: ' + c.error : '';
  $('cache-hit').textContent = c.hit_ratio === null || c.hit_ratio === undefined ? '–' : (100 * c.hit_ratio).toFixed(1) + ' %';
  $('cache-density').textContent = c.logical_per_allocated ? c.logical_per_allocated.toFixed(2) + '×' : '–';
  $('cache-entries').textContent = num(c.entries, 0);
  // Hit ratio per interval over the last hour.
  const h = c.history || [];
  const pts = [];
  for (let i = 1; i < h.length; i++) {
    const lookups = h[i][2] - h[i - 1][2];
    if (lookups > 0) pts.push([h[i][0], (h[i][1] - h[i - 1][1]) / lookups]);  // idle samples: no point
  }
  chart($('cache-chart'), pts, 1, undefined, (v) => (100 * v).toFixed(1) + ' %');
  const box = $('cache-encodings');
  box.replaceChildren();
  const enc = c.response_bytes || {};
  const total = Object.values(enc).reduce((a, b) => a + b, 0);
  for (const [name, n] of Object.entries(enc)) {
    box.append(el('span', { class: 'encoding', 'data-encoding': name }, name), progressBar(n, total, total ? ((100 * n) / total).toFixed(1) + ' %' : ''), el('span', {}, bytes(n)));
  }
}

async function refresh() {
  try {
    const [jobs, overview] = await Promise.all([api('GET', '/v1/jobs?all=true'), api('GET', '/v1/overview')]);
    renderJobs(jobs.jobs);
    const pool = overview.pool || [];
    const last = pool.length ? pool[pool.length - 1] : [0, 0, 0];
    $('pool-objects').textContent = num(last[1]);
    $('pool-bytes').textContent = bytes(last[2]);
    chart($('pool-chart'), pool, 1);
    if (overview.volumes) renderVolumes(overview.volumes);
    if (overview.cache) renderCache(overview.cache);
    if (dlqJob) await renderDlq();
    $('status').textContent = 'updated ' + new Date().toLocaleTimeString();
    $('status').className = 'status';
    document.body.dataset.loaded = 'yes';
  } catch (e) {
    $('status').textContent = 'server not answering: ' + e.message;
    $('status').className = 'status down';
  }
}

$('job-form').addEventListener('submit', submitJob);
$('dlq-retry').addEventListener('click', retryDlq);
$('dlq-close').addEventListener('click', () => { dlqJob = null; $('dlq').hidden = true; });
$('token-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  sessionStorage.setItem('ferry-token', $('token').value);
  $('token-box').hidden = true;
  refresh();
});
refresh();
setInterval(refresh, REFRESH_MS);
