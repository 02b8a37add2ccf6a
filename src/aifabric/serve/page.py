"""The page of ``aifabric serve``: one self-contained HTML file (the report's CSS, plotly.js inlined)
with a small script that calls the JSON API (:mod:`aifabric.serve.app`). No build step."""

from __future__ import annotations

from aifabric.report.html import _CSS

_PAGE_CSS = """
body{max-width:1500px} .cols{display:grid;grid-template-columns:420px 1fr;gap:1.5rem;align-items:start}
#controls{position:sticky;top:.5rem;max-height:97vh;overflow:auto;font-size:.88rem;padding-right:.4rem}
.ctl{margin:.35rem 0 .6rem} .ctl label{display:block;font-weight:600} .ctl input,.ctl select{width:9rem}
.ctl .usd{width:8rem} .ctl small{display:block;color:#666} .msg{color:#b03030;display:block;font-size:.82rem}
.ctl.bad input,.ctl.bad select{border:2px solid #b03030} .ctl.set label::after{content:" (set)";color:#36c}
.bar{position:relative;height:10px;background:#f1f1f1;margin:.2rem 0;width:100%}
.bar .band{position:absolute;top:0;height:10px;background:#cfe3f7}
.bar .be{position:absolute;top:-3px;width:3px;height:16px;background:#c33}
.bar .now{position:absolute;top:-3px;width:3px;height:16px;background:#222}
#status{font-size:.9rem;color:#444} #progress{font-size:.85rem;color:#555} #errors{color:#b03030}
button{margin:.15rem .2rem .15rem 0} fieldset{border:1px solid #ddd;margin:.5rem 0} legend{font-weight:700}
.summary{font-size:1.05rem} #saved td,#saved th{font-size:.85rem}
"""

