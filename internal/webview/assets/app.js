// Astrid's web view. Every value from the server reaches the page as text
// (textContent, text nodes, setAttribute on non-script attributes), never
// as markup: a topic or capsule name holding HTML shows as what it is.
'use strict';

const SVG = 'http://www.w3.org/2000/svg';
const MAX_TOPIC_ROWS = 200;

const state = { graph: null, version: '', selected: -1, tick: null, nodeEls: [] };

const $ = (id) => document.getElementById(id);

// el builds an element; children that are strings become text nodes.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

function fillBody(table, rows) {
  const body = table.tBodies[0];
  body.replaceChildren(...rows);
}

function td(text, cls) {
  return el('td', cls ? { class: cls } : {}, String(text));
}

async function fetchJSON(path) {
  const r = await fetch(path, { credentials: 'same-origin', cache: 'no-store' });
  if (!r.ok) throw new Error(path + ': HTTP ' + r.status);
  return r.json();
}

async function loadGraph() {
  const g = await fetchJSON('/api/graph');
  state.graph = g;
  state.version = g.version;
  if (state.selected >= g.nodes.length) state.selected = -1;
  drawGraph();
  drawCapsules();
  drawDetails();
  if (state.tick) drawActivity(state.tick);
}

// drawGraph lays the nodes on a circle and draws every edge in one path
// (200 capsules can mean thousands of edges: one element, not thousands).
function drawGraph() {
  const g = state.graph;
  const root = $('graph');
  const n = g.nodes.length;
  const radius = Math.max(160, n * 7);
  const pad = 190;
  const size = 2 * (radius + pad);
  root.setAttribute('viewBox', `0 0 ${size} ${size}`);
  const c = size / 2;
  const pos = g.nodes.map((_, i) => {
    const a = (2 * Math.PI * i) / Math.max(n, 1) - Math.PI / 2;
    return { x: c + radius * Math.cos(a), y: c + radius * Math.sin(a), a };
  });
  state.pos = pos;
  state.center = c;
  const all = svg('path', { class: 'edges', d: edgePath(g.edges, pos, c) });
  const out = svg('path', { class: 'edges out', id: 'edges-out' });
  const inn = svg('path', { class: 'edges in', id: 'edges-in' });
  const nodes = svg('g', { id: 'graph-nodes' });
  state.nodeEls = g.nodes.map((node, i) => {
    const p = pos[i];
    const cls = ['node', node.kind];
    if (node.state === 'failed') cls.push('failed');
    const gEl = svg('g', { class: cls.join(' '), 'data-index': String(i) });
    const circle = svg('circle', { cx: p.x.toFixed(1), cy: p.y.toFixed(1), r: '7' });
    const title = svg('title');
    title.textContent = node.id;
    circle.append(title);
    const right = Math.cos(p.a) >= 0;
    const deg = (p.a * 180) / Math.PI + (right ? 0 : 180);
    // The label continues the radius outward, read left to right.
    const lx = p.x + 12 * Math.cos(p.a);
    const ly = p.y + 12 * Math.sin(p.a);
    const label = svg('text', {
      x: lx.toFixed(1), y: ly.toFixed(1), 'text-anchor': right ? 'start' : 'end',
      'dominant-baseline': 'middle', transform: `rotate(${deg.toFixed(1)} ${lx.toFixed(1)} ${ly.toFixed(1)})`,
    });
    label.textContent = node.id;
    gEl.append(circle, label);
    gEl.addEventListener('click', () => select(i));
    nodes.append(gEl);
    return gEl;
  });
  root.replaceChildren(all, out, inn, nodes);
  highlight();
}

function edgePath(edges, pos, c) {
  let d = '';
  for (const e of edges) {
    const a = pos[e.from], b = pos[e.to];
    // A curve bent toward the centre keeps A→B and B→A apart.
    const mx = (a.x + b.x) / 2, my = (a.y + b.y) / 2;
    const qx = mx + (c - mx) * 0.35, qy = my + (c - my) * 0.35;
    d += `M${a.x.toFixed(1)} ${a.y.toFixed(1)}Q${qx.toFixed(1)} ${qy.toFixed(1)} ${b.x.toFixed(1)} ${b.y.toFixed(1)}`;
  }
  return d;
}

