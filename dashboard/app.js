// memgate live dashboard: plain ES modules, uPlot for the small time-series
// charts, an SVG timeline of its own. State comes from the HTTP read routes
// once (and again after any gap), then live from the tenant's `events` topic.
import uPlot from '/dashboard/vendor/uPlot.esm.js';
import { Api, ApiError, EventStream, storeKey, storedKey } from './api.js';
import { el, formatBytes, formatDate, formatDuration, formatMs, formatTime, formatValue, quantile, row } from './format.js';
import { renderTimeline } from './timeline.js';

const $ = (sel) => document.querySelector(sel);
const VIEWS = ['calls', 'memory', 'search', 'extraction', 'health'];
const LOW_ASR = 0.7;

const state = {
  api: null,
  stream: null,
  view: 'calls',
  calls: new Map(),
  /** Recently ended calls, newest first, with why they ended (`end`, `dropped`, `idle`). */
  ended: [],
  /** Per-second turns and ack samples, by epoch second: the charts' last minute. */
  secs: new Map(),
  selected: null,
  shownSeq: 0,
  loadingTurns: null,
  memory: { agentId: '', userId: '' },
  charts: {},
  gaps: { notices: 0, events: 0 },
  lane: null,
  timers: {},
};

// ---------------------------------------------------------------- start-up and auth

async function boot() {
  $('#auth').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    await tryKey($('#key').value.trim(), true);
  });
  $('#logout').addEventListener('click', () => {
    storeKey('');
    location.reload();
  });
  window.addEventListener('hashchange', route);
  $('#memory-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    location.hash = `#memory/${encodeURIComponent($('#memory-agent').value.trim())}/${encodeURIComponent($('#memory-user').value.trim())}`;
  });
  $('#search-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    runSearch();
  });
  await tryKey(storedKey(), false);
}

async function tryKey(key, typed) {
  const api = new Api(key);
  $('#auth-error').textContent = '';
  try {
    const health = await api.get('/v1/health');
    storeKey(key);
    $('#auth').hidden = true;
    $('#logout').hidden = !key;
    $('#tenant').textContent = `tenant ${health.tenantId}`;
    start(api, key);
  } catch (err) {
    $('#auth').hidden = false;
    if (err instanceof ApiError && err.status === 401) {
      if (typed || key) $('#auth-error').textContent = 'refused: this key is not valid (401 unauthorized)';
      storeKey('');
    } else $('#auth-error').textContent = `cannot reach memgate: ${err.message}`;
    $('#conn').textContent = 'not connected';
    $('#conn').dataset.state = 'down';
  }
}

function start(api, key) {
  state.api = api;
  state.stream?.stop();
  state.stream = new EventStream(key, {
    onEvent,
    onGap,
    onState: (s, why) => {
      $('#conn').dataset.state = s;
      $('#conn').textContent = s === 'live' ? 'live' : s === 'connecting' ? 'connecting…' : `disconnected${why ? `: ${why}` : ''}`;
    },
    onResync: () => resync(),
  });
  state.stream.start();
  clearInterval(state.timers.tick);
  state.timers.tick = setInterval(tick, 1000);
  route();
}

// ---------------------------------------------------------------- navigation

function route() {
  const [view, a, u] = location.hash.slice(1).split('/');
  state.view = VIEWS.includes(view) ? view : 'calls';
  for (const v of VIEWS) $(`#view-${v}`).hidden = v !== state.view;
  for (const a of document.querySelectorAll('#tabs a')) a.classList.toggle('current', a.dataset.view === state.view);
  if (!state.api) return;
  if (state.view === 'memory' && a && u) {
    state.memory = { agentId: decodeURIComponent(a), userId: decodeURIComponent(u) };
    $('#memory-agent').value = state.memory.agentId;
    $('#memory-user').value = state.memory.userId;
    loadMemory();
  }
  if (state.view === 'calls') drawCallCharts();
  if (state.view === 'extraction') loadLane();
  if (state.view === 'health') loadHealth();
}

// ---------------------------------------------------------------- live events