_SCRIPT = r"""
const CLIENT = (crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2));
let base = null, req = {advisor: {}, assumptions: {}}, busy = false, again = false, last = null;
let answers = 0, failures = 0;  // answers shown and refusals (read by the browser test)
const saved = [];
const $ = (s) => document.querySelector(s);
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c]));
const fmt = (v) => (typeof v === 'number' ? (Math.abs(v) >= 1000 ? v.toLocaleString('en-US', {maximumFractionDigits: 0}) : Number(v.toPrecision(4)).toString()) : (v === null || v === undefined ? '—' : String(v)));
const clone = (o) => JSON.parse(JSON.stringify(o));

async function call(path, body) {
  const r = await fetch(path, {method: body === undefined ? 'GET' : 'POST',
    headers: {'Content-Type': 'application/json', 'X-Client': CLIENT},
    body: body === undefined ? undefined : JSON.stringify(body)});
  let data = null;
  try { data = await r.json(); } catch (e) { data = {errors: [{control: 'request', message: 'the server answered ' + r.status}]}; }
  return [r.status, data];
}

function setStatus(t) { $('#status').textContent = t; }

async function submit() {
  if (busy) { again = true; return; }
  busy = true; again = false; clearErrors();
  setStatus('computing…'); $('#cancel').hidden = false;
  const [code, a] = await call('/api/whatif', req);
  if (code === 409) { busy = false; $('#cancel').hidden = true; showErrors(a.errors); return; }
  if (a.running) { follow(a.task); return; }
  finish(a);
}

function follow(task) {
  const src = new EventSource('/api/tasks/' + task + '/events');
  src.addEventListener('progress', (e) => showProgress(JSON.parse(e.data)));
  src.addEventListener('done', (e) => { src.close(); finish(JSON.parse(e.data)); });
  src.onerror = () => { src.close(); call('/api/tasks/' + task).then(([c, a]) => a.running ? setTimeout(() => follow(task), 500) : finish(a)); };
}

function showProgress(ev) {
  const bar = ev.total ? ` <progress value="${ev.done}" max="${ev.total}"></progress>` : '';
  $('#progress').innerHTML = `${esc(ev.text)}${bar} <small>${ev.elapsed_s.toFixed(1)} s</small>`;
}

function finish(a) {
  busy = false; $('#cancel').hidden = true; $('#progress').textContent = '';
  if (a.cancelled) setStatus('cancelled: the page shows the last answer');
  else if (a.errors) { showErrors(a.errors); setStatus('not computed: see the message next to the control'); }
  else if (a.result) render(a.result);
  if (again) submit();
}

function clearErrors() {
  document.querySelectorAll('.msg').forEach((m) => { m.textContent = ''; });
  document.querySelectorAll('.ctl.bad').forEach((c) => c.classList.remove('bad'));
  $('#errors').textContent = '';
}

function showErrors(errors) {
  failures += 1;
  for (const e of errors || []) {
    const box = document.getElementById('ctl-' + e.control);
    if (box) { box.classList.add('bad'); box.querySelector('.msg').textContent = e.message; }
    else $('#errors').textContent += e.message + ' ';
  }
}

function render(v) {
  last = v; answers += 1;
  for (const k of ['card', 'hinges', 'reasons', 'side', 'sensitivity']) $('#box-' + k).innerHTML = v.html[k];
  for (const [id, fig] of Object.entries(v.figures)) Plotly.react(id, fig.data, fig.layout, {responsive: true});
  $('#chart-tornado').hidden = !v.figures['chart-tornado'];
  renderControls(v.controls);
  renderFixed(v.fixed);
  const how = v.how;
  setStatus(`answered in ${how.wall_s.toFixed(2)} s — stages run: ${how.stages.join(' → ')}`);
}

function valueOf(el) {
  if (el.tagName === 'SELECT') return el.value;
  const t = el.value.trim();
  if (el.type === 'number' || el.dataset.kind === 'number') return t === '' ? null : (isFinite(Number(t)) ? Number(t) : t);
  return t === '' ? null : t;
}

function change(name, value) {
  const [part, key] = [name.split('.')[0], name.slice(name.indexOf('.') + 1)];
  req[part][key] = value;
  submit();
}

function barHtml(c) {
  const r = c.range, be = c.break_even, v = typeof c.value === 'number' ? c.value : null;
  if (!r && be == null) return '';
  const pts = [...(r || []), ...(be != null ? [be] : []), ...(v != null ? [v] : [])];
  let lo = Math.min(...pts), hi = Math.max(...pts); const pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.1 || 1;
  lo -= pad; hi += pad; const x = (q) => (100 * (q - lo) / (hi - lo)).toFixed(2) + '%';
  let h = '<div class="bar">';
  if (r) h += `<span class="band" style="left:${x(r[0])};width:calc(${x(r[1])} - ${x(r[0])})" title="plausible range ${fmt(r[0])}–${fmt(r[1])}"></span>`;
  if (be != null) h += `<span class="be" style="left:${x(be)}" title="break-even ${fmt(be)}"></span>`;
  if (v != null) h += `<span class="now" style="left:${x(v)}" title="now ${fmt(v)}"></span>`;
  return h + '</div>';
}

function flipText(c) {
  if (c.break_even == null) return c.range ? 'no break-even: the recommendation holds at every value' : '';
  let t = `flips at ${fmt(c.break_even)}`;
  if (c.break_even_unit_price_usd != null) t += ` (${fmt(c.break_even_unit_price_usd)} USD per ${esc(c.item)})`;
  const inside = c.range ? c.range[0] <= c.break_even && c.break_even <= c.range[1] : c.flips;
  t += ` → ${esc(c.design_then || '')}` + (inside ? ' (inside its plausible range)' : ' (outside its plausible range)');
  return t;
}

function controlHtml(c) {
  const id = 'ctl-' + c.name, now = flat(req), was = flat(base.request);
  const set = c.name in now && JSON.stringify(now[c.name]) !== JSON.stringify(was[c.name] === undefined ? null : was[c.name]);
  let input;
  if (c.kind === 'select') {
    input = `<select data-name="${esc(c.name)}">` + c.options.map((o) => `<option${String(o) === String(c.value) ? ' selected' : ''}>${esc(o)}</option>`).join('') + '</select>';
  } else {
    const list = c.kind === 'text' ? ` list="dl-${esc(c.name)}"` : '';
    const shown = typeof c.value === 'number' ? Number(c.value.toPrecision(6)) : c.value;
    input = `<input data-name="${esc(c.name)}" data-kind="${c.kind}"${list} value="${shown == null ? '' : esc(shown)}">`;
    if (c.kind === 'text') input += `<datalist id="dl-${esc(c.name)}">` + c.options.map((o) => `<option value="${esc(o)}">`).join('') + '</datalist>';
  }
  if (c.unit_price_usd != null) {
    const usd = typeof c.value === 'number' ? c.value * c.unit_price_usd : '';
    input += ` = <input class="usd" data-usd-of="${esc(c.name)}" data-unit="${c.unit_price_usd}" value="${usd === '' ? '' : Math.round(usd)}"> USD per ${esc(c.item)}`;
  }
  const unit = c.unit && !c.unit_price_usd ? ` <small style="display:inline">${esc(c.unit)}</small>` : '';
  let notes = '';
  if (c.group === 'assumptions') {
    notes = barHtml(c) + `<small>${c.kind === 'select' ? (c.design_then ? 'other value → ' + esc(c.design_then) + (c.flips ? ' (flips)' : ' (holds)') : '') : flipText(c)}</small>`;
    notes += `<small title="${esc(c.source || '')}">base ${esc(fmt(c.base))}; ${esc((c.source || '').slice(0, 90))}${(c.source || '').length > 90 ? '…' : ''}</small>`;
  }
  return `<div class="ctl${set ? ' set' : ''}" id="${esc(id)}"><label>${esc(c.label)}</label>${input}${unit}<span class="msg"></span>${notes}</div>`;
}

function flat(r) {
  const o = {};
  for (const [k, v] of Object.entries(r.advisor)) o['advisor.' + k] = v;
  for (const [k, v] of Object.entries(r.assumptions)) o['assumptions.' + k] = v;
  return o;
}

function renderControls(controls) {
  const groups = {job: 'The job (re-measures)', questions: 'The questions (re-weighs)', assumptions: 'The assumption register (re-weighs)'};
  let h = '';
  for (const [g, title] of Object.entries(groups)) {
    h += `<fieldset><legend>${title}</legend>` + controls.filter((c) => c.group === g).map(controlHtml).join('') + '</fieldset>';
  }
  $('#ctl-list').innerHTML = h;
  document.querySelectorAll('#ctl-list [data-name]').forEach((el) => el.addEventListener('change', () => change(el.dataset.name, valueOf(el))));
  document.querySelectorAll('#ctl-list [data-usd-of]').forEach((el) => el.addEventListener('change', () => {
    const t = el.value.trim(), n = Number(t.replace(/,/g, ''));
    change(el.dataset.usdOf, t === '' ? null : (isFinite(n) ? n / Number(el.dataset.unit) : t));
  }));
}

function renderFixed(rows) {
  $('#fixed').innerHTML = '<table><tr><th>assumption</th><th>value</th><th>range</th><th>source</th></tr>' + rows.map((a) =>
    `<tr><td>${esc(a.name)}</td><td class="n">${esc(fmt(a.value))} ${esc(a.unit || '')}</td><td>${a.range ? esc(a.range.map(fmt).join(' – ')) : '—'}</td><td><small>${esc(a.source || '')}</small></td></tr>`).join('') + '</table>';
}

function saveWhatIf() {
  if (!last) return;
  const was = flat(base.request);
  const sets = Object.entries(flat(req)).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(was[k])).map(([k, v]) => `${k.split('.').slice(1).join('.')}=${fmt(v)}`).join(', ');
  saved.push({label: `#${saved.length + 1} ${sets || 'the scenario as given'}`, numbers: last.numbers});
  renderSaved();
}

function renderSaved() {
  const two = saved.slice(-2);
  if (!two.length) return;
  const rows = [['recommendation', (n) => n.recommendation.design], ['verdict', (n) => n.recommendation.verdict]];
  const designs = [...new Set(two.flatMap((s) => Object.keys(s.numbers.probability_best || {})))];
  for (const d of designs) rows.push([`P(cheapest) ${d}`, (n) => fmt((n.probability_best || {})[d])]);
  const fabrics = [...new Set(two.flatMap((s) => s.numbers.fabrics.map((f) => f.design)))];
  for (const d of fabrics) {
    rows.push([`${d} capex (USD)`, (n) => fmt((n.fabrics.find((f) => f.design === d) || {}).capex_usd)]);
    rows.push([`${d} expected loss`, (n) => fmt((n.fabrics.find((f) => f.design === d) || {}).expected_loss)]);
  }
  for (const k of Object.keys(two[0].numbers.objective || {})) rows.push([`${k} risk-adjusted cost`, (n) => fmt((n.objective || {})[k])]);
  $('#saved').innerHTML = '<table><tr><th></th>' + two.map((s) => `<th>${esc(s.label)}</th>`).join('') + '</tr>' +
    rows.map(([name, f]) => '<tr><th>' + esc(name) + '</th>' + two.map((s) => `<td class="n">${esc(f(s.numbers))}</td>`).join('') + '</tr>').join('') + '</table>';
}

async function download(path, name) {
  const r = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json', 'X-Client': CLIENT}, body: JSON.stringify(req)});
  if (!r.ok) { const a = await r.json().catch(() => ({})); showErrors(a.errors || [{control: 'request', message: 'export failed'}]); return; }
  const url = URL.createObjectURL(await r.blob()), link = document.createElement('a');
  link.href = url; link.download = name; document.body.appendChild(link); link.click(); link.remove();
}

let studyWhere = {};
async function openStudy() {
  const i = $('#study-pick').value;
  if (i === '') return;
  $('#study-status').textContent = 'reading…';
  const [code, a] = await call('/api/study', {index: Number(i), where: studyWhere});
  if (code !== 200) { $('#study-status').textContent = (a.errors || []).map((e) => e.message).join(' '); return; }
  $('#study-status').textContent = '';
  $('#study-filters').innerHTML = Object.entries(a.axes).map(([col, vals]) => `<div><b>${esc(col)}</b> ` + vals.map((v) => {
    const on = !studyWhere[col] || studyWhere[col].includes(v);
    return `<label><input type="checkbox" data-col="${esc(col)}" value="${esc(v)}"${on ? ' checked' : ''}> ${esc(v)}</label>`;
  }).join(' ') + '</div>').join('');
  document.querySelectorAll('#study-filters input').forEach((el) => el.addEventListener('change', () => {
    const col = el.dataset.col, boxes = [...document.querySelectorAll(`#study-filters input[data-col="${CSS.escape(col)}"]`)];
    studyWhere[col] = boxes.filter((b) => b.checked).map((b) => b.value);
    openStudy();
  }));
  $('#study-body').innerHTML = a.html;
  for (const [id, fig] of Object.entries(a.figures)) Plotly.newPlot(id, fig.data, fig.layout, {responsive: true});
}

async function start() {
  const [code, s] = await call('/api/state');
  base = s;
  $('#scenario').textContent = s.scenario;
  req = clone(s.request);
  $('#study-pick').innerHTML = '<option value="">—</option>' + s.studies.map((n, i) => `<option value="${i}">${esc(n)}</option>`).join('');
  $('#study-box').hidden = !s.studies.length;
  submit();
}

$('#reset').addEventListener('click', () => { req = clone(base.request); submit(); });
$('#save').addEventListener('click', saveWhatIf);
$('#cancel').addEventListener('click', () => { call('/api/cancel', {}); setStatus('cancelling at the next stage…'); });
$('#export-scenario').addEventListener('click', () => download('/api/export/scenario', 'whatif.yaml'));
$('#export-report').addEventListener('click', () => download('/api/export/report', 'whatif-report.html'));
$('#study-pick').addEventListener('change', () => { studyWhere = {}; openStudy(); });
start();
"""

