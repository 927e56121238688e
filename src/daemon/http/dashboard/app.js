// SPDX-License-Identifier: MIT
// emberd's dashboard: flame scope heat map -> range selection -> flame graph (canvas), diff of two
// ranges, on-call captures, stats strip. No dependencies; everything comes from emberd's API.
'use strict';

(function () {
const $ = (id) => document.getElementById(id);
const API = 'api/v1/';
const NS = 1000000000n;

// ---------------------------------------------------------------------------------------------
// state
const state = {
	mode: 'live',
	hm: null,		// heat map JSON
	colNs: NS,		// column span, ns (BigInt)
	startNs: 0n,		// left edge of column 0, ns (BigInt)
	selA: null,		// {from, to} as BigInt ns, half-open
	selB: null,
	compare: false,		// the next selection is B
	pending: null,		// first click of a click-click selection {col,row}
	drag: null,
	view: null,		// what the flame graph shows: {kind, title, query, folded urls}
	capture: null,		// running capture id
	lastStats: null,
};

// ---------------------------------------------------------------------------------------------
// time helpers: exact decimal seconds from BigInt nanoseconds
function nsToSec(ns) {
	const neg = ns < 0n;
	if (neg) ns = -ns;
	let s = (ns / NS).toString();
	let f = (ns % NS).toString().padStart(9, '0').replace(/0+$/, '');
	return (neg ? '-' : '') + s + (f ? '.' + f : '');
}
function secToNs(s) {	// "12.5" -> 12500000000n
	s = String(s);
	const m = /^(-?)(\d+)(?:\.(\d{0,9}))?/.exec(s);
	if (!m) return 0n;
	const v = BigInt(m[2]) * NS + BigInt((m[3] || '').padEnd(9, '0') || '0');
	return m[1] ? -v : v;
}
function fmtTime(ns) {
	const ms = Number(ns / 1000000n);
	if (state.mode === 'replay') return nsToSec(ns) + ' s';
	const d = new Date(ms);
	return d.toISOString().replace('T', ' ').replace('Z', '');
}
function fmtDur(ns) {
	const s = Number(ns) / 1e9;
	if (s < 1) return (s * 1000).toFixed(0) + ' ms';
	if (s < 120) return s.toFixed(s < 10 ? 2 : 1) + ' s';
	return (s / 60).toFixed(1) + ' min';
}

// ---------------------------------------------------------------------------------------------
// filters and URLs
function filterParams() {
	const p = new URLSearchParams();
	const pid = $('f-pid').value.trim(), comm = $('f-comm').value.trim();
	if (pid) p.set('pid', pid);
	if (comm) p.set('comm', comm);
	if ($('f-idle').checked) p.set('idle', '1');
	return p;
}
function rangeParams(sel, extra) {
	const p = filterParams();
	p.set('from', nsToSec(sel.from));
	p.set('to', nsToSec(sel.to));
	if (extra) for (const [k, v] of Object.entries(extra)) p.set(k, v);
	return p;
}
function absUrl(path) {
	return new URL(path, location.href).href;
}

// ---------------------------------------------------------------------------------------------
// bearer token (http.auth_token_file): the page itself is public, the API is not. The token is
// asked for on the first 401, kept for this tab only (sessionStorage), and sent on every request.
const TOKEN_KEY = 'emberd-token';
let token = sessionStorage.getItem(TOKEN_KEY) || '';
function askToken(msg) {
	$('auth-msg').textContent = msg;
	$('auth').hidden = false;
	$('auth-token').focus();
}
$('auth').addEventListener('submit', (ev) => {
	ev.preventDefault();
	token = $('auth-token').value.trim();
	sessionStorage.setItem(TOKEN_KEY, token);
	location.reload();
});
async function api(url, opts) {
	opts = Object.assign({}, opts);
	if (token) opts.headers = Object.assign({}, opts.headers, { Authorization: 'Bearer ' + token });
	const r = await fetch(url, opts);
	if (r.status === 401)
		askToken(token ? 'emberd refused this token: enter the current one.' : 'This emberd needs its bearer token (the content of http.auth_token_file).');
	return r;
}
// a download link: with a token, fetched with the header and saved from memory
function authDownload(ev) {
	const a = ev.currentTarget;
	if (!token || !a.href) return;
	ev.preventDefault();
	api(a.href).then(async (r) => {
		if (!r.ok) throw new Error(r.status + ' ' + r.statusText);
		const cd = r.headers.get('Content-Disposition') || '';
		const m = /filename="?([^";]+)"?/.exec(cd);
		const url = URL.createObjectURL(await r.blob());
		const tmp = document.createElement('a');
		tmp.href = url;
		tmp.download = m ? m[1] : (a.id === 'download-svg' ? 'flamegraph.svg' : 'profile.folded');
		document.body.appendChild(tmp);
		tmp.click();
		tmp.remove();
		setTimeout(() => URL.revokeObjectURL(url), 10000);
	}).catch((e) => { $('fg-status').textContent = 'download failed: ' + e.message; });
}

