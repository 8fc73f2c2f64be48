// Astrid's web view. Every value from the server reaches the page as text
// (textContent, text nodes, setAttribute on non-script attributes), never
// as markup: a topic or capsule name holding HTML shows as what it is.
'use strict';

const SVG = 'http://www.w3.org/2000/svg';
const MAX_TOPIC_ROWS = 200;

const state = { graph: null, version: '', selected: -1, tick: null, nodeEls: [], answers: new Map(), answersPending: new Set() };

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
  // replaceChildren, unlike el, writes a null child out as the text "null".
  box.replaceChildren(...[
    el('h3', { id: 'details-id' }, node.id),
    el('p', { class: 'hint' }, [node.kind, node.state, (node.engines || []).join(' + ')].filter(Boolean).join(' · ')),
    node.error ? el('p', { class: 'tool error' }, node.error) : null,
    ...list('Grants', node.grants || []),
    ...list('Publish', node.publish || []),
    ...list('Subscribe', (node.subscribe || []).map((s) => s.pattern + (s.interceptor ? ' (interceptor)' : ''))),
    ...list('Tools', node.tools || []),
    ...list('May publish to', outs),
    ...list('May hear from', ins),
  ].filter((c) => c !== null));
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
    const args = c.change ? c.change.path : c.arguments;
    box.append(el('div', { class: 'tool' + (c.is_error ? ' error' : ''), 'data-tool': c.name },
      `${c.is_error ? '✗' : c.finished ? '✓' : running ? '…' : '✗'} ${c.name} ${args} — ${timing}${c.summary ? ': ' + c.summary : ''}${c.progress && !c.finished ? ' · ' + c.progress : ''}`));
    if (c.change) box.append(drawChange(c.change));
  }
  if (turn.tools_left_out) box.append(el('div', { class: 'hint' }, `${turn.tools_left_out} more tool calls`));
  for (const line of turn.compactions || []) box.append(el('div', { class: 'hint compaction' }, line));
  if (turn.answer_id) {
    const nodes = state.answers.get(turn.answer_id);
    if (nodes) box.append(el('div', { class: 'answer' }, ...mdNodes(nodes, 0)));
    else loadAnswer(turn.answer_id);
  }
  return box;
}

// The answer's markdown arrives as nodes (webview.MDNode): each kind maps
// to one fixed element, text is text, and a link is made only to an
// absolute http, https or mailto address (the server checked it too).
const MD_TAGS = { p: 'p', ul: 'ul', ol: 'ol', li: 'li', quote: 'blockquote', hr: 'hr', table: 'table', tr: 'tr',
  th: 'th', td: 'td', em: 'em', strong: 'strong', br: 'br' };
const MD_ALIGN = { left: 'left', right: 'right', center: 'center' };
const MD_SPANS = { kw: 'hl-kw', str: 'hl-str', num: 'hl-num', com: 'hl-com' };

function mdNodes(nodes, depth) {
  return (nodes || []).map((n) => mdNode(n, depth + 1));
}

function mdNode(n, depth) {
  if (depth > 40) return document.createTextNode('');
  switch (n.k) {
    case 'text': return document.createTextNode(String(n.t || ''));
    case 'code': return el('code', {}, String(n.t || ''));
    case 'pre': return el('pre', n.lang ? { 'data-lang': String(n.lang) } : {}, el('code', {}, ...mdNodes(n.c, depth)));
    case 'span': {
      const cls = MD_SPANS[n.class];
      return cls ? el('span', { class: cls }, String(n.t || '')) : document.createTextNode(String(n.t || ''));
    }
    case 'h': return el('h' + Math.min(Math.max(Number(n.level) || 1, 1) + 2, 6), { class: 'md-h' }, ...mdNodes(n.c, depth));
    case 'a': {
      const href = safeHref(n.href);
      return href ? el('a', { href, rel: 'noopener noreferrer nofollow', target: '_blank' }, ...mdNodes(n.c, depth))
        : el('span', { class: 'md-link' }, ...mdNodes(n.c, depth));
    }
    case 'ol': return el('ol', Number(n.start) > 1 ? { start: String(Number(n.start)) } : {}, ...mdNodes(n.c, depth));
    case 'th': case 'td': {
      const align = MD_ALIGN[n.align];
      return el(n.k, align ? { class: 'align-' + align } : {}, ...mdNodes(n.c, depth));
    }
  }
  const tag = Object.hasOwn(MD_TAGS, n.k) ? MD_TAGS[n.k] : null;
  return tag ? el(tag, {}, ...mdNodes(n.c, depth)) : document.createTextNode('');
}

function safeHref(h) {
  try {
    const u = new URL(String(h || ''));
    if (u.protocol === 'mailto:') return u.href;
    return ['http:', 'https:'].includes(u.protocol) && u.host && u.host !== location.host ? u.href : null;
  } catch {
    return null;
  }
}

// drawChange shows a write's or an edit's change as a diff, as chat does.
function drawChange(ch) {
  const box = el('div', { class: 'change' });
  for (const l of ch.removed || []) box.append(el('div', { class: 'del' }, '- ' + l));
  for (const l of ch.added || []) box.append(el('div', { class: 'add' }, '+ ' + l));
  if (ch.left_out) box.append(el('div', { class: 'hint' }, `… ${ch.left_out} more lines`));
  return box;
}

// loadAnswer fetches an ended turn's answer once (it never changes) and
// draws the turns again when it comes; answers of turns no longer shown
// are forgotten.
function loadAnswer(id) {
  if (state.answersPending.has(id)) return;
  state.answersPending.add(id);
  fetchJSON('/api/answer/' + encodeURIComponent(id))
    .then((nodes) => { state.answers.set(id, Array.isArray(nodes) ? nodes : []); })
    .catch(() => { state.answers.set(id, []); })
    .finally(() => { state.answersPending.delete(id); if (state.tick) drawTurns(state.tick); });
}

// A value a capsule asked a principal for: the page cannot answer it, it
// says who is asked and how else to set it.
function drawPending(p) {
  return el('div', { class: 'turn pending', 'data-pending': p.key },
    el('div', { class: 'meta' }, `${p.principal} · waiting for a value since ${new Date(p.asked).toLocaleTimeString()}`),
    el('div', { class: 'prompt' }, `${p.capsule} needs ${p.key}: ${p.prompt}`),
    el('div', { class: 'hint' }, `answered in ${p.principal}'s chat or terminal, or: astrid capsule env set --principal ${p.principal} ${p.capsule} ${p.key}`));
}

function drawTurns(t) {
  const shown = new Set(t.turns.recent.map((x) => x.answer_id).filter(Boolean));
  for (const id of state.answers.keys()) if (!shown.has(id)) state.answers.delete(id);
  const items = [...(t.turns.onboarding || []).map(drawPending),
    ...t.turns.running.map((x) => drawTurn(x, true)), ...t.turns.recent.map((x) => drawTurn(x, false))];
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