function onEvent(e) {
  const sec = Math.floor(e.at / 1000);
  switch (e.type) {
    case 'session.started': {
      // A reconnect or a reopen continues the call already shown.
      const i = state.ended.findIndex((c) => c.sessionId === e.sessionId);
      const known = state.calls.get(e.sessionId) ?? (i >= 0 ? state.ended.splice(i, 1)[0] : null);
      if (known) {
        known.endedAt = null;
        known.endReason = null;
        state.calls.set(e.sessionId, known);
      } else state.calls.set(e.sessionId, { sessionId: e.sessionId, agentId: e.agentId, userId: e.userId, startedAt: e.at, lastTurnAt: null, turns: 0, duplicates: 0, lastSeq: 0 });
      break;
    }
    case 'turn.appended': {
      const c = callOf(e);
      c.turns++;
      c.lastTurnAt = e.at;
      c.lastSeq = e.data.seq;
      const s = secOf(sec);
      s.turns++;
      if (typeof e.data.ackMs === 'number') s.acks.push(e.data.ackMs);
      if (state.selected === e.sessionId) loadTurns();
      break;
    }
    case 'turn.duplicate': {
      const c = callOf(e);
      c.duplicates++;
      if (state.selected === e.sessionId) appendDuplicate(e);
      break;
    }
    case 'session.ended': {
      const c = state.calls.get(e.sessionId);
      const reason = e.data.reason ?? 'end';
      state.calls.delete(e.sessionId);
      if (c) {
        c.endedAt = e.at;
        c.endReason = reason;
        state.ended.unshift(c);
        state.ended.length = Math.min(state.ended.length, 20);
      }
      if (state.selected === e.sessionId) $('#call-detail-title').textContent += ` · ended (${endLabel(reason)})`;
      break;
    }
    default:
      break;
  }
  if (e.type.startsWith('extraction.') || e.type === 'session.ended' || e.type === 'turn.quarantined') later('lane', 300, () => state.view === 'extraction' && loadLane());
  if (state.view === 'memory' && e.agentId === state.memory.agentId && e.userId === state.memory.userId && /^(extraction\.finished|fact\.|session\.ended|turn\.appended)/.test(e.type))
    later('memory', 200, loadMemory);
  // The charts with the numbers: waiting for the next tick left them up to a second behind the cards.
  later('calls', 100, () => {
    renderCalls();
    drawCallCharts();
  });
}

function callOf(e) {
  let c = state.calls.get(e.sessionId);
  if (!c) state.calls.set(e.sessionId, (c = { sessionId: e.sessionId, agentId: e.agentId, userId: e.userId, startedAt: e.at, lastTurnAt: null, turns: 0, duplicates: 0, lastSeq: 0 }));
  return c;
}

function secOf(sec) {
  let s = state.secs.get(sec);
  if (!s) state.secs.set(sec, (s = { turns: 0, acks: [], p50: null, p99: null }));
  return s;
}

/** Missed events: say so, count them, and re-read every view's state over HTTP. */
function onGap(g) {
  state.gaps.notices++;
  state.gaps.events += g.count;
  const b = $('#gap-banner');
  b.hidden = false;
  b.dataset.missed = String(state.gaps.events);
  b.textContent = `Missed ${g.count} live event${g.count === 1 ? '' : 's'} (${g.topic} #${g.fromSeq}–${g.toSeq}) at ${formatTime(Date.now())}; state re-read over HTTP. Total missed: ${state.gaps.events}.`;
  later('resync', 50, resync);
}

function later(name, ms, fn) {
  if (state.timers[name]) return;
  state.timers[name] = setTimeout(() => {
    state.timers[name] = null;
    fn();
  }, ms);
}

/** Re-read what the page shows (after connecting, reconnecting, or a gap). */
async function resync() {
  await loadCalls();
  if (state.selected) {
    state.shownSeq = 0;
    $('#turns-list').replaceChildren();
    await loadTurns();
  }
  if (state.view === 'memory' && state.memory.agentId) loadMemory();
  if (state.view === 'extraction') loadLane();
  if (state.view === 'health') loadHealth();
}