async function getJSON(url, opts) {
	const r = await api(url, opts);
	const body = await r.text();
	let j = null;
	try { j = JSON.parse(body); } catch (e) { /* not JSON */ }
	if (!r.ok) throw new Error((j && j.error ? j.error + (j.param ? ' (' + j.param + ')' : '') : body) || r.statusText);
	return j;
}
async function getText(url) {
	const r = await api(url);
	const body = await r.text();
	if (!r.ok) {
		let msg = body;
		try { const j = JSON.parse(body); msg = j.error + (j.param ? ' (' + j.param + ')' : ''); } catch (e) { /* */ }
		throw new Error(msg);
	}
	return body;
}

// ---------------------------------------------------------------------------------------------
// stats strip
async function pollStats() {
	let s;
	try { s = await getJSON(API + 'stats'); } catch (e) { return; }
	state.mode = s.mode;
	$('mode').textContent = s.mode;
	const st = s.store || {};
	const prev = state.lastStats;
	if (s.mode === 'live' && prev && st.appended !== undefined && s.uptime_s > prev.uptime_s) {
		const rate = (st.appended - prev.store.appended) / (s.uptime_s - prev.uptime_s);
		$('st-rate').textContent = rate.toFixed(0);
	} else if (s.mode === 'replay') {
		$('st-rate').textContent = 'replay';
	}
	// losses: samples not kept (the sampler's lost, the store's drops) and stacks lost to
	// stack-map collisions; the breakdown is in the tooltip
	const sa = s.sampler || {};
	const parts = { 'sampler lost': sa.lost, 'stack map collisions (kernel)': sa.kern_eexist,
		'stack map collisions (user)': sa.user_eexist, 'stacks missing': sa.stack_missing,
		'store dropped': st.dropped, 'evicted by the memory limit': st.evicted_memory };
	let lost = 0;
	const lines = [];
	for (const [k, v] of Object.entries(parts)) {
		if (typeof v !== 'number') continue;
		if (k !== 'evicted by the memory limit') lost += v;
		lines.push(`${k}: ${v}`);
	}
	$('st-losses').textContent = String(lost);
	$('st-losses').parentElement.title = lines.join('\n');
	let unres = null;
	const findShare = (o) => {
		if (!o || typeof o !== 'object') return;
		for (const k in o) {
			if (/unresolved_share/.test(k) && typeof o[k] === 'number') unres = o[k];
			else findShare(o[k]);
		}
	};
	findShare(s);
	$('st-unresolved').textContent = unres === null ? 'n/a' : (unres * 100).toFixed(1) + '%';
	if (st.retention_s) {
		const used = Math.max(st.retained_s ? st.retained_s / st.retention_s : 0, st.used_share || 0);
		$('st-retention').textContent = (used * 100).toFixed(1) + '%';
	} else {
		$('st-retention').textContent = 'n/a';
	}
	$('st-samples').textContent = String(st.samples ?? '–');
	if (!prev && s.mode === 'live') $('live').checked = true;
	if (!prev) { $('capture-start').disabled = s.mode !== 'live'; if (s.mode !== 'live') $('capture-status').textContent = 'captures need live sampling (replay mode)'; }
	state.lastStats = s;
}

// ---------------------------------------------------------------------------------------------
// heat map
const hmCanvas = $('heatmap');
let cellW = 10, cellH = 8;
const AXIS_H = 18, AXIS_W = 0;

async function loadHeatmap() {
	const [col, rows] = $('arrangement').value.split(':');
	const p = filterParams();
	p.set('column_s', col);
	p.set('rows', rows);
	let hm;
	try {
		hm = await getJSON(API + 'heatmap?' + p);
	} catch (e) {
		$('hm-info').textContent = 'heat map: ' + e.message;
		return;
	}
	state.hm = hm;
	state.startNs = BigInt(hm.start_ns);
	state.colNs = secToNs(hm.column_s);
	drawHeatmap();
	$('hm-info').textContent = `${hm.columns} columns × ${hm.rows} rows, ${hm.total} samples, max ${hm.max} per cell`;
}