function select(i) {
  state.selected = state.selected === i ? -1 : i;
  highlight();
  drawDetails();
}

function highlight() {
  const g = state.graph;
  state.nodeEls.forEach((e, i) => e.classList.toggle('selected', i === state.selected));
  const s = state.selected;
  const outs = s < 0 ? [] : g.edges.filter((e) => e.from === s);
  const ins = s < 0 ? [] : g.edges.filter((e) => e.to === s);
  $('edges-out').setAttribute('d', edgePath(outs, state.pos, state.center));
  $('edges-in').setAttribute('d', edgePath(ins, state.pos, state.center));
}

function list(title, items) {
  const ul = el('ul');
  for (const it of items) ul.append(el('li', {}, it));
  if (!items.length) ul.append(el('li', { class: 'hint' }, 'none'));
  return [el('h3', {}, title), ul];
}

function drawDetails() {
  const box = $('details');
  const g = state.graph;
  if (!g || state.selected < 0) {
    box.replaceChildren(el('p', { class: 'hint' }, 'Select a capsule to see its grants and topics.'));
    return;
  }
  const node = g.nodes[state.selected];
  const name = (i) => g.nodes[i].id;
  const outs = g.edges.filter((e) => e.from === state.selected).map((e) => `→ ${name(e.to)}  (${e.via.join(', ')}${e.count > e.via.length ? ', …' : ''})`);
  const ins = g.edges.filter((e) => e.to === state.selected).map((e) => `← ${name(e.from)}  (${e.via.join(', ')}${e.count > e.via.length ? ', …' : ''})`);
  box.replaceChildren(
    el('h3', { id: 'details-id' }, node.id),
    el('p', { class: 'hint' }, [node.kind, node.state, (node.engines || []).join(' + ')].filter(Boolean).join(' · ')),
    node.error ? el('p', { class: 'tool error' }, node.error) : null,
    ...list('Grants', node.grants || []),
    ...list('Publish', node.publish || []),
    ...list('Subscribe', (node.subscribe || []).map((s) => s.pattern + (s.interceptor ? ' (interceptor)' : ''))),
    ...list('Tools', node.tools || []),
    ...list('May publish to', outs),
    ...list('May hear from', ins),
  );
}

function drawCapsules() {
  const rows = state.graph.nodes.map((n, i) => {
    const tr = el('tr', { 'data-id': n.id },
      td(n.id), td(n.kind, 'short'), td(n.state || '', 'short'), td((n.engines || []).join(' + '), 'short'),
      td((n.grants || []).join('\n'), 'lines'), td((n.publish || []).join('\n'), 'lines'),
      td((n.subscribe || []).map((s) => s.pattern + (s.interceptor ? ' (interceptor)' : '')).join('\n'), 'lines'));
    tr.addEventListener('click', () => select(i));
    return tr;
  });
  fillBody($('capsules'), rows);
}

function fmtRate(x) {
  return x >= 10 ? x.toFixed(0) : x.toFixed(1);
}

function fmtMS(ms) {
  return ms >= 1000 ? (ms / 1000).toFixed(1) + ' s' : ms + ' ms';
}

function drawActivity(t) {
  if (!state.graph) return;
  const rate = new Map(t.sources.map((s) => [s.name, s.per_s]));
  state.graph.nodes.forEach((n, i) => {
    const r = rate.get(n.id) || 0;
    const e = state.nodeEls[i];
    if (!e) return;
    e.classList.toggle('active', r > 0);
    e.firstChild.setAttribute('r', String(7 + Math.min(9, Math.log2(1 + r) * 2)));
  });
}

function drawTopics(t) {
  const filter = $('topic-filter').value.trim().toLowerCase();
  const rows = [];
  let matched = 0;
  for (const r of t.topics) {
    if (filter && !r.name.toLowerCase().includes(filter)) continue;
    matched++;
    if (rows.length < MAX_TOPIC_ROWS) rows.push(el('tr', {}, td(r.name), td(fmtRate(r.per_s), 'num'), td(r.total, 'num')));
  }
  fillBody($('topics'), rows);
  $('topics-more').textContent = matched > rows.length ? `${matched - rows.length} more topics (filter to find them)` : '';
  $('lost').textContent = t.lost ? `sampled: ${t.lost} events not counted (observer ring overwritten)` : '';
}