function tick() {
  if (state.view === 'calls') {
    renderCalls();
    drawCallCharts();
  }
  if (state.view === 'health') loadHealth();
  const old = Math.floor(Date.now() / 1000) - 120;
  for (const s of state.secs.keys()) if (s < old) state.secs.delete(s);
}

// ---------------------------------------------------------------- Calls

async function loadCalls() {
  try {
    const r = await state.api.get('/v1/calls');
    state.calls = new Map(r.calls.map((c) => [c.sessionId, c]));
    state.ended = r.ended ?? [];
    state.secs = new Map();
    r.series.t.forEach((t, i) => state.secs.set(t, { turns: r.series.turnsPerSec[i], acks: [], p50: r.series.ackP50Ms[i], p99: r.series.ackP99Ms[i] }));
    renderCalls();
    drawCallCharts();
  } catch (err) {
    console.warn('calls', err);
  }
}

function lastMinute() {
  const now = Math.floor(Date.now() / 1000);
  const t = [];
  const turns = [];
  const p50 = [];
  const p99 = [];
  let all = [];
  // Seconds known only from the HTTP snapshot (no live acks): their per-second p50s and p99s.
  const snapshotP50 = [];
  let fallback = null;
  let total = 0;
  for (let s = now - 59; s <= now; s++) {
    const b = state.secs.get(s);
    t.push(s);
    turns.push(b ? b.turns : 0);
    total += b ? b.turns : 0;
    p50.push(b ? (b.acks.length ? quantile(b.acks, 0.5) : b.p50) : null);
    p99.push(b ? (b.acks.length ? quantile(b.acks, 0.99) : b.p99) : null);
    if (b) all = all.concat(b.acks);
    if (b && b.p99 !== null) fallback = Math.max(fallback ?? 0, b.p99);
    if (b && b.p50 !== null) snapshotP50.push(b.p50);
  }
  return { t, turns, p50, p99, total, ackP50: all.length ? quantile(all, 0.5) : quantile(snapshotP50, 0.5), ackP99: all.length ? quantile(all, 0.99) : fallback };
}

function renderCalls() {
  const body = $('#calls-table tbody');
  const now = Date.now();
  const calls = [...state.calls.values()].sort((a, b) => b.startedAt - a.startedAt);
  $('#calls-active').textContent = String(calls.length);
  $('#calls-empty').hidden = calls.length > 0;
  const m = lastMinute();
  $('#calls-turns-minute').textContent = String(m.total);
  $('#calls-ack').textContent = m.ackP99 === null ? '–' : `${formatMs(m.ackP50)} / ${formatMs(m.ackP99)}`;
  // Show at most 200 rows: a page of a thousand live rows helps nobody.
  const rows = calls.slice(0, 200).map((c) => {
    const tr = row(
      el('td', { class: 'agent', text: c.agentId }),
      el('td', { class: 'user' }, el('a', { href: `#memory/${encodeURIComponent(c.agentId)}/${encodeURIComponent(c.userId)}`, text: c.userId })),
      el('td', { class: 'session muted', text: c.sessionId }),
      el('td', { class: 'duration', text: formatDuration(now - c.startedAt) }),
      el('td', { class: 'turns', text: String(c.turns) }),
      el('td', { class: 'dups', text: String(c.duplicates) }),
      el('td', { class: 'last', text: c.lastTurnAt ? `${formatDuration(now - c.lastTurnAt)} ago` : '—' }),
      el('td', {}, el('button', { type: 'button', class: 'open', text: 'turns', onclick: () => selectCall(c) })),
    );
    tr.dataset.session = c.sessionId;
    tr.classList.toggle('selected', c.sessionId === state.selected);
    tr.addEventListener('click', (ev) => ev.target.tagName !== 'A' && selectCall(c));
    return tr;
  });
  body.replaceChildren(...rows);
  renderEnded(now);
}

/** How a call ended, in words. */
function endLabel(reason) {
  if (reason === 'dropped') return 'dropped: socket closed without end';
  if (reason === 'idle') return 'idle: presumed gone';
  return reason === 'end' ? 'ended by the agent' : reason;
}