function drawHeatmap() {
	const hm = state.hm;
	if (!hm) return;
	const avail = Math.max(400, hmCanvas.parentElement.clientWidth - 4);
	cellW = Math.max(2, Math.min(20, Math.floor(avail / hm.columns)));
	cellH = hm.rows > 60 ? Math.max(2, Math.floor(400 / hm.rows)) : (hm.rows > 50 ? 6 : 8);
	hmCanvas.width = AXIS_W + hm.columns * cellW;
	hmCanvas.height = hm.rows * cellH + AXIS_H;
	hmCanvas.dataset.columns = hm.columns;
	hmCanvas.dataset.rows = hm.rows;
	hmCanvas.dataset.total = hm.total;
	const ctx = hmCanvas.getContext('2d');
	ctx.fillStyle = '#fff';
	ctx.fillRect(0, 0, hmCanvas.width, hmCanvas.height);
	const max = hm.max || 1;
	for (let c = 0; c < hm.columns; c++) {
		const col = hm.values[c];
		for (let r = 0; r < hm.rows; r++) {
			const v = col[r];
			if (!v) continue;
			// white -> dark red, darkness proportional to the count (FlameScope's scale)
			const t = v / max;
			const g = Math.round(255 * (1 - t) * 0.95), rr = Math.round(255 - 120 * t);
			ctx.fillStyle = `rgb(${rr},${g},${g})`;
			ctx.fillRect(AXIS_W + c * cellW, (hm.rows - 1 - r) * cellH, cellW, cellH);
		}
	}
	drawSelection(ctx, state.selA, 'rgba(21,101,192,0.35)', '#1565c0');
	drawSelection(ctx, state.selB, 'rgba(46,125,50,0.35)', '#2e7d32');
	if (state.drag && state.drag.cur) {
		const s = rangeOfCells(state.drag.start, state.drag.cur);
		drawSelection(ctx, s, state.compare ? 'rgba(46,125,50,0.25)' : 'rgba(21,101,192,0.25)', '#555');
	} else if (state.pending) {
		const s = rangeOfCells(state.pending, state.pending);
		drawSelection(ctx, s, 'rgba(0,0,0,0.25)', '#000');
	}
	// x axis: seconds (or minutes/hours) from the start
	ctx.fillStyle = '#444';
	ctx.font = '10px Verdana, sans-serif';
	const every = Math.max(1, Math.ceil(60 / cellW));
	for (let c = 0; c < hm.columns; c += every) {
		const label = hm.column_s >= 3600 ? (c * hm.column_s / 3600) + 'h' : (c * hm.column_s) + 's';
		ctx.fillText(label, AXIS_W + c * cellW + 1, hm.rows * cellH + 12);
	}
}

function cellRange(c, r) {
	const hm = state.hm;
	const rows = BigInt(hm.rows);
	const base = state.startNs + BigInt(c) * state.colNs;
	// row r covers [ceil(r*col/rows), ceil((r+1)*col/rows)) within the column (heatmap.h)
	const ceil = (a) => (a + rows - 1n) / rows;
	return { from: base + ceil(BigInt(r) * state.colNs), to: base + ceil(BigInt(r + 1) * state.colNs) };
}
// two cells in painting order (column by column, bottom to top) -> half-open range
function rangeOfCells(a, b) {
	const ia = a.col * state.hm.rows + a.row, ib = b.col * state.hm.rows + b.row;
	const lo = ia <= ib ? a : b, hi = ia <= ib ? b : a;
	return { from: cellRange(lo.col, lo.row).from, to: cellRange(hi.col, hi.row).to };
}
function drawSelection(ctx, sel, fill, stroke) {
	if (!sel || !state.hm) return;
	const hm = state.hm;
	const rowNs = state.colNs / BigInt(hm.rows);
	for (let c = 0; c < hm.columns; c++) {
		const c0 = state.startNs + BigInt(c) * state.colNs, c1 = c0 + state.colNs;
		if (sel.to <= c0 || sel.from >= c1) continue;
		const r0 = sel.from > c0 ? Number((sel.from - c0) / rowNs) : 0;
		const r1 = sel.to < c1 ? Number((sel.to - c0 - 1n) / rowNs) : hm.rows - 1;
		ctx.fillStyle = fill;
		ctx.fillRect(AXIS_W + c * cellW, (hm.rows - 1 - r1) * cellH, cellW, (r1 - r0 + 1) * cellH);
	}
	ctx.strokeStyle = stroke;
}
function cellAt(ev) {
	const hm = state.hm;
	if (!hm) return null;
	const rect = hmCanvas.getBoundingClientRect();
	const x = (ev.clientX - rect.left) * hmCanvas.width / rect.width;
	const y = (ev.clientY - rect.top) * hmCanvas.height / rect.height;
	const col = Math.floor((x - AXIS_W) / cellW), rowFromTop = Math.floor(y / cellH);
	if (col < 0 || col >= hm.columns || rowFromTop < 0 || rowFromTop >= hm.rows) return null;
	return { col, row: hm.rows - 1 - rowFromTop };
}

