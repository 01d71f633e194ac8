// The bi-temporal timeline as an SVG chart: one lane per entity key, each value a
// bar from validFrom to validUntil (to now while active). Superseded values end
// where their successor begins (a dotted link joins them), retracted ones are
// dashed red, expired ephemeral ones grey, inferred candidates amber. Hovering a
// bar shows its evidence turns and recordedAt.
import { formatDate, formatValue } from './format.js';

const NS = 'http://www.w3.org/2000/svg';
const LABEL_W = 150;
const ROW_H = 22;
const LANE_GAP = 8;
const TOP = 24;

function svg(tag, attrs = {}, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

const ms = (iso) => (iso ? Date.parse(iso) : NaN);

/** Where a record's bar ends (epoch ms). */
function endOf(e, byId, now) {
  if (e.validUntil) return ms(e.validUntil);
  if (e.status === 'expired' && e.expiresAt) return ms(e.expiresAt);
  if (e.status === 'retracted' && e.supersededBy && byId.has(e.supersededBy)) return Math.max(ms(e.validFrom), ms(byId.get(e.supersededBy).recordedAt));
  return now;
}

/**
 * Draw `entities` (GET .../entities?history=true) into `host`. `turnText` maps a
 * turn id to its text when known (evidence on hover); `tip` is the tooltip element.
 */
export function renderTimeline(host, tip, entities, { now = Date.now(), turnText = new Map() } = {}) {
  host.replaceChildren();
  if (entities.length === 0) {
    host.append(Object.assign(document.createElement('p'), { className: 'muted', textContent: 'No facts yet.' }));
    return;
  }
  const byId = new Map(entities.map((e) => [e.id, e]));
  const spans = entities.map((e) => ({ e, from: ms(e.validFrom), to: endOf(e, byId, now) }));
  let t0 = Math.min(...spans.map((s) => s.from));
  let t1 = Math.max(now, ...spans.map((s) => s.to));
  if (t1 - t0 < 60_000) t0 = t1 - 60_000;
  const span = t1 - t0;
  t0 -= span * 0.03;
  // Room right of "now", where values that still hold run on.
  t1 += span * 0.15;
  for (const s of spans) if (s.to === now) s.to = t1;
  const width = Math.max(600, host.clientWidth || 900);
  const plotW = width - LABEL_W - 16;
  const x = (t) => LABEL_W + ((t - t0) / (t1 - t0)) * plotW;

  // Lanes by key; values of a lane stacked in rows only where they overlap in world time.
  const lanes = new Map();
  for (const s of spans.sort((a, b) => a.from - b.from || ms(a.e.recordedAt) - ms(b.e.recordedAt))) {
    if (!lanes.has(s.e.key)) lanes.set(s.e.key, []);
    const rows = lanes.get(s.e.key);
    let r = rows.findIndex((end) => end <= s.from);
    if (r < 0) r = rows.push(0) - 1;
    rows[r] = Math.max(s.to, s.from);
    s.row = r;
  }
  const keys = [...lanes.keys()].sort();
  const laneY = new Map();
  let y = TOP;
  for (const k of keys) {
    laneY.set(k, y);
    y += lanes.get(k).length * ROW_H + LANE_GAP;
  }
  const height = y + 4;
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': 'fact timeline' });

  // Time axis: five ticks, and the present.
  for (let i = 0; i <= 4; i++) {
    const t = t0 + ((t1 - t0) * i) / 4;
    const tx = x(t);
    root.append(svg('line', { class: 'grid', x1: tx, x2: tx, y1: TOP - 6, y2: height }));
    root.append(svg('text', { class: 'axis', x: tx, y: 14, 'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle' }, formatDate(t).slice(0, 16)));
  }
  root.append(svg('line', { class: 'now', x1: x(now), x2: x(now), y1: TOP - 6, y2: height }));
  root.append(svg('text', { class: 'axis', x: x(now) + 3, y: height - 4 }, 'now'));

  for (const k of keys) root.append(svg('text', { class: 'lane-label', x: 6, y: laneY.get(k) + 15 }, k));

  const pos = new Map();
  for (const s of spans) {
    const { e } = s;
    const by = laneY.get(e.key) + s.row * ROW_H + 2;
    const x1 = x(s.from);
    const x2 = Math.max(x(s.to), x1 + 2);
    const open = s.to === t1;
    pos.set(e.id, { x1, x2, y: by });
    const cls = ['bar', e.status, e.source === 'inferred' && e.status === 'active' ? 'src-inferred' : ''].join(' ').trim();
    const bar = svg('rect', {
      class: cls,
      x: x1,
      y: by,
      width: x2 - x1,
      height: ROW_H - 5,
      'data-id': e.id,
      'data-key': e.key,
      'data-value': formatValue(e.value),
      'data-status': e.status,
      'data-source': e.source,
      'data-x1': x1.toFixed(2),
      'data-x2': x2.toFixed(2),
      'data-valid-from': e.validFrom,
      'data-valid-until': e.validUntil ?? '',
      'data-open': open ? 'true' : undefined,
    });
    bar.addEventListener('mouseenter', (ev) => showTip(tip, e, turnText, ev));
    bar.addEventListener('mousemove', (ev) => moveTip(tip, ev));
    bar.addEventListener('mouseleave', () => (tip.hidden = true));
    root.append(bar);
    const label = formatValue(e.value) + (e.status === 'active' ? '' : ` (${e.status})`);
    if (x2 - x1 > 30) root.append(svg('text', { class: `bar-label${e.status === 'superseded' || e.status === 'expired' || e.status === 'retracted' ? ' light' : ''}`, x: x1 + 4, y: by + 12 }, label));
  }
  // Supersession and retraction links: from where the old value ends to where its successor begins.
  for (const e of entities) {
    if (!e.supersededBy || !pos.has(e.supersededBy) || !pos.has(e.id)) continue;
    const a = pos.get(e.id);
    const b = pos.get(e.supersededBy);
    root.append(svg('line', { class: 'link', 'data-from': e.id, 'data-to': e.supersededBy, x1: a.x2, y1: a.y + ROW_H / 2, x2: b.x1, y2: b.y + ROW_H / 2 }));
  }
  host.append(root);
}

function showTip(tip, e, turnText, ev) {
  tip.replaceChildren();
  const line = (label, value) => {
    const p = document.createElement('div');
    const b = document.createElement('b');
    b.textContent = `${label}: `;
    p.append(b, String(value));
    tip.append(p);
  };
  line(e.key, formatValue(e.value));
  line('status', `${e.status} · ${e.source} · ${e.category}`);
  line('valid', `${formatDate(e.validFrom)} → ${e.validUntil ? formatDate(e.validUntil) : 'now'}`);
  line('recordedAt', formatDate(e.recordedAt));
  if (e.expiresAt) line('expiresAt', formatDate(e.expiresAt));
  if (e.supersedes) line('supersedes', e.supersedes);
  if (e.supersededBy) line('supersededBy', e.supersededBy);
  for (const t of e.evidence ?? []) line(`evidence ${t}`, turnText.get(t) ?? '(turn compressed or archived)');
  tip.hidden = false;
  moveTip(tip, ev);
}

function moveTip(tip, ev) {
  tip.style.left = `${Math.min(ev.clientX + 12, window.innerWidth - 360)}px`;
  tip.style.top = `${ev.clientY + 12}px`;
}