function renderEnded(now) {
  const rows = state.ended.map((c) => {
    const tr = row(
      el('td', { class: 'agent', text: c.agentId }),
      el('td', { class: 'user' }, el('a', { href: `#memory/${encodeURIComponent(c.agentId)}/${encodeURIComponent(c.userId)}`, text: c.userId })),
      el('td', { class: 'session muted', text: c.sessionId }),
      el('td', { class: 'duration', text: formatDuration(c.endedAt - c.startedAt) }),
      el('td', { class: 'turns', text: String(c.turns) }),
      el('td', { class: 'last', text: `${formatDuration(now - c.endedAt)} ago` }),
      el('td', { class: `reason reason-${c.endReason ?? 'end'}`, text: endLabel(c.endReason ?? 'end') }),
    );
    tr.dataset.session = c.sessionId;
    tr.dataset.reason = c.endReason ?? 'end';
    return tr;
  });
  $('#ended-table tbody').replaceChildren(...rows);
}

/** `xRange`: a fixed window of x (seconds) from a function called at each redraw; unset, the data's own extent. */
function chartOpts(title, series, width, xRange) {
  return {
    title: '',
    width,
    height: 140,
    legend: { show: true },
    cursor: { drag: { x: false, y: false } },
    scales: { x: xRange ? { time: true, range: xRange } : { time: true } },
    axes: [
      { stroke: '#8a96a3', grid: { stroke: '#2a3440' }, ticks: { stroke: '#2a3440' } },
      { stroke: '#8a96a3', grid: { stroke: '#2a3440' }, ticks: { stroke: '#2a3440' }, size: 50 },
    ],
    series: [{}, ...series],
  };
}

function drawCallCharts() {
  if (state.view !== 'calls') return;
  const m = lastMinute();
  const width = Math.max(320, Math.floor((document.body.clientWidth - 80) / 2));
  if (!state.charts.turns) {
    state.charts.turns = new uPlot(
      chartOpts('turns/s', [{ label: 'turns/s', stroke: '#4fb3ff', fill: 'rgba(79,179,255,0.15)', paths: uPlot.paths.bars({ size: [0.8] }) }], width),
      [m.t, m.turns],
      $('#chart-turns'),
    );
    state.charts.ack = new uPlot(
      chartOpts(
        'ack',
        [
          // Points always: a quiet minute has a few seconds with acks, and a lone point draws no line.
          { label: 'p50', stroke: '#3ecf8e', spanGaps: true, points: { show: true, size: 6, fill: '#3ecf8e' } },
          { label: 'p99', stroke: '#e5534b', spanGaps: true, points: { show: true, size: 6, fill: '#e5534b' } },
        ],
        width,
      ),
      [m.t, m.p50, m.p99],
      $('#chart-ack'),
    );
  } else {
    state.charts.turns.setData([m.t, m.turns]);
    state.charts.ack.setData([m.t, m.p50, m.p99]);
  }
}

async function selectCall(c) {
  state.selected = c.sessionId;
  state.shownSeq = 0;
  $('#call-detail').hidden = false;
  $('#call-detail-title').textContent = `${c.agentId} / ${c.userId} · ${c.sessionId}`;
  $('#turns-list').replaceChildren();
  renderCalls();
  await loadTurns();
}

/** Fetch the selected call's turns after the last one shown (one request in flight; more events re-run it). */
async function loadTurns() {
  if (state.loadingTurns) {
    state.turnsAgain = true;
    return state.loadingTurns;
  }
  const sid = state.selected;
  state.loadingTurns = (async () => {
    try {
      const r = await state.api.get(`/v1/sessions/${encodeURIComponent(sid)}/turns?afterSeq=${state.shownSeq}`);
      if (sid !== state.selected) return;
      const list = $('#turns-list');
      for (const t of r.turns) {
        if (t.seq <= state.shownSeq) continue;
        state.shownSeq = t.seq;
        list.append(turnItem(t));
      }
      list.scrollTop = list.scrollHeight;
    } catch (err) {
      console.warn('turns', err);
    } finally {
      state.loadingTurns = null;
      if (state.turnsAgain) {
        state.turnsAgain = false;
        loadTurns();
      }
    }
  })();
  return state.loadingTurns;
}