hmCanvas.addEventListener('mousedown', (ev) => {
	const c = cellAt(ev);
	if (!c) return;
	if (ev.shiftKey) state.compare = true;
	state.drag = { start: c, cur: null, moved: false };
});
hmCanvas.addEventListener('mousemove', (ev) => {
	const c = cellAt(ev);
	const tip = $('hm-tip');
	if (c) {
		const r = cellRange(c.col, c.row);
		const v = state.hm.values[c.col][c.row] || 0;
		tip.hidden = false;
		tip.style.left = (ev.clientX + 12) + 'px';
		tip.style.top = (ev.clientY + 12) + 'px';
		tip.textContent = `${fmtTime(r.from)} +${fmtDur(r.to - r.from)}: ${v} samples`;
	} else {
		tip.hidden = true;
	}
	if (state.drag && c && (c.col !== state.drag.start.col || c.row !== state.drag.start.row)) {
		state.drag.cur = c;
		state.drag.moved = true;
		drawHeatmap();
	}
});
hmCanvas.addEventListener('mouseleave', () => { $('hm-tip').hidden = true; });
window.addEventListener('mouseup', (ev) => {
	const d = state.drag;
	if (!d) return;
	state.drag = null;
	const c = cellAt(ev) || d.cur;
	if (d.moved && c) {
		state.pending = null;
		select(rangeOfCells(d.start, c));
		return;
	}
	// click-click
	if (!state.pending) {
		state.pending = d.start;
		drawHeatmap();
		$('selection-info').textContent = 'first cell chosen: click a second cell to end the range';
	} else {
		const s = rangeOfCells(state.pending, d.start);
		state.pending = null;
		select(s);
	}
});

function select(sel) {
	if (state.compare && state.selA) {
		state.selB = sel;
		state.compare = false;
	} else {
		state.selA = sel;
		state.selB = null;
		state.compare = false;
	}
	drawHeatmap();
	showSelection();
	loadFlame();
}

function showSelection() {
	const el = $('selection-info');
	el.textContent = '';
	const add = (cls, label, s) => {
		const span = document.createElement('span');
		span.className = cls;
		span.textContent = `${label}: ${fmtTime(s.from)} – ${fmtTime(s.to)} (${fmtDur(s.to - s.from)})`;
		span.dataset.from = nsToSec(s.from);
		span.dataset.to = nsToSec(s.to);
		el.appendChild(span);
		el.appendChild(document.createTextNode('  '));
	};
	if (state.selA) add('a', state.selB ? 'A' : 'range', state.selA);
	if (state.selB) add('b', 'B', state.selB);
	$('compare').disabled = !state.selA;
}

$('compare').addEventListener('click', () => {
	state.compare = true;
	$('selection-info').appendChild(document.createTextNode(' — now select range B on the heat map'));
});

// ---------------------------------------------------------------------------------------------
// flame graph: folded text -> tree -> canvas (frames under half a pixel are pruned when drawn;
// search and Matched % use the whole tree; downloads are the server's full SVG)
function parseFolded(text, into, which) {
	const root = into || { name: 'all', a: 0, b: 0, kids: new Map() };
	let start = 0;
	const n = text.length;
	while (start < n) {
		let end = text.indexOf('\n', start);
		if (end < 0) end = n;
		const line = text.slice(start, end);
		start = end + 1;
		const sp = line.lastIndexOf(' ');
		if (sp <= 0) continue;
		const count = Number(line.slice(sp + 1));
		if (!(count > 0)) continue;
		const frames = line.slice(0, sp).split(';');
		let node = root;
		node[which] += count;
		for (const f of frames) {
			if (f === '') continue;
			let k = node.kids.get(f);
			if (!k) { k = { name: f, a: 0, b: 0, kids: new Map(), parent: node }; node.kids.set(f, k); }
			k[which] += count;
			node = k;
		}
	}
	return root;
}

const fg = {
	root: null,
	zoom: null,
	diff: false,
	drawn: [],	// frames drawn: {node, x, y, w, depth}
	matchRe: null,
	matched: new Set(),
	rowH: 16,
};
const fgCanvas = $('flamegraph');