_BODY = """
<h1>What if? <small id="scenario"></small></h1>
<p id="status">starting…</p><p id="progress"></p><p id="errors"></p>
<div class="cols">
<div id="controls">
<button id="reset">Reset to the scenario</button><button id="save">Save what-if</button>
<button id="cancel" hidden>Cancel</button><br>
<button id="export-scenario">Export as scenario</button><button id="export-report">Export HTML report</button>
<div id="ctl-list"></div>
</div>
<div id="main">
<h2>Recommendation</h2><div id="box-card"></div><div id="box-hinges"></div>
<h2>What flips it</h2><div class="chart" id="chart-tornado"></div><div id="box-sensitivity"></div>
<div id="box-side"></div><div class="chart" id="chart-capex"></div>
<h2>Why</h2><div id="box-reasons"></div>
<h2>Saved what-ifs side by side</h2><div id="saved"><p><small>Save a what-if, change something, save
again: the last two saved are compared here.</small></p></div>
<h2>Assumptions this page does not set</h2><div id="fixed"></div>
<div id="study-box" hidden><h2>Study results</h2>
<label>study folder <select id="study-pick"></select></label> <span id="study-status"></span>
<div id="study-filters"></div><div id="study-body"></div></div>
</div></div>
"""


def render_page() -> str:
    """The whole page: CSS, plotly.js (the reports' basic bundle), the body and the script (no network
    access needed)."""
    from aifabric.report.plotlyjs import plotly_js

    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>aifabric serve</title>"
        f"<style>{_CSS}{_PAGE_CSS}</style><script>{plotly_js()}</script></head><body>"
        f"{_BODY}<script>{_SCRIPT}</script></body></html>"
    )


__all__ = ["render_page"]