function turnItem(t) {
  const marks = [];
  if (typeof t.asrConfidence === 'number') marks.push(el('span', { class: `mark asr${t.asrConfidence < LOW_ASR ? ' lowasr' : ''}`, text: `ASR ${t.asrConfidence.toFixed(2)}` }));
  if (t.interrupted) marks.push(el('span', { class: 'mark bargein', text: 'barge-in' }));
  return el(
    'li',
    { class: `turn role-${t.role}`, dataset: { seq: String(t.seq), turnId: t.turnId } },
    el('span', { class: 'muted seq', text: `#${t.seq} ${formatTime(t.ts)} ` }),
    el('span', { class: 'role', text: t.role }),
    t.speaker ? el('span', { class: 'speaker muted', text: `${t.speaker}: ` }) : null,
    el('span', { class: 'text', text: t.text }),
    marks,
  );
}

function appendDuplicate(e) {
  $('#turns-list').append(el('li', { class: 'duplicate', dataset: { duplicateOf: e.data.turnId } }, `duplicate ack ${formatTime(e.at)}: turn ${e.data.turnId} (seq ${e.data.seq}) stored once`));
}

// ---------------------------------------------------------------- Memory

async function loadMemory() {
  const { agentId, userId } = state.memory;
  if (!agentId || !userId) return;
  const base = `/v1/agents/${encodeURIComponent(agentId)}/users/${encodeURIComponent(userId)}`;
  $('#memory-status').textContent = 'loading…';
  try {
    const [timeline, context, turns] = await Promise.all([state.api.get(`${base}/entities?history=true`), state.api.get(`${base}/context`), state.api.get(`${base}/turns`)]);
    if (agentId !== state.memory.agentId || userId !== state.memory.userId) return;
    const profile = $('#memory-profile tbody');
    profile.replaceChildren(...Object.entries(context.profile).map(([k, v]) => row(k, formatValue(v))));
    const fact = (f) => {
      const tr = row(el('td', { class: 'key', text: f.key }), el('td', { class: 'value', text: formatValue(f.value) }), f.source, `since ${formatDate(f.validFrom)}`);
      tr.dataset.key = f.key;
      return tr;
    };
    $('#memory-facts tbody').replaceChildren(...context.facts.map(fact));
    $('#memory-possibly tbody').replaceChildren(...context.possibly.map(fact));
    $('#context-block').textContent = context.contextBlock;
    $('#context-tokens').textContent = `${context.contextTokens} tokens`;
    $('#context-tokens').dataset.tokens = String(context.contextTokens);
    const turnText = new Map(turns.turns.map((t) => [t.turnId, `${t.role}${t.speaker ? ` (${t.speaker})` : ''}: ${t.text}`]));
    renderTimeline($('#timeline'), $('#timeline-tip'), timeline.entities, { turnText });
    $('#memory-status').textContent = `${timeline.entities.length} records · read ${formatTime(Date.now())}`;
  } catch (err) {
    $('#memory-status').textContent = `error: ${err.message}`;
  }
}

// ---------------------------------------------------------------- Search

async function runSearch() {
  const body = { agentId: $('#search-agent').value.trim(), userId: $('#search-user').value.trim(), query: $('#search-query').value };
  const k = Number($('#search-k').value);
  if (k) body.k = k;
  const d = Number($('#search-deadline').value);
  if (d) body.deadlineMs = d;
  if ($('#search-asof').value) body.asOf = new Date($('#search-asof').value).toISOString();
  const tbody = $('#search-results tbody');
  try {
    const r = await state.api.post('/v1/search', body);
    $('#search-meta').replaceChildren(`${r.results.length} results in ${formatMs(r.tookMs)}`, r.partial ? el('span', { class: 'tag partial', text: ' partial: the deadline cut a tier ' }) : '');
    tbody.replaceChildren(
      ...r.results.map((x, i) => {
        const marks = [];
        if (x.outdated) marks.push(el('span', { class: 'tag outdated', text: `outdated: ${x.outdated.key} is now ${x.outdated.now === null ? 'no longer set' : formatValue(x.outdated.now)}` }));
        if (x.fact) marks.push(el('span', { class: 'tag', text: `${x.fact.status} · ${x.fact.source}` }));
        const tr = row(String(i + 1), el('td', { class: 'source', text: x.source }), x.score.toFixed(3), x.confidence, el('td', { class: 'text', text: x.text }), el('td', {}, marks));
        tr.dataset.source = x.source;
        return tr;
      }),
    );
  } catch (err) {
    $('#search-meta').textContent = `error: ${err.message}`;
    tbody.replaceChildren();
  }
}