function hashName(name) {	// flamegraph.pl-like: early characters weigh more
	let vector = 0, weight = 1, max = 1, mod = 10;
	name = name.replace(/\(.*/, '');
	for (let i = 0; i < name.length && i < 8; i++) {
		const v = name.charCodeAt(i) % mod;
		vector += (v / (mod++ - 1)) * weight;
		max += weight;
		weight *= 0.7;
	}
	return 1 - vector / max;
}
function frameColor(node) {
	if (fg.matched.has(node)) return 'rgb(230,0,230)';
	if (fg.diff) {
		const delta = node.b - node.a * fg.scaleA;
		const t = Math.min(1, Math.abs(delta) / (fg.maxDelta || 1));
		const c = Math.round(255 * (1 - t));
		return delta > 0 ? `rgb(255,${c},${c})` : delta < 0 ? `rgb(${c},${c},255)` : 'rgb(250,250,250)';
	}
	const n = node.name, v1 = hashName(n), v2 = hashName(n.split('').reverse().join(''));
	if (n.endsWith('_[k]')) return `rgb(${200 + Math.round(55 * v1)},${120 + Math.round(60 * v2)},40)`;
	if (n.endsWith('_[j]')) return `rgb(${50 + Math.round(60 * v1)},${180 + Math.round(60 * v2)},${50 + Math.round(60 * v1)})`;
	if (n.endsWith('_[i]')) return `rgb(${80 + Math.round(60 * v1)},${190 + Math.round(50 * v2)},190)`;
	if (n.endsWith('_[py]')) return `rgb(${70 + Math.round(50 * v1)},${130 + Math.round(60 * v2)},${210 + Math.round(40 * v1)})`;
	return `rgb(${205 + Math.round(50 * v2)},${Math.round(230 * v1)},${Math.round(55 * v2)})`;
}
function width(node) { return fg.diff ? node.b : node.a; }
function depthOf(root) {
	let max = 0;
	const stack = [[root, 0]];
	while (stack.length) {
		const [n, d] = stack.pop();
		if (d > max) max = d;
		for (const k of n.kids.values()) stack.push([k, d + 1]);
	}
	return max;
}

// children in name order, as flamegraph.pl sorts them; computed once per node
function sortedKids(n) {
	if (!n.sorted || n.sorted.length !== n.kids.size)
		n.sorted = [...n.kids.values()].sort((p, q) => (p.name < q.name ? -1 : p.name > q.name ? 1 : 0));
	return n.sorted;
}

function drawFlame() {
	const root = fg.root;
	fg.drawn = [];
	const cssW = fgCanvas.parentElement.clientWidth || 1200;
	const dpr = window.devicePixelRatio || 1;
	if (!root || width(root) === 0) {
		fgCanvas.style.height = '40px';
		fgCanvas.width = cssW * dpr;
		fgCanvas.height = 40 * dpr;
		const ctx = fgCanvas.getContext('2d');
		ctx.scale(dpr, dpr);
		ctx.clearRect(0, 0, cssW, 40);
		ctx.fillStyle = '#777';
		ctx.font = '12px Verdana, sans-serif';
		ctx.fillText(root ? 'No samples in this range (check the filters).' : 'Select a range on the heat map.', 10, 24);
		fgCanvas.dataset.frames = '0';
		return;
	}
	const zoom = fg.zoom || root;
	const maxDepth = fg.maxDepth;
	const H = (maxDepth + 2) * fg.rowH;
	fgCanvas.style.height = H + 'px';
	fgCanvas.width = Math.round(cssW * dpr);
	fgCanvas.height = Math.round(H * dpr);
	const ctx = fgCanvas.getContext('2d');
	ctx.scale(dpr, dpr);
	ctx.clearRect(0, 0, cssW, H);
	ctx.font = '11px Verdana, sans-serif';
	ctx.textBaseline = 'middle';
	const total = width(zoom);
	const px = cssW / total;
	// ancestors of the zoomed frame span the whole width
	const anc = [];
	for (let n = zoom; n; n = n.parent) anc.unshift(n);
	const y = (d) => H - (d + 1) * fg.rowH;
	anc.forEach((n, d) => drawFrame(ctx, n, 0, y(d), cssW, d, n !== zoom));
	// the zoomed subtree, iteratively; children in name order as flamegraph.pl sorts them
	const stack = [[zoom, 0, anc.length - 1]];
	while (stack.length) {
		const [n, x, d] = stack.pop();
		let cx = x;
		for (const k of sortedKids(n)) {
			const w = width(k) * px;
			if (w >= 0.5) {
				drawFrame(ctx, k, cx, y(d + 1), w, d + 1, false);
				stack.push([k, cx, d + 1]);
			}
			cx += w;
		}
	}
	fgCanvas.dataset.frames = String(fg.drawn.length);
	updateMatched();
}
function drawFrame(ctx, node, x, yy, w, depth, faded) {
	ctx.fillStyle = frameColor(node);
	ctx.globalAlpha = faded ? 0.6 : 1;
	ctx.fillRect(x, yy, Math.max(w - 0.5, 0.5), fg.rowH - 1);
	ctx.globalAlpha = 1;
	fg.drawn.push({ node, x, y: yy, w, depth });
	if (w > 24) {
		const max = Math.floor((w - 6) / 6.6);
		let label = node.name;
		if (label.length > max) label = max > 2 ? label.slice(0, max - 2) + '..' : '';
		if (label) {
			ctx.fillStyle = '#000';
			ctx.fillText(label, x + 3, yy + fg.rowH / 2);
		}
	}
}
function frameAt(ev) {
	const rect = fgCanvas.getBoundingClientRect();
	const x = ev.clientX - rect.left, yy = ev.clientY - rect.top;
	for (let i = fg.drawn.length - 1; i >= 0; i--) {
		const f = fg.drawn[i];
		if (x >= f.x && x < f.x + f.w && yy >= f.y && yy < f.y + fg.rowH) return f;
	}
	return null;
}
function describe(node) {
	const total = width(fg.root) || 1;
	if (fg.diff) {
		const d = node.b - node.a * fg.scaleA;
		return `${node.name} (A ${node.a}, B ${node.b} samples, ${(100 * node.b / total).toFixed(2)}% of B, ${d >= 0 ? '+' : ''}${d.toFixed(0)})`;
	}
	return `${node.name} (${node.a} samples, ${(100 * node.a / total).toFixed(2)}%)`;
}
fgCanvas.addEventListener('mousemove', (ev) => {
	const f = frameAt(ev);
	$('fg-status').textContent = f ? describe(f.node) : '\u00a0';
	fgCanvas.title = f ? describe(f.node) : '';
});
fgCanvas.addEventListener('click', (ev) => {
	const f = frameAt(ev);
	if (!f) return;
	fg.zoom = f.node === fg.root ? null : f.node;
	drawFlame();
});
$('fg-reset').addEventListener('click', () => { fg.zoom = null; drawFlame(); });

// search: every frame whose name matches; Matched % counts each matched subtree once
function applySearch() {
	const q = $('fg-search').value;
	fg.matched = new Set();
	fg.matchRe = null;
	if (q) {
		try { fg.matchRe = new RegExp(q); } catch (e) { $('fg-matched').textContent = 'bad regex'; return; }
	}
	if (fg.root && fg.matchRe) {
		const re = fg.matchRe, matched = fg.matched;
		const stack = [fg.root];
		while (stack.length) {
			const n = stack.pop();
			if (n !== fg.root && re.test(n.name)) matched.add(n);
			for (const k of n.kids.values()) stack.push(k);
		}
	}
	drawFlame();
}
function updateMatched() {
	const el = $('fg-matched');
	if (!fg.matchRe || !fg.root) { el.textContent = ''; el.dataset.pct = ''; return; }
	const zoom = fg.zoom || fg.root;
	let sum = 0;
	const stack = [zoom];
	while (stack.length) {
		const n = stack.pop();
		if (fg.matched.has(n)) { sum += width(n); continue; }
		for (const k of n.kids.values()) stack.push(k);
	}
	const pct = 100 * sum / (width(zoom) || 1);
	el.textContent = `Matched: ${pct.toFixed(1)}%`;
	el.dataset.pct = pct.toFixed(3);
}
let searchTimer = null;
$('fg-search').addEventListener('input', () => {
	clearTimeout(searchTimer);
	searchTimer = setTimeout(applySearch, 120);
});

function setView(v) {
	state.view = v;
	$('fg-title').textContent = v.title;
	/* the token itself stays out of the clipboard: the command reads it from the environment */
	const auth = token ? ' -H "Authorization: Bearer $EMBER_TOKEN"' : '';
	const cmd = `curl -s${auth} '${absUrl(v.svgUrl)}' -o flamegraph.svg`;
	$('curl-cmd').textContent = cmd;
	$('copy-curl').disabled = false;
	for (const [id, url] of [['download-svg', v.svgUrl], ['download-folded', v.foldedUrl]]) {
		const a = $(id);
		if (url) { a.href = url + (url.includes('?') ? '&' : '?') + 'download=1'; a.classList.remove('disabled'); }
		else { a.removeAttribute('href'); a.classList.add('disabled'); }
	}
}
$('download-svg').addEventListener('click', authDownload);
$('download-folded').addEventListener('click', authDownload);
$('copy-curl').addEventListener('click', async () => {
	const text = $('curl-cmd').textContent;
	try {
		await navigator.clipboard.writeText(text);
	} catch (e) {
		const ta = document.createElement('textarea');
		ta.value = text;
		document.body.appendChild(ta);
		ta.select();
		document.execCommand('copy');
		ta.remove();
	}
	$('fg-status').textContent = 'copied: ' + text;
});

async function showFolded(texts, title) {
	$('fg-status').textContent = 'rendering…';
	const t0 = performance.now();
	let root;
	if (texts.length === 2) {
		root = parseFolded(texts[0], null, 'a');
		parseFolded(texts[1], root, 'b');
		fg.diff = true;
		// A scaled to B's total so that a longer range does not look like growth
		fg.scaleA = root.a ? root.b / root.a : 1;
		let maxDelta = 0;
		const stack = [root];
		while (stack.length) {
			const n = stack.pop();
			if (n !== root) maxDelta = Math.max(maxDelta, Math.abs(n.b - n.a * fg.scaleA));
			for (const k of n.kids.values()) stack.push(k);
		}
		fg.maxDelta = maxDelta;
		$('fg-legend').textContent = 'Differential: widths are B, red grew and blue shrank from A to B (A normalized to B\'s total).';
	} else {
		root = parseFolded(texts[0], null, 'a');
		fg.diff = false;
		$('fg-legend').textContent = '';
		$('fg-diffinfo').textContent = '';
	}
	fg.root = root;
	fg.zoom = null;
	fg.maxDepth = depthOf(root);
	$('fg-title').textContent = title;
	applySearch();
	const n = fg.diff ? root.b : root.a;
	$('fg-status').textContent = `${n} samples, ${fg.drawn.length} frames drawn in ${(performance.now() - t0).toFixed(0)} ms`;
	fgCanvas.dataset.samples = String(n);
}

// Under a differential graph (issue 8): "X% elided", the share of A's samples on stacks that B
// lacks (click: the flame graph of those elided paths), and the stacks that a Hotelling T^2 test
// over windows of each range finds significant (/api/v1/compare).
let diffToken = 0;
async function diffInfo(a, b, d, ta) {
	const box = $('fg-diffinfo'), tok = ++diffToken;
	box.textContent = '';
	const p = new URLSearchParams(d);
	p.delete('normalize');
	const sum = (t) => t.split('\n').reduce((s, l) => { const i = l.lastIndexOf(' '); return i > 0 ? s + Number(l.slice(i + 1)) : s; }, 0);
	const parts = [];
	try {
		const el = await getText(API + 'diff.folded?' + p + '&elided=1');
		const all = sum(ta), gone = sum(el);
		const link = document.createElement('a');
		link.id = 'fg-elided';
		link.href = '#';
		link.dataset.pct = all ? (100 * gone / all).toFixed(2) : '0.00';
		link.textContent = link.dataset.pct + '% elided';
		link.title = 'share of A\'s samples on stacks absent from B: click for their flame graph';
		link.addEventListener('click', (ev) => {
			ev.preventDefault();
			setView({ title: 'Elided: stacks of A absent from B', svgUrl: API + 'diff.svg?' + p + '&elided=1', foldedUrl: API + 'diff.folded?' + p + '&elided=1' });
			showFolded([el], state.view.title);
		});
		parts.push(link);
	} catch (e) {
		parts.push('elided: ' + e.message);
	}
	const span = document.createElement('span');
	span.id = 'fg-compare';
	const len = a.to - a.from < b.to - b.from ? a.to - a.from : b.to - b.from;
	const w = Math.max(1, Math.floor(Number(len / NS) / 10));
	let sig = [];
	if (len < 2n * NS) {
		span.textContent = ' · the Hotelling test needs ranges of 2 s or more';
	} else {
		try {
			const t = (await getJSON(API + 'compare?' + p + '&window=' + w)).test;
			span.textContent = ` · Hotelling T² over ${w} s windows (${t.n_a} vs ${t.n_b}, ${t.p} stacks): ` +
				(t.reject ? `the ranges differ, p-value ${t.p_value.toPrecision(3)}` : `no significant difference (p-value ${t.p_value.toPrecision(3)})`);
			sig = t.kept.filter((k) => k.significant);
		} catch (e) {
			span.textContent = ' · Hotelling test: ' + e.message;
		}
	}
	if (tok !== diffToken) return; // a newer selection owns the box
	box.append(...parts, span);
	if (sig.length) {
		const ul = document.createElement('ul');
		ul.id = 'fg-significant';
		for (const k of sig) {
			const li = document.createElement('li');
			li.textContent = `${k.delta >= 0 ? '+' : ''}${k.delta.toFixed(1)} samples per window  ${k.stack}`;
			ul.append(li);
		}
		box.append(ul);
	}
}

async function loadFlame() {
	if (!state.selA) return;
	const a = state.selA, b = state.selB;
	try {
		if (!b) {
			const p = rangeParams(a);
			const folded = API + 'folded?' + p;
			setView({ title: `Flame graph ${fmtTime(a.from)} +${fmtDur(a.to - a.from)}`, svgUrl: API + 'flamegraph.svg?' + p, foldedUrl: folded });
			await showFolded([await getText(folded)], state.view.title);
		} else {
			const pa = rangeParams(a), pb = rangeParams(b);
			const d = rangeParams(a, { b_from: nsToSec(b.from), b_to: nsToSec(b.to), normalize: '1' });
			setView({ title: 'Differential flame graph: A → B', svgUrl: API + 'diff.svg?' + d, foldedUrl: null });
			const [ta, tb] = await Promise.all([getText(API + 'folded?' + pa), getText(API + 'folded?' + pb)]);
			await showFolded([ta, tb], state.view.title);
			diffInfo(a, b, d, ta);
		}
	} catch (e) {
		$('fg-status').textContent = 'error: ' + e.message;
	}
}

// ---------------------------------------------------------------------------------------------
// captures
async function startCapture() {
	const body = new URLSearchParams();
	body.set('seconds', $('cap-seconds').value || '10');
	if ($('cap-frequency').value) body.set('frequency', $('cap-frequency').value);
	if ($('cap-pid').value.trim()) body.set('pid', $('cap-pid').value.trim());
	let c;
	try {
		c = await getJSON(API + 'captures', { method: 'POST', body });
	} catch (e) {
		$('capture-status').textContent = 'capture failed: ' + e.message;
		return;
	}
	state.capture = c.id;
	$('capture-start').disabled = true;
	$('capture-progress').hidden = false;
	$('capture-progress').value = 0;
	$('capture-status').textContent = `capture #${c.id} running…`;
	pollCapture(c.id);
}
async function pollCapture(id) {
	let c;
	try { c = await getJSON(API + 'captures/' + id); } catch (e) {
		$('capture-status').textContent = 'capture #' + id + ': ' + e.message;
		$('capture-start').disabled = false;
		return;
	}
	$('capture-progress').value = c.progress;
	if (c.state === 'running') {
		$('capture-status').textContent = `capture #${id} running: ${Math.round(c.progress * 100)}%`;
		setTimeout(() => pollCapture(id), 500);
		return;
	}
	$('capture-start').disabled = false;
	$('capture-progress').hidden = true;
	if (c.state !== 'done') {
		$('capture-status').textContent = `capture #${id} ${c.state}: ${c.error || ''}`;
		return;
	}
	$('capture-status').textContent = `capture #${id} done: ${c.samples} samples${c.truncated ? ' (truncated at the memory cap)' : ''}${c.frequency_applied === false && c.frequency ? ' at the daemon\'s frequency' : ''}`;
	$('capture-status').dataset.state = 'done';
	listCaptures();
	openCapture(c);
}
async function openCapture(c) {
	const p = filterParams();
	p.delete('pid'); // the capture already has its pid
	const q = p.toString() ? '?' + p : '';
	setView({ title: `Capture #${c.id}${c.pid ? ' (pid ' + c.pid + ')' : ''}`, svgUrl: c.urls.flamegraph + q, foldedUrl: c.urls.folded + q });
	try {
		await showFolded([await getText(c.urls.folded + q)], state.view.title);
	} catch (e) {
		$('fg-status').textContent = 'error: ' + e.message;
	}
}
async function listCaptures() {
	let l;
	try { l = await getJSON(API + 'captures'); } catch (e) { return; }
	const ul = $('capture-list');
	ul.textContent = '';
	for (const c of l.captures) {
		const li = document.createElement('li');
		li.textContent = `#${c.id} ${c.state} ${c.seconds} s${c.pid ? ' pid ' + c.pid : ''}${c.samples !== undefined ? ', ' + c.samples + ' samples' : ''}`;
		if (c.state === 'done') {
			const open = document.createElement('a');
			open.href = '#';
			open.textContent = 'open';
			open.addEventListener('click', (ev) => { ev.preventDefault(); openCapture(c); });
			li.appendChild(open);
		}
		const del = document.createElement('a');
		del.href = '#';
		del.textContent = 'delete';
		del.addEventListener('click', async (ev) => {
			ev.preventDefault();
			await api(API + 'captures/' + c.id, { method: 'DELETE' });
			listCaptures();
		});
		li.appendChild(del);
		ul.appendChild(li);
	}
}
$('capture-start').addEventListener('click', startCapture);

// ---------------------------------------------------------------------------------------------
// wiring
let liveTimer = null;
function schedule() {
	clearInterval(liveTimer);
	liveTimer = setInterval(() => {
		pollStats();
		if ($('live').checked && !state.drag && !state.pending) loadHeatmap();
	}, 2000);
}
for (const id of ['f-pid', 'f-comm', 'f-idle']) {
	$(id).addEventListener('change', () => { loadHeatmap(); loadFlame(); });
}
$('arrangement').addEventListener('change', () => { state.selA = state.selB = null; showSelection(); loadHeatmap(); });
$('refresh').addEventListener('click', () => { loadHeatmap(); loadFlame(); });
window.addEventListener('resize', () => { drawHeatmap(); drawFlame(); });

// a small API for tests and the curious: what is drawn, and a way to select by time
window.emberDashboard = {
	state,
	frames: () => fg.drawn.map((f) => ({ name: f.node.name, x: f.x, y: f.y, w: f.w, matched: fg.matched.has(f.node) })),
	search: (q) => { const t = performance.now(); $('fg-search').value = q; applySearch(); return performance.now() - t; },
	selectSeconds: (from, to) => select({ from: secToNs(String(from)), to: secToNs(String(to)) }),
	cellCenter: (col, row) => {
		const r = hmCanvas.getBoundingClientRect();
		const sx = r.width / hmCanvas.width, sy = r.height / hmCanvas.height;
		return { x: r.left + (AXIS_W + col * cellW + cellW / 2) * sx, y: r.top + ((state.hm.rows - 1 - row) * cellH + cellH / 2) * sy };
	},
};

(async function init() {
	await pollStats();
	await loadHeatmap();
	drawFlame();
	listCaptures();
	schedule();
})();
})();