function drawTurn(turn, running) {
  const head = `${turn.principal} · session ${turn.session}${turn.turn_id ? ' · turn ' + turn.turn_id : ''}`;
  const status = running ? 'running' : `${turn.outcome} in ${fmtMS(turn.duration_ms || 0)}`;
  const box = el('div', { class: 'turn' + (running ? ' running' : '') },
    el('div', { class: 'meta' }, head + ' · ' + status + ' · started ' + new Date(turn.started).toLocaleTimeString()),
    el('div', { class: 'prompt' }, turn.prompt || '(prompt not seen)'));
  for (const c of turn.tools) {
    // A cancelled (or timed-out) turn ends without its calls' results:
    // say how the turn ended rather than guess how the call did.
    const timing = c.finished ? fmtMS(c.duration_ms || 0) : running ? 'running' : `ended with the turn (${turn.outcome})`;
    box.append(el('div', { class: 'tool' + (c.is_error ? ' error' : ''), 'data-tool': c.name },
      `${c.is_error ? '✗' : c.finished ? '✓' : running ? '…' : '✗'} ${c.name} ${c.arguments} — ${timing}${c.summary ? ': ' + c.summary : ''}`));
  }
  if (turn.tools_left_out) box.append(el('div', { class: 'hint' }, `${turn.tools_left_out} more tool calls`));
  return box;
}

function drawTurns(t) {
  const items = [...t.turns.running.map((x) => drawTurn(x, true)), ...t.turns.recent.map((x) => drawTurn(x, false))];
  if (!items.length) items.push(el('p', { class: 'hint' }, 'No turn yet.'));
  $('turns').replaceChildren(...items);
}

function drawDrops(t) {
  const drops = t.counters.drops.map((d) => el('tr', {}, td(d.where), td(d.reason), td(d.count, 'num')));
  if (!drops.length) drops.push(el('tr', {}, el('td', { colspan: '3', class: 'hint' }, 'nothing dropped')));
  fillBody($('drops'), drops);
  const queues = t.counters.queues.map((q) => el('tr', {}, td(q.owner), td(q.pattern), td(q.messages, 'num'), td(q.bytes, 'num')));
  if (!queues.length) queues.push(el('tr', {}, el('td', { colspan: '4', class: 'hint' }, 'no backlog')));
  fillBody($('queues'), queues);
}

function onTick(t) {
  state.tick = t;
  $('totals').textContent = `${t.counters.published} published · ${t.counters.delivered} delivered · ${t.streams} watching`;
  if (t.graph !== state.version) loadGraph().catch(showError);
  drawActivity(t);
  drawTopics(t);
  drawTurns(t);
  drawDrops(t);
  document.body.dataset.ticks = String(Number(document.body.dataset.ticks || 0) + 1);
}

function setStatus(text, cls) {
  const s = $('status');
  s.textContent = text;
  s.className = 'status ' + (cls || '');
}

function showError(err) {
  setStatus(String(err.message || err), 'down');
}

function connect() {
  const es = new EventSource('/api/events');
  es.addEventListener('open', () => setStatus('live', 'live'));
  es.addEventListener('error', () => setStatus('reconnecting…', 'down'));
  es.addEventListener('tick', (e) => onTick(JSON.parse(e.data)));
}

// loadNotice shows the kernel's standing warning (processes unconfined),
// as text, above everything.
async function loadNotice() {
  const n = await fetchJSON('/api/notice');
  const box = $('notice');
  box.textContent = n.notice || '';
  box.hidden = !n.notice;
}

document.addEventListener('DOMContentLoaded', () => {
  $('topic-filter').addEventListener('input', () => state.tick && drawTopics(state.tick));
  loadNotice().catch(showError);
  loadGraph().catch(showError);
  connect();
});