// ---------------------------------------------------------------- Extraction lane

async function loadLane() {
  try {
    const r = await state.api.get('/v1/extraction?minutes=10');
    state.lane = r;
    for (const [k, v] of Object.entries(r.counts)) {
      const n = document.querySelector(`#lane-counts [data-count="${k}"]`);
      if (n) n.textContent = String(v);
    }
    $('#lane-latency').textContent = r.windowLatencyMs.p50 === null ? '–' : `${formatMs(r.windowLatencyMs.p50)} / ${formatMs(r.windowLatencyMs.p99)}`;
    // Turns acked that no committed run has read yet; "behind" = more than one window waiting.
    const b = r.backlog;
    $('#lane-backlog').textContent = b ? `${b.turns} / ${b.usersBehind} / ${b.turns > 0 ? formatDuration(b.oldestAgeMs) : '–'}` : '–';
    $('#lane-errors tbody').replaceChildren(...r.errors.map((e) => row(formatTime(e.at), e.agentId, e.userId, e.state, e.code ?? '', e.message ?? '')));
    $('#lane-recent tbody').replaceChildren(...r.recent.map((e) => row(formatTime(e.at), e.agentId, e.userId, e.state, e.durationMs === undefined ? '' : formatMs(e.durationMs))));
    const data = [r.latency.map((p) => p.at / 1000), r.latency.map((p) => p.durationMs)];
    const width = Math.max(400, document.body.clientWidth - 80);
    // The axis spans the ten minutes the heading names, not the runs' own extent (two runs 80 ms apart made an axis of milliseconds).
    const lastTenMinutes = () => [Date.now() / 1000 - 600, Date.now() / 1000];
    if (!state.charts.lane)
      state.charts.lane = new uPlot(chartOpts('lane', [{ label: 'run ms', stroke: '#d8a84a', points: { show: true, size: 6 }, paths: () => null }], width, lastTenMinutes), data, $('#chart-lane'));
    else state.charts.lane.setData(data);
  } catch (err) {
    console.warn('lane', err);
  }
}

// ---------------------------------------------------------------- Health

async function loadHealth() {
  try {
    const h = await state.api.get('/v1/health');
    $('#health-table tbody').replaceChildren(
      row('status', el('td', { class: 'status', text: h.status })),
      row('tenant', h.tenantId),
      row('profile', h.profile),
      row('uptime', formatDuration(h.uptimeS * 1000)),
      row('memory (RSS / heap used)', `${formatBytes(h.memory.rssBytes)} / ${formatBytes(h.memory.heapUsedBytes)}`),
      row('WebSocket connections', String(h.connections)),
      row('extraction queue', h.extractionQueueReachable ? 'reachable' : 'unreachable'),
      row('node', h.node),
    );
    $('#health-adapters tbody').replaceChildren(...Object.entries(h.adapters).map(([k, v]) => row(k, v)));
    $('#health-servers tbody').replaceChildren(
      ...(h.servers.length
        ? h.servers.map((s) => row(s.server, s.address, s.ok ? `reachable (${s.ms} ms)` : `UNREACHABLE: ${s.problem}`))
        : [row('none', 'embedded profile: every adapter is in-process')]),
    );
  } catch (err) {
    $('#health-table tbody').replaceChildren(row('error', err.message));
  }
}

// For debugging from the console (and tests): the page's state.
window.memgateDashboard = state;
boot();
