// Display helpers shared by the views.

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : String(c));
  return e;
}

export function row(...cells) {
  return el(
    'tr',
    {},
    cells.map((c) => (c instanceof Node && c.tagName === 'TD' ? c : el('td', {}, c))),
  );
}

const SYMBOLS = { INR: '₹', USD: '$', EUR: '€', GBP: '£' };

/** A fact value as people read it: ₹50 lakh, $1,200, 2026-12-04. */
export function formatValue(v) {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'object' && typeof v.amount === 'number') {
    const sym = SYMBOLS[v.currency] ?? `${v.currency} `;
    if (v.currency === 'INR') {
      if (v.amount >= 1e7) return `${sym}${trim(v.amount / 1e7)} crore`;
      if (v.amount >= 1e5) return `${sym}${trim(v.amount / 1e5)} lakh`;
    }
    return `${sym}${v.amount.toLocaleString('en-US')}`;
  }
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function trim(n) {
  return Number.isInteger(n) ? String(n) : n.toFixed(2).replace(/0+$/, '').replace(/\.$/, '');
}

export function formatDuration(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : `${m}:${String(r).padStart(2, '0')}`;
}

export function formatTime(t) {
  if (t === null || t === undefined) return '—';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toLocaleTimeString([], { hour12: false });
}

export function formatDate(t) {
  if (t === null || t === undefined) return '—';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toISOString().replace('T', ' ').slice(0, 19) + 'Z';
}

export function formatMs(v) {
  if (v === null || v === undefined) return '–';
  return v < 10 ? `${v.toFixed(2)} ms` : `${Math.round(v)} ms`;
}

export function formatBytes(b) {
  if (b >= 1 << 30) return `${(b / (1 << 30)).toFixed(2)} GiB`;
  if (b >= 1 << 20) return `${(b / (1 << 20)).toFixed(1)} MiB`;
  return `${Math.round(b / 1024)} KiB`;
}

/** Nearest-rank quantile of an unsorted array; null when empty. */
export function quantile(values, q) {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}
