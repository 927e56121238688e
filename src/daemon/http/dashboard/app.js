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
// times before 2001 are not wall-clock times but a recording's own clock (perf script's
// seconds since boot): shown as seconds
const WALL_NS = 978307200n * NS;
function fmtTime(ns) {	// local clock time to the ms (the recording's seconds if not a wall clock)
	if (ns < WALL_NS) return nsToSec(ns) + ' s';
	return clockLabel(ns, true) + '.' + String(Number((ns % NS) / 1000000n)).padStart(3, '0');
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
	// workload identity (container id or prefix, service.name): the heat map and the graphs
	const container = $('f-container').value.trim(), service = $('f-service').value.trim();
	if (container) p.set('container', container);
	if (service) p.set('service', service);
	if ($('f-idle').checked) p.set('idle', '1');
	// memory and I/O events: block I/O's latency is its second weight
	if ($('f-event').value === 'blockio-latency') {
		p.set('event', 'blockio');
		p.set('weight', 'latency');
	} else if ($('f-event').value !== 'cpu') p.set('event', $('f-event').value);
	return p;
}
// what a count is: on-CPU samples, or time off the CPU in ms (wall: us)
function unitName() {
	const e = $('f-event').value;
	if (['pagefault', 'vmgrow', 'blockio', 'blockio-latency', 'malloc', 'cycles', 'instructions'].includes(e)) return 'quanta';
	return e === 'cpu' ? 'samples' : e === 'wall' ? 'us' : 'ms';
}
// focus= and ignore= (pprof's): the graphs, the top table and the sandwich, not the heat map
function graphParams(p) {
	if ($('f-group').value) p.set('group_by', $('f-group').value); // graphs only: a frame above the root
	const focus = $('fg-focus').value.trim(), ignore = $('fg-ignore').value.trim();
	if (focus) p.set('focus', focus);
	if (ignore) p.set('ignore', ignore);
	return p;
}
function rangeParams(sel, extra) {
	const p = graphParams(filterParams());
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
	// off-CPU events only with [offcpu] enabled (its counters in the stats)
	// (the words of the API's 409 for event= without it)
	const OFFCPU_OFF = 'off-CPU events need [offcpu] enabled = yes in emberd.conf';
	// memory and I/O events with their section enabled ("memio" in the stats)
	for (const o of $('f-event').options)
		if (o.dataset.pmc) {
			// hardware counters: a PMU and [pmc] enabled (else the API says why)
			o.disabled = !(s.memio && s.memio.hardware_counters && s.memio.attached);
			o.title = o.disabled ? 'needs hardware counters and [pmc] enabled in emberd.conf' : '';
		} else if (o.dataset.memio) {
			o.disabled = !(s.memio && s.memio.attached);
			o.title = o.disabled ? 'needs its section ([pagefault], [vmgrow], [blockio], ' +
				'[malloc]) enabled in emberd.conf' : '';
		} else if (o.value !== 'cpu') {
			o.disabled = !s.offcpu;
			o.title = s.offcpu ? '' : OFFCPU_OFF;
		}
	$('f-event-note').hidden = !!s.offcpu;
	$('f-event-note').textContent = s.offcpu ? '' : 'needs [offcpu] enabled = yes in emberd.conf';
	$('f-event-note').title = s.offcpu ? '' : OFFCPU_OFF.replace('off-CPU events', 'off-CPU, wall, wakeup and chain events');
	if ($('f-event').selectedOptions[0] && $('f-event').selectedOptions[0].disabled)
		$('f-event').value = 'cpu';
	const st = s.store || {};
	const prev = state.lastStats;
	showLiveness(s);
	if (s.mode === 'live') {
		// the store's count over at least 10 s (a drain's batch is no rate): the host's, whatever
		// the filters; an unfiltered 1 s heat map gives a finer one (updateRate)
		const hist = state.rateHist = (state.rateHist || []).concat([[s.uptime_s, st.appended]]).slice(-30);
		const old = hist.find((h) => s.uptime_s - h[0] >= 10);
		if (old && st.appended !== undefined) {
			state.hostRate = (st.appended - old[1]) / (s.uptime_s - old[0]);
			const fine = state.hm && state.hm.column_s === 1 && ![...filterParams().keys()].length;
			if (!fine) {
				$('st-rate').textContent = state.hostRate.toFixed(0);
				$('st-rate').parentElement.title = 'samples the host took per second, over the last 10 s or more';
			}
		}
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
	const sy = s.symbols || {};
	$('st-unresolved').parentElement.title = unres === null ? '' :
		'Frames emberd could not name, shown as [file] or [unknown]:\n' +
		`  user frames in files without symbols: ${sy.user_unresolved ?? '?'}\n` +
		`  user frames outside any mapped file: ${sy.user_no_mapping ?? '?'}\n` +
		`  kernel frames: ${sy.kernel_unresolved ?? '?'}\n` +
		'Click: which files, why, and what would name them.';
	renderUnresolved();
	// memory, not time: the store's bytes against its memory_limit
	$('st-retention').textContent = typeof st.used_share === 'number' ? (st.used_share * 100).toFixed(1) + '%' : 'n/a';
	// how far back the history reaches (a time), and what it lost to get there
	const evicted = (st.evicted_time || 0) + (st.evicted_memory || 0);
	$('st-evicted').textContent = typeof st.evicted_time === 'number' ? String(evicted) : 'n/a';
	$('st-evicted-wrap').title = `samples evicted since start: ${st.evicted_memory ?? 0} for memory ([store] memory_limit), ` +
		`${st.evicted_time ?? 0} for age ([store] retention${st.retention_s ? ' ' + st.retention_s + ' s' : ''})`;
	$('st-evicted-wrap').dataset.evicted = String(evicted);
	if (typeof st.oldest === 'number') {
		const oldest = secToNs(st.oldest.toFixed(9));
		state.oldestNs = oldest;
		$('st-history').textContent = fmtTime(oldest).replace(/\.\d+$/, '') +
			(typeof s.now === 'number' && s.mode === 'live' ? ` (${fmtDur(BigInt(Math.round((s.now - st.oldest) * 1e9)))})` : '');
		$('st-history-wrap').title = 'the oldest sample held: ranges before it ' + (evicted ? `were evicted (${evicted} samples since start)` : 'hold nothing');
	} else {
		state.oldestNs = null;
		$('st-history').textContent = 'no samples yet';
	}
	state.evicted = evicted;
	$('st-samples').textContent = String(st.samples ?? '–');
	if (!prev && s.mode === 'live') $('live').checked = true;
	if (!prev) { $('capture-start').disabled = s.mode !== 'live'; if (s.mode !== 'live') $('capture-status').textContent = 'captures need live sampling (replay mode)'; }
	state.lastStats = s;
}

// liveness: /api/v1/stats' "liveness" object ({state "ok"|"stalled", reason, last_drain_age_s,
// newest_sample_age_s}) when emberd has it; otherwise the same judged from fields every emberd
// has: the sampler's counters not republished (age_s) or no new sample in the store for 10 s
const STALL_S = 10;
function showLiveness(s) {
	const banner = $('live-banner'), badge = $('mode');
	const st = s.store || {}, lv = s.liveness;
	let stalled = null;
	if (s.mode === 'live') {
		const newestAge = lv && typeof lv.newest_sample_age_s === 'number' ? lv.newest_sample_age_s :
			(typeof st.newest === 'number' && typeof s.now === 'number' ? s.now - st.newest : null);
		if (lv && lv.state) {
			if (lv.state !== 'ok') stalled = { reason: lv.reason || lv.state, age: newestAge };
		} else if (s.sampler && s.sampler.age_s > STALL_S) {
			stalled = { reason: `the sampler's counters were last published ${s.sampler.age_s.toFixed(0)} s ago`, age: newestAge };
		} else if (newestAge !== null && newestAge > STALL_S && s.uptime_s > STALL_S) {
			stalled = { reason: `no sample for ${newestAge.toFixed(0)} s`, age: newestAge };
		}
	}
	state.stalled = stalled;
	if (stalled) {
		const at = typeof st.newest === 'number' ? fmtTime(secToNs(st.newest.toFixed(9))) : 'never';
		banner.textContent = `Sampling has stopped: the last sample was at ${at}` +
			(stalled.age !== null ? ` (${fmtDur(BigInt(Math.round(stalled.age * 1e9)))} ago)` : '') +
			`. ${stalled.reason}. The heat map and flame graphs show old data.`;
		banner.hidden = false;
		badge.textContent = 'stalled';
		badge.className = 'badge stalled';
	} else {
		banner.hidden = true;
		badge.textContent = s.mode;
		badge.className = 'badge ' + s.mode;
	}
	banner.dataset.state = stalled ? 'stalled' : 'ok';
}

// ---------------------------------------------------------------------------------------------
// heat map: fixed cells (their size is chosen on the first draw, on a new arrangement, filter or
// window size, and then kept while live refreshes append columns), a y-axis of the offset within
// the column, clock times under the columns, a legend of the colour scale, the newest column in
// view unless the user scrolled back
const hmCanvas = $('heatmap'), hmWrap = $('heatmap-wrap'), hmY = $('hm-yaxis'), hmLegend = $('hm-legend');
let cellW = 10, cellH = 8;
const AXIS_H = 30, AXIS_W = 0, MAX_CANVAS_W = 30000;
const hmView = { locked: false, follow: true, key: '', loads: 0 };

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
	const key = p.toString();
	if (key !== hmView.key) { hmView.locked = false; hmView.key = key; }
	const prevStart = state.hm ? state.startNs : null;
	// at the right end (or never scrolled): keep following the newest column
	// (not while the pointer is on the map: the cell under it stays put)
	hmView.follow = !state.hm || (!hmView.pointer && hmWrap.scrollLeft + hmWrap.clientWidth >= hmWrap.scrollWidth - 2 * cellW);
	const keepLeft = hmWrap.scrollLeft;
	state.hm = hm;
	state.startNs = BigInt(hm.start_ns);
	state.colNs = secToNs(hm.column_s);
	drawHeatmap();
	if (hmView.follow) {
		hmWrap.scrollLeft = hmWrap.scrollWidth;
	} else if (prevStart !== null) {
		// the oldest columns expired: the same cells stay under the pointer
		const shift = Number((state.startNs - prevStart) / state.colNs);
		hmWrap.scrollLeft = Math.max(0, keepLeft - shift * cellW);
	}
	hmView.loads++;
	const unit = hm.unit && hm.unit !== 'samples' ? hm.unit : unitName();
	$('hm-info').textContent = `${hm.columns} columns × ${hm.rows} rows, ${hm.total} ${unit}, max ${hm.max} per cell`;
	updateRate();
}

// samples/s from the samples' own times: the last complete columns of a 1 s heat map (at most
// CPUs × frequency, whatever the batching of the drain), else the store's count over >= 10 s
function updateRate() {
	const hm = state.hm;
	if (state.mode !== 'live' || !hm) return;
	if (hm.column_s === 1 && hm.columns >= 3) {
		const n = Math.min(5, hm.columns - 1);
		let sum = 0;
		for (let c = hm.columns - 1 - n; c < hm.columns - 1; c++) sum += hm.values[c].reduce((a, b) => a + b, 0);
		// the header is the host's: a filtered heat map's rate is labelled as such beside it
		const filtered = [...filterParams().keys()].length > 0;
		$('st-frate-wrap').hidden = !filtered;
		if (filtered) {
			$('st-frate').textContent = (sum / n).toFixed(0);
			const what = [...filterParams()].map(([k, v]) => `${k}=${v}`).join(' ');
			$('st-frate-wrap').lastChild.textContent = ` ${unitName()}/s (filtered: ${what})`;
			$('st-rate').textContent = typeof state.hostRate === 'number' ? state.hostRate.toFixed(0) : '–';
			return;
		}
		$('st-rate').textContent = (sum / n).toFixed(0);
		$('st-rate').parentElement.title = `samples in the last ${n} complete seconds of the heat map, per second`;
	}
}

function clockLabel(ns, withDate) {
	if (ns < WALL_NS) return nsToSec(ns) + ' s';
	const d = new Date(Number(ns / 1000000n));
	const hh = String(d.getHours()).padStart(2, '0'), mm = String(d.getMinutes()).padStart(2, '0');
	const ss = String(d.getSeconds()).padStart(2, '0');
	return withDate ? `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')} ${hh}:${mm}:${ss}` : `${hh}:${mm}:${ss}`;
}
function heatColor(t) {	// white -> dark red, darkness proportional to the count (FlameScope's scale)
	const g = Math.round(255 * (1 - t) * 0.95), rr = Math.round(255 - 120 * t);
	return `rgb(${rr},${g},${g})`;
}
function niceStep(min) {	// 1, 2, 5 x 10^k at least @min
	const p = Math.pow(10, Math.floor(Math.log10(min)));
	for (const m of [1, 2, 5, 10]) if (m * p >= min) return m * p;
	return 10 * p;
}

function drawHeatmap() {
	const hm = state.hm;
	if (!hm) return;
	if (!hmView.locked) {
		const avail = Math.max(400, hmWrap.clientWidth - 4);
		cellW = Math.max(6, Math.min(20, Math.floor(avail / Math.max(1, hm.columns))));
		// live: small enough for the whole retention, so that the cells never shrink later
		const ret = state.lastStats && state.lastStats.store && state.lastStats.store.retention_s;
		if (state.mode === 'live' && ret) cellW = Math.max(1, Math.min(cellW, Math.floor(MAX_CANVAS_W / (ret / hm.column_s + 2))));
		hmView.locked = true;
	}
	if (hm.columns * cellW > MAX_CANVAS_W) cellW = Math.max(1, Math.floor(MAX_CANVAS_W / hm.columns));
	cellH = hm.rows > 60 ? Math.max(2, Math.floor(400 / hm.rows)) : (hm.rows > 50 ? 6 : 8);
	hmCanvas.width = AXIS_W + hm.columns * cellW;
	hmCanvas.height = hm.rows * cellH + AXIS_H;
	Object.assign(hmCanvas.dataset, { columns: hm.columns, rows: hm.rows, total: hm.total, cellW, cellH, start: hm.start_ns });
	const ctx = hmCanvas.getContext('2d');
	ctx.fillStyle = '#fff';
	ctx.fillRect(0, 0, hmCanvas.width, hmCanvas.height);
	const max = hm.max || 1;
	for (let c = 0; c < hm.columns; c++) {
		const col = hm.values[c];
		for (let r = 0; r < hm.rows; r++) {
			const v = col[r];
			if (!v) continue;
			ctx.fillStyle = heatColor(v / max);
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
	// x axis: the columns' clock times (local time; seconds of the recording in replay), at
	// round times so that labels stay on their columns when the start moves
	const y0 = hm.rows * cellH;
	ctx.fillStyle = '#444';
	ctx.strokeStyle = '#888';
	ctx.font = '10px Verdana, sans-serif';
	ctx.textBaseline = 'top';
	const colS = hm.column_s;
	const stepS = colS * Math.max(1, niceStep(Math.ceil(64 / cellW)));
	const startS = Number(state.startNs / NS);
	const labels = [];
	for (let c = 0; c < hm.columns; c++) {
		const t = startS + c * colS;
		if (t % stepS !== 0 && !(c === 0 && hm.columns * cellW < 64)) continue;
		const ns = state.startNs + BigInt(c) * state.colNs;
		const x = AXIS_W + c * cellW;
		ctx.beginPath();
		ctx.moveTo(x + 0.5, y0);
		ctx.lineTo(x + 0.5, y0 + 4);
		ctx.stroke();
		const text = clockLabel(ns, false);
		ctx.fillText(text, x + 2, y0 + 5);
		labels.push(text);
	}
	ctx.fillStyle = '#777';
	ctx.fillText(state.startNs < WALL_NS ? 'time (s, the recording\'s clock)' : 'clock time (' + Intl.DateTimeFormat().resolvedOptions().timeZone + ')', 2, y0 + 17);
	hmCanvas.dataset.xlabels = labels.join('|');
	drawYAxis(hm);
	drawLegend(hm);
}

// y axis: the offset of a row within its column, in ms (min for 1 h columns), 0 at the bottom
function drawYAxis(hm) {
	const H = hm.rows * cellH;
	hmY.height = H + AXIS_H;
	hmY.style.height = (H + AXIS_H) + 'px';
	const ctx = hmY.getContext('2d');
	ctx.clearRect(0, 0, hmY.width, hmY.height);
	ctx.fillStyle = '#444';
	ctx.strokeStyle = '#888';
	ctx.font = '10px Verdana, sans-serif';
	ctx.textAlign = 'right';
	ctx.textBaseline = 'middle';
	const mins = hm.column_s >= 600;
	const span = mins ? hm.column_s / 60 : hm.column_s * 1000;	// the column, in the axis unit
	const per = span / hm.rows;
	const step = niceStep(per * Math.ceil(24 / cellH));
	const labels = [];
	for (let v = 0; v <= span + 1e-9; v += step) {
		const y = H - (v / span) * H;
		ctx.beginPath();
		ctx.moveTo(hmY.width - 5, Math.round(y) + 0.5);
		ctx.lineTo(hmY.width, Math.round(y) + 0.5);
		ctx.stroke();
		const text = String(Math.round(v));
		ctx.fillText(text, hmY.width - 7, Math.min(H - 5, Math.max(5, y)));
		labels.push(text);
	}
	ctx.save();
	ctx.translate(9, H / 2);
	ctx.rotate(-Math.PI / 2);
	ctx.textAlign = 'center';
	ctx.fillText(mins ? 'minute of the hour' : 'ms of the second', 0, 0);
	ctx.restore();
	hmY.dataset.labels = labels.join('|');
	hmY.dataset.unit = mins ? 'min' : 'ms';
}

// the colour scale with counts: 0, the middle and the maximum per cell
function drawLegend(hm) {
	const ctx = hmLegend.getContext('2d');
	const W = hmLegend.width, bw = W - 20;
	ctx.clearRect(0, 0, W, hmLegend.height);
	for (let x = 0; x < bw; x++) {
		ctx.fillStyle = heatColor(x / (bw - 1));
		ctx.fillRect(10 + x, 0, 1, 12);
	}
	ctx.strokeStyle = '#999';
	ctx.strokeRect(9.5, 0.5, bw + 1, 12);
	ctx.fillStyle = '#444';
	ctx.font = '10px Verdana, sans-serif';
	ctx.textBaseline = 'top';
	const max = hm.max || 0;
	const ticks = [0, Math.round(max / 2), max];
	ticks.forEach((v, i) => {
		ctx.textAlign = i === 0 ? 'left' : i === 1 ? 'center' : 'right';
		ctx.fillText(String(v), 10 + (i * bw) / 2, 15);
	});
	hmLegend.dataset.ticks = ticks.join('|');
	$('hm-legend-label').textContent = `${unitName()} per cell (${hm.row_s * 1000 >= 1000 ? hm.row_s + ' s' : Math.round(hm.row_s * 1000) + ' ms'})`;
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
	hmView.pointer = true;
	const c = cellAt(ev);
	const tip = $('hm-tip');
	if (c) {
		const r = cellRange(c.col, c.row);
		const v = state.hm.values[c.col][c.row] || 0;
		const colSum = state.hm.values[c.col].reduce((a, b) => a + b, 0);
		const pct = (x, of) => (of ? (100 * x / of).toFixed(1) : '0.0') + '%';
		tip.hidden = false;
		tip.style.left = (ev.clientX + 12) + 'px';
		tip.style.top = (ev.clientY + 12) + 'px';
		tip.textContent = '';
		const b = document.createElement('b');
		b.textContent = `${fmtTime(r.from)} +${fmtDur(r.to - r.from)}`;
		tip.append(b, document.createElement('br'),
			`${v} ${unitName()}: ${pct(v, colSum)} of the column's ${colSum}, ${pct(v, state.hm.total)} of all`);
		tip.dataset.col = c.col;
		tip.dataset.row = c.row;
		tip.dataset.count = v;
	} else {
		tip.hidden = true;
	}
	if (state.drag && c && (c.col !== state.drag.start.col || c.row !== state.drag.start.row)) {
		state.drag.cur = c;
		state.drag.moved = true;
		drawHeatmap();
	}
});
hmCanvas.addEventListener('mouseenter', () => { hmView.pointer = true; });
hmCanvas.addEventListener('mouseleave', () => { $('hm-tip').hidden = true; hmView.pointer = false; });
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
	state.reveal = true;	// bring the flame graph into view once drawn
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
	icicle: (() => { try { return !!localStorage.getItem('emberd-icicle'); } catch (e) { return false; } })(),
	hover: null,
};
const fgCanvas = $('flamegraph'), fgOverlay = $('fg-overlay');

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
// children in name order, as flamegraph.pl sorts them; computed once per node
function sortedKids(n) {
	if (!n.sorted || n.sorted.length !== n.kids.size)
		n.sorted = [...n.kids.values()].sort((p, q) => (p.name < q.name ? -1 : p.name > q.name ? 1 : 0));
	return n.sorted;
}

// marker suffixes are the folded format's (kept there and in downloads); on the page they are
// the frame's colour, and a Python frame's label shows its file's base name (the full path is
// in the tooltip)
const MARK_RE = /_\[(k|j|i|py)\]$/;
const KIND = { k: 'kernel', j: 'JIT', i: 'inlined', py: 'Python' };
function frameKind(name) {
	const m = MARK_RE.exec(name);
	return m ? KIND[m[1]] : '';
}
function displayName(name) {
	const n = name.replace(MARK_RE, '');
	// "qualname (/path/to/file.py:12)" -> "qualname (file.py:12)"
	return n.replace(/ \((?:[^()]*\/)([^/()]*)\)$/, ' ($1)');
}

// what is drawn at the current zoom: frames of half a pixel or more; the canvas is as tall as
// their depth (not the deepest stack), root at the bottom (flame) or at the top (icicle)
function layoutFlame(root, zoom, cssW) {
	const out = [];
	const total = width(zoom);
	const px = cssW / total;
	const anc = [];
	for (let n = zoom; n; n = n.parent) anc.unshift(n);
	anc.forEach((n, d) => out.push({ node: n, x: 0, w: cssW, depth: d, faded: n !== zoom }));
	const stack = [[zoom, 0, anc.length - 1]];
	while (stack.length) {
		const [n, x, d] = stack.pop();
		let cx = x;
		for (const k of sortedKids(n)) {
			const w = width(k) * px;
			if (w >= 0.5) {
				out.push({ node: k, x: cx, w, depth: d + 1, faded: false });
				stack.push([k, cx, d + 1]);
			}
			cx += w;
		}
	}
	return out;
}

function drawFlame() {
	const root = fg.root;
	fg.drawn = [];
	const cssW = fgCanvas.parentElement.clientWidth || 1200;
	const dpr = window.devicePixelRatio || 1;
	fgOverlay.width = 1; fgOverlay.height = 1;
	if (!root || width(root) === 0) {
		fgCanvas.style.height = '40px';
		fgCanvas.width = cssW * dpr;
		fgCanvas.height = 40 * dpr;
		const ctx = fgCanvas.getContext('2d');
		ctx.scale(dpr, dpr);
		ctx.clearRect(0, 0, cssW, 40);
		ctx.fillStyle = '#777';
		ctx.font = '12px Verdana, sans-serif';
		const msg = fg.message || (!root ? 'Select a range on the heat map.' : emptyReason());
		ctx.fillStyle = fg.message ? '#b71c1c' : '#777';
		ctx.fillText(msg, 10, 24);
		fgCanvas.dataset.frames = '0';
		fgCanvas.dataset.message = msg;
		return;
	}
	const zoom = fg.zoom || root;
	const frames = layoutFlame(root, zoom, cssW);
	let depth = 0;
	for (const f of frames) if (f.depth > depth) depth = f.depth;
	// rows shrink (to 12 px) before the graph outgrows the window
	fg.rowH = Math.max(12, Math.min(16, Math.floor((window.innerHeight - 130) / (depth + 1))));
	const H = (depth + 1) * fg.rowH + 2;
	fgCanvas.style.height = H + 'px';
	fgCanvas.width = Math.round(cssW * dpr);
	fgCanvas.height = Math.round(H * dpr);
	fgCanvas.dataset.depth = String(depth);
	fgCanvas.dataset.view = fg.icicle ? 'icicle' : 'flame';
	const ctx = fgCanvas.getContext('2d');
	ctx.scale(dpr, dpr);
	ctx.clearRect(0, 0, cssW, H);
	ctx.font = (fg.rowH >= 15 ? 11 : 10) + 'px Verdana, sans-serif';
	ctx.textBaseline = 'middle';
	const y = fg.icicle ? (d) => d * fg.rowH : (d) => H - (d + 1) * fg.rowH;
	for (const f of frames) drawFrame(ctx, f.node, f.x, y(f.depth), f.w, f.depth, f.faded);
	fgCanvas.dataset.frames = String(fg.drawn.length);
	updateMatched();
}
// why a graph is empty: a range (partly) before the history says so; else the filters
function emptyReason() {
	const a = state.selA;
	if (a && state.oldestNs && a.from < state.oldestNs && state.view && state.view.kind === 'range')
		return `No samples in this range: the history starts at ${fmtTime(state.oldestNs)}` +
			(state.evicted ? ` (${state.evicted} samples evicted since start).` : '.');
	return 'No samples in this range with these filters.';
}
function drawFrame(ctx, node, x, yy, w, depth, faded) {
	ctx.fillStyle = frameColor(node);
	ctx.globalAlpha = faded ? 0.6 : 1;
	ctx.fillRect(x, yy, Math.max(w - 0.5, 0.5), fg.rowH - 1);
	ctx.globalAlpha = 1;
	fg.drawn.push({ node, x, y: yy, w, depth });
	if (w > 24) {
		const max = Math.floor((w - 6) / 6.6);
		let label = displayName(node.name);
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
// The files behind unresolved frames (/api/v1/stats symbols.unresolved_files) that a frame
// name shows: "[libfoo.so]", "libfoo.so+0x1a2b" (symbols.addr_offsets), "[unknown]", "[unknown]_[k]"
function unresolvedOf(name) {
	const files = ((state.lastStats || {}).symbols || {}).unresolved_files || [];
	return files.filter((u) => u.frame && (name === u.frame || name.startsWith(u.frame + '+0x')));
}
const UNRES_WHY = { stripped: 'stripped binary, no debug symbols', not_read: 'symbols not read',
	no_symbol: 'no symbol covers the address', jit: 'JIT code without a perf map',
	no_mapping: 'address in no mapping', kernel: 'kernel address without a symbol',
	recorded: 'unresolved in the recording', untracked: 'not tracked' };
const UNRES_RE = /^\[.*\](_\[k\])?$|\+0x[0-9a-f]+$/;
// emberd's own markers look alike but name no file: a cut stack, a lost one, idle, no group
const MARKER_RE = /^\[(truncated|stack collision|lost stack|idle|none)\](_\[k\])?$/;
const looksUnresolved = (name) => UNRES_RE.test(name) && !MARKER_RE.test(name);
// an unresolved-looking frame emberd's table does not hold: from a replayed recording (perf named
// it when the recording was made), or live past the table's 64 files
function untrackedRow(fr) {
	const replay = state.mode === 'replay';
	return { frame: fr, path: '', build_id: '', deleted: false, frames: 0, reason: replay ? 'recorded' : 'untracked',
		hint: replay ? (fr.endsWith('_[k]') ? 'the recording named no kernel symbol here: record as root, or with kernel.kptr_restrict=0'
			: fr === '[unknown]' ? 'the recording found no mapping for these addresses (JIT code without a perf map, or a broken unwind)'
			: `perf found no symbol in ${fr.replace(/^\[|\]$|\+0x[0-9a-f]+$/g, '')} when the recording was made: install its debug symbols (-dbgsym, debuginfo) on that host and run perf script again`)
			: 'not among the 64 files emberd tracks (those with the most unresolved frames)' };
}
function unresolvedNote(name) {
	let us = unresolvedOf(name);
	if (!us.length && looksUnresolved(name)) us = [untrackedRow(name.replace(/\+0x[0-9a-f]+$/, ''))];
	if (!us.length) return '';
	return us.slice(0, 2).map((u) => `\nunresolved: ${UNRES_WHY[u.reason] || u.reason}${u.path ? ' (' + u.path + ')' : ''}: ${u.hint}`).join('');
}
// samples of the current flame graph under each unresolved frame name (outermost occurrences)
function unresolvedSamples() {
	const out = new Map();
	if (!fg.root) return out;
	const stack = [[fg.root, new Set()]];
	while (stack.length) {
		const [n, seen] = stack.pop();
		let inner = seen;
		if (n !== fg.root && looksUnresolved(n.name)) {
			const key = n.name.replace(/\+0x[0-9a-f]+$/, '');
			if (!seen.has(key)) out.set(key, (out.get(key) || 0) + (fg.diff ? n.b : n.a));
			inner = new Set(seen).add(key);
		}
		for (const k of n.kids.values()) stack.push([k, inner]);
	}
	return out;
}
function renderUnresolved() {
	const panel = $('unresolved-panel');
	if (panel.hidden) return;
	const files = (((state.lastStats || {}).symbols || {}).unresolved_files || []).slice();
	const shares = unresolvedSamples();
	// frames of the graph that look unresolved but that emberd's table does not hold: a replayed
	// recording (perf named them when it was made) or a file past the table's 64
	for (const [fr] of shares) {
		if (files.some((u) => u.frame === fr)) continue;
		files.push(untrackedRow(fr));
	}
	const total = fg.root ? (fg.diff ? fg.root.b : fg.root.a) : 0;
	const body = $('unres-table').tBodies[0];
	body.textContent = '';
	const perFrame = new Map();
	for (const u of files) perFrame.set(u.frame, (perFrame.get(u.frame) || 0) + 1);
	// what the graph shown holds first (its samples), then by frames seen since start
	const rows = files.slice().sort((x, y) => (shares.get(y.frame) || 0) - (shares.get(x.frame) || 0) || y.frames - x.frames);
	for (const u of rows) {
		const tr = body.insertRow();
		tr.className = 'why-' + u.reason;
		tr.dataset.frame = u.frame;
		tr.dataset.reason = u.reason;
		const n = shares.get(u.frame) || 0;
		const shared = perFrame.get(u.frame) > 1 ? `, all ${u.frame} frames (${perFrame.get(u.frame)} reasons)` : '';
		const cells = [u.frame, total ? `${n} samples (${(100 * n / total).toFixed(1)}%${shared})` : '–', u.frames ? String(u.frames) : '–',
			(u.path || '–') + (u.build_id ? `\nbuild-id ${u.build_id}` : '') + (u.deleted ? ' (deleted)' : ''),
			UNRES_WHY[u.reason] || u.reason, u.hint];
		cells.forEach((c, i) => {
			const td = tr.insertCell();
			td.textContent = c;
			td.className = ['frame', 'num', 'num', 'path', 'why', 'hint'][i];
			if (i === 3) td.style.whiteSpace = 'pre-line';
		});
	}
	$('unres-empty').textContent = files.length ? 'Sorted by samples in the flame graph shown below, then by "frames seen" (symbolizations since emberd started).'
		: 'No unresolved frames so far.';
}
$('st-unres-btn').addEventListener('click', () => {
	const panel = $('unresolved-panel');
	panel.hidden = !panel.hidden;
	$('st-unres-btn').setAttribute('aria-expanded', String(!panel.hidden));
	renderUnresolved();
});
$('unres-close').addEventListener('click', () => { $('unresolved-panel').hidden = true; $('st-unres-btn').setAttribute('aria-expanded', 'false'); });

function describe(node) {
	const total = width(fg.root) || 1;
	const kind = frameKind(node.name);
	const name = node.name.replace(MARK_RE, '') + (kind ? ` [${kind}]` : '');
	if (fg.diff) {
		const d = node.b - node.a * fg.scaleA;
		return `${name} (A ${node.a}, B ${node.b} ${unitName()}, ${(100 * node.b / total).toFixed(2)}% of B, ${d >= 0 ? '+' : ''}${d.toFixed(0)})` + unresolvedNote(node.name);
	}
	return `${name} (${node.a} ${unitName()}, ${(100 * node.a / total).toFixed(2)}%)` + unresolvedNote(node.name);
}
// details at the cursor (and in the status line); the frame under it outlined, in the
// differential and the elided views as in the plain one
function showHover(f, ev) {
	const tip = $('fg-tip');
	fgOverlay.width = 1; fgOverlay.height = 1;
	if (!f) { tip.hidden = true; fg.hover = null; return; }
	fg.hover = f.node;
	tip.textContent = describe(f.node);
	tip.hidden = false;
	const tw = tip.offsetWidth, th = tip.offsetHeight;
	let left = ev.clientX + 14, top = ev.clientY + 16;
	if (left + tw > window.innerWidth - 4) left = Math.max(4, ev.clientX - tw - 10);
	if (top + th > window.innerHeight - 4) top = Math.max(4, ev.clientY - th - 10);
	tip.style.left = left + 'px';
	tip.style.top = top + 'px';
	const dpr = window.devicePixelRatio || 1;
	fgOverlay.width = fgCanvas.width;
	fgOverlay.height = fgCanvas.height;
	fgOverlay.style.height = fgCanvas.style.height;
	const ctx = fgOverlay.getContext('2d');
	ctx.scale(dpr, dpr);
	ctx.strokeStyle = '#000';
	ctx.lineWidth = 2;
	ctx.strokeRect(f.x + 1, f.y + 1, Math.max(f.w - 2, 1), fg.rowH - 3);
	fgOverlay.dataset.hover = f.node.name;
}
fgCanvas.addEventListener('mousemove', (ev) => {
	const f = frameAt(ev);
	$('fg-status').textContent = f ? describe(f.node).replace(/\n/g, ' · ') : '\u00a0';
	showHover(f, ev);
});
fgCanvas.addEventListener('mouseleave', () => showHover(null));
fgCanvas.addEventListener('click', (ev) => {
	const f = frameAt(ev);
	if (!f) return;
	fg.zoom = f.node === fg.root ? null : f.node;
	drawFlame();
	// a function's sandwich (not the root frames: the comm, and the workload with group_by)
	if (f.depth > ($('f-group').value ? 2 : 1)) openSandwich(f.node.name);
});
$('fg-icicle').addEventListener('change', () => {
	fg.icicle = $('fg-icicle').checked;
	try { localStorage.setItem('emberd-icicle', fg.icicle ? '1' : ''); } catch (e) { /* */ }
	drawFlame();
});
$('fg-reset').addEventListener('click', () => { fg.zoom = null; drawFlame(); });

// search: every frame whose name matches; Matched % counts each matched subtree once
function applySearch() {
	const q = $('fg-search').value;
	fg.matched = new Set();
	fg.matchRe = null;
	if (q) {
		try {
			fg.matchRe = new RegExp(q);
		} catch (e) {
			// the old highlight goes: it matched another pattern
			drawFlame();
			const el = $('fg-matched');
			el.textContent = 'bad regex: ' + e.message.replace(/^Invalid regular expression: /, '');
			el.dataset.pct = '';
			el.dataset.error = '1';
			return;
		}
	}
	$('fg-matched').dataset.error = '';
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
	renderTop();
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
	el.textContent = `${pct.toFixed(1)} % of ${unitName()} through matches (${sum} of ${width(zoom)})`;
	el.dataset.pct = pct.toFixed(3);
}
let searchTimer = null;
$('fg-search').addEventListener('input', () => {
	clearTimeout(searchTimer);
	searchTimer = setTimeout(applySearch, 120);
});

function setView(v) {
	state.view = v;
	// the sandwich is of the range shown: another view does not keep an old one on screen
	if (v.kind !== 'range') { $('sandwich-panel').hidden = true; state.sandwich = null; }
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
	$('fg-title').textContent = title;
	applySearch();
	const n = fg.diff ? root.b : root.a;
	$('fg-status').textContent = `${n} ${unitName()}, ${fg.drawn.length} frames drawn in ${(performance.now() - t0).toFixed(0)} ms`;
	fgCanvas.dataset.samples = String(n);
	renderUnresolved();
}

// Under a differential graph: "X% elided", the share of A's samples on stacks that B
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
	let sig = [];
	if (len < 2n * NS) {
		span.textContent = ' · the Hotelling test needs ranges of 2 s or more';
	} else {
		// the API's own windows and verdict: what `curl .../api/v1/compare?...` says for the
		// same ranges
		try {
			const j = await getJSON(API + 'compare?' + p);
			const t = j.test;
			span.textContent = ` · Hotelling T² over ${j.window_s} s windows (${t.n_a} vs ${t.n_b}, ${t.p} stacks): ` +
				(t.verdict || (t.reject ? 'the ranges differ' : 'no significant difference'));
			span.dataset.reject = String(t.reject);
			span.title = 'GET ' + absUrl(API + 'compare?' + p);
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

// after a range pick: the graph in view with its root and widest frames (the bottom of a flame
// graph, the top of an icicle); the top of a graph taller than the window is mostly white
function revealFlame() {
	if (!state.reveal) return;
	state.reveal = false;
	const r = $('flame').getBoundingClientRect();
	if (r.top < 0 || r.top > window.innerHeight * 0.25) $('flame').scrollIntoView({ block: 'start' });
	const c = fgCanvas.getBoundingClientRect();
	if (!fg.icicle && c.bottom > window.innerHeight) window.scrollBy(0, c.bottom - window.innerHeight + 8);
}

// the graph's loads: only the latest one's answer is drawn (a field changed twice quickly, or a
// slow answer of the previous filters, must not draw over the graph now asked for); `drawn` is
// the folded URL of the range graph on screen
let flameToken = 0;
async function loadFlame() {
	if (!state.selA) return;
	const a = state.selA, b = state.selB, tok = ++flameToken;
	try {
		if (!b) {
			const p = rangeParams(a);
			const folded = API + 'folded?' + p;
			setView({ kind: 'range', title: `Flame graph ${fmtTime(a.from)} +${fmtDur(a.to - a.from)}`, svgUrl: API + 'flamegraph.svg?' + p, foldedUrl: folded });
			const text = await getText(folded);
			if (tok !== flameToken) return;
			await showFolded([text], state.view.title);
			state.drawn = folded;
			revealFlame();
			loadTop(p);
			if (state.sandwich) openSandwich(state.sandwich, true);
		} else {
			const pa = rangeParams(a), pb = rangeParams(b);
			const d = rangeParams(a, { b_from: nsToSec(b.from), b_to: nsToSec(b.to), normalize: '1' });
			setView({ kind: 'diff', title: 'Differential flame graph: A → B', svgUrl: API + 'diff.svg?' + d, foldedUrl: null });
			topUnavailable('the top table is of one range: this is a differential graph');
			const [ta, tb] = await Promise.all([getText(API + 'folded?' + pa), getText(API + 'folded?' + pb)]);
			if (tok !== flameToken) return;
			await showFolded([ta, tb], state.view.title);
			state.drawn = null;
			revealFlame();
			diffInfo(a, b, d, ta);
		}
	} catch (e) {
		if (tok === flameToken) showMessage(e.message);
	}
}
// an answer that is not a graph (off-CPU disabled, a range before the history, a pid that names
// nothing): said where the graph would be, not as an empty graph
function showMessage(msg) {
	fg.root = null;
	fg.message = msg;
	drawFlame();
	fg.message = null;
	$('fg-status').textContent = 'error: ' + msg;
	fgCanvas.dataset.samples = '0';
	topUnavailable(msg);
}

// ---------------------------------------------------------------------------------------------
// the top table: /api/v1/top for the range and filters of the graph; sorted by self or total
// (click a heading), filtered by the search, a row opens its sandwich
const top = { rows: [], sort: 'self', total: 0, unit: 'samples', functions: 0 };
let topToken = 0;
async function loadTop(p) {
	const tok = ++topToken;
	const q = new URLSearchParams(p);
	q.set('limit', '20000');
	try {
		const j = await getJSON(API + 'top?' + q);
		if (tok !== topToken) return;
		top.rows = j.top;
		top.total = j.total;
		top.unit = j.unit;
		top.functions = j.functions;
		top.note = j.functions > j.top.length ? ` (the first ${j.top.length} by self)` : '';
	} catch (e) {
		if (tok !== topToken) return;
		top.rows = [];
		top.note = ': ' + e.message;
	}
	$('top-panel').dataset.state = 'loaded';
	renderTop();
}
function topUnavailable(why) {
	++topToken;
	top.rows = [];
	top.note = ': ' + why;
	top.functions = 0;
	renderTop();
}
function renderTop() {
	const body = $('top-table').tBodies[0];
	body.textContent = '';
	const re = fg.matchRe;
	const rows = top.rows.filter((r) => !re || re.test(r.function));
	const k = top.sort;
	rows.sort((x, y) => y[k] - x[k] || (k === 'self' ? y.total - x.total : y.self - x.self) || (x.function < y.function ? -1 : 1));
	const shown = rows.slice(0, 300);
	const pct = (v) => (top.total ? (100 * v / top.total).toFixed(2) : '0.00') + '%';
	for (const r of shown) {
		const tr = body.insertRow();
		tr.dataset.function = r.function;
		const kind = frameKind(r.function);
		[displayName(r.function) + (kind ? ` [${kind}]` : ''), String(r.self), pct(r.self), String(r.total), pct(r.total)].forEach((c, i) => {
			const td = tr.insertCell();
			td.textContent = c;
			td.className = i ? 'num' : 'fn';
		});
		tr.title = r.function;
		tr.addEventListener('click', () => openSandwich(r.function));
	}
	for (const th of $('top-table').tHead.rows[0].cells) th.classList.toggle('sorted', th.dataset.sort === k);
	$('top-info').textContent = top.functions ?
		`${top.functions} functions in ${top.total} ${top.unit}${top.note || ''}; ${re ? rows.length + ' match the search, ' : ''}${shown.length} shown, by ${k}` :
		'No functions' + (top.note || ' (select a range on the heat map)');
	$('top-table').dataset.sort = k;
	$('top-table').dataset.rows = String(shown.length);
}
for (const th of $('top-table').tHead.rows[0].cells) {
	if (!th.dataset.sort) continue;
	const sortBy = () => { top.sort = th.dataset.sort; renderTop(); };
	th.addEventListener('click', sortBy);
	th.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') sortBy(); });
}

// ---------------------------------------------------------------------------------------------
// the sandwich of one function (/api/v1/sandwich): its callers above (a flame graph whose root is
// the function), its callees below (an icicle from it), merged from every place it is called
const swCallers = $('sw-callers'), swCallees = $('sw-callees');
const sw = { drawn: { callers: [], callees: [] }, rowH: 16 };
function escapeRe(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }
function swColor(name) {
	const v1 = hashName(name), v2 = hashName(name.split('').reverse().join(''));
	if (name.endsWith('_[k]')) return `rgb(${200 + Math.round(55 * v1)},${120 + Math.round(60 * v2)},40)`;
	if (name.endsWith('_[j]')) return `rgb(${50 + Math.round(60 * v1)},${180 + Math.round(60 * v2)},${50 + Math.round(60 * v1)})`;
	return `rgb(${205 + Math.round(50 * v2)},${Math.round(230 * v1)},${Math.round(55 * v2)})`;
}
function drawTree(canvas, root, icicle, which) {
	const cssW = canvas.parentElement.clientWidth - 26 || 1200;
	const dpr = window.devicePixelRatio || 1;
	const out = [];
	const total = root.a;
	const stack = [[root, 0, -1]];
	let depth = 0;
	while (stack.length) {
		const [n, x, d] = stack.pop();
		let cx = x;
		for (const k of sortedKids(n)) {
			const w = total ? k.a * cssW / total : 0;
			if (w >= 0.5) {
				out.push({ node: k, x: cx, w, depth: d + 1 });
				if (d + 1 > depth) depth = d + 1;
				stack.push([k, cx, d + 1]);
			}
			cx += w;
		}
	}
	const H = (depth + 1) * sw.rowH + 2;
	canvas.style.height = H + 'px';
	canvas.width = Math.round(cssW * dpr);
	canvas.height = Math.round(H * dpr);
	const ctx = canvas.getContext('2d');
	ctx.scale(dpr, dpr);
	ctx.clearRect(0, 0, cssW, H);
	ctx.font = '11px Verdana, sans-serif';
	ctx.textBaseline = 'middle';
	sw.drawn[which] = [];
	for (const f of out) {
		const y = icicle ? f.depth * sw.rowH : H - (f.depth + 1) * sw.rowH;
		ctx.fillStyle = swColor(f.node.name);
		ctx.fillRect(f.x, y, Math.max(f.w - 0.5, 0.5), sw.rowH - 1);
		sw.drawn[which].push({ node: f.node, x: f.x, y, w: f.w, depth: f.depth });
		if (f.w > 24) {
			const max = Math.floor((f.w - 6) / 6.6);
			let label = displayName(f.node.name);
			if (label.length > max) label = max > 2 ? label.slice(0, max - 2) + '..' : '';
			ctx.fillStyle = '#000';
			if (label) ctx.fillText(label, f.x + 3, y + sw.rowH / 2);
		}
	}
	canvas.dataset.frames = String(out.length);
	canvas.dataset.total = String(total);
}
let swToken = 0;
async function openSandwich(name, quiet) {
	const panel = $('sandwich-panel');
	if (!state.view || state.view.kind !== 'range' || !state.selA) {
		panel.hidden = false;
		$('sw-title').textContent = `Sandwich of ${displayName(name)}`;
		$('sw-status').textContent = 'the sandwich is of a range of the heat map (not of a capture or a differential graph)';
		return;
	}
	const tok = ++swToken;
	state.sandwich = name;
	const p = rangeParams(state.selA, { function: '^' + escapeRe(name) + '$' });
	panel.hidden = false;
	$('sw-title').textContent = `Sandwich of ${displayName(name)}`;
	$('sw-status').textContent = 'loading…';
	let j;
	try {
		j = await getJSON(API + 'sandwich?' + p);
	} catch (e) {
		if (tok === swToken) $('sw-status').textContent = 'error: ' + e.message;
		return;
	}
	if (tok !== swToken) return;
	const up = parseFolded(j.callers, null, 'a'), down = parseFolded(j.callees, null, 'a');
	drawTree(swCallers, up, false, 'callers');
	drawTree(swCallees, down, true, 'callees');
	const share = top.total ? ` (${(100 * j.total / top.total).toFixed(2)}% of the graph)` : '';
	$('sw-status').textContent = `${displayName(name)}: ${j.total} ${j.unit}${share} through it; callers ${up.a}, callees ${down.a}`;
	panel.dataset.function = name;
	panel.dataset.total = String(j.total);
	panel.dataset.callers = String(up.a);
	panel.dataset.callees = String(down.a);
	if (!quiet) panel.scrollIntoView({ block: 'nearest' });
}
function swFrameAt(canvas, which, ev) {
	const r = canvas.getBoundingClientRect();
	const x = ev.clientX - r.left, y = ev.clientY - r.top;
	return sw.drawn[which].find((f) => x >= f.x && x < f.x + f.w && y >= f.y && y < f.y + sw.rowH) || null;
}
for (const [canvas, which] of [[swCallers, 'callers'], [swCallees, 'callees']]) {
	canvas.addEventListener('mousemove', (ev) => {
		const f = swFrameAt(canvas, which, ev);
		$('sw-status').dataset.hover = f ? f.node.name : '';
		canvas.title = f ? `${f.node.name.replace(MARK_RE, '')} (${f.node.a} ${unitName()})` : '';
	});
	canvas.addEventListener('click', (ev) => {
		const f = swFrameAt(canvas, which, ev);
		if (f) openSandwich(f.node.name);
	});
}
$('sw-close').addEventListener('click', () => { $('sandwich-panel').hidden = true; state.sandwich = null; });

// ---------------------------------------------------------------------------------------------
// captures
async function startCapture() {
	const body = new URLSearchParams();
	body.set('seconds', $('cap-seconds').value || '10');
	if ($('cap-frequency').value) body.set('frequency', $('cap-frequency').value);
	if ($('cap-pid').value.trim()) body.set('pid', $('cap-pid').value.trim());
	// a capture of the events shown (wall is two stores: captured as cpu)
	if (['offcpu', 'wakeup', 'chain'].includes($('f-event').value)) {
		body.set('event', $('f-event').value);
		body.delete('frequency');
	}
	let c;
	// shown at once: the daemon answers once the capture's sampler is loaded, which takes
	// seconds on a loaded host (an indeterminate bar until then)
	$('capture-start').disabled = true;
	$('capture-progress').removeAttribute('value');
	$('capture-progress').hidden = false;
	$('capture-status').textContent = 'capture starting…';
	try {
		c = await getJSON(API + 'captures', { method: 'POST', body });
	} catch (e) {
		$('capture-status').textContent = 'capture failed: ' + e.message;
		$('capture-progress').hidden = true;
		$('capture-start').disabled = false;
		return;
	}
	state.capture = c.id;
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
		$('capture-status').textContent = `capture #${id} ${c.state}: ${c.error || c.reason || 'no reason given'}`;
		$('capture-status').dataset.state = c.state;
		listCaptures();
		return;
	}
	$('capture-status').textContent = `capture #${id} done: ${captureCount(c)}${c.truncated ? ' (truncated at the memory cap)' : ''}${c.frequency_applied === false && c.frequency ? ' at the daemon\'s frequency' : ''}` +
		(c.samples === 0 ? ' — nothing was sampled: is sampling running (see the banner) and the process on a CPU?' : '') +
		($('f-comm').value.trim() ? ` (the comm filter /${$('f-comm').value.trim()}/ applies to its graph)` : '');
	$('capture-status').dataset.state = 'done';
	listCaptures();
	openCapture(c);
}
// a capture's count as its graph shows it: the idle task's samples apart unless idle is ticked
function captureCount(c) {
	const idle = c.idle_samples || 0;
	if ($('f-idle').checked || !idle) return `${c.samples} samples` + (idle ? ` (${idle} idle)` : '');
	return `${c.samples - idle} samples (+${idle} idle, hidden: tick idle)`;
}
async function openCapture(c) {
	const p = filterParams();
	p.delete('pid'); // the capture already has its pid
	const q = p.toString() ? '?' + p : '';
	// the page's comm and idle filters apply to the capture's graph (not to what it recorded)
	const comm = p.get('comm');
	const note = comm ? ` — comm filter /${comm}/ applied` : '';
	topUnavailable('the top table is of a range of the heat map, not of a capture');
	setView({ kind: 'capture', title: `Capture #${c.id}${c.pid ? ' (pid ' + c.pid + ')' : ''}${note}`, svgUrl: c.urls.flamegraph + q, foldedUrl: c.urls.folded + q });
	try {
		await showFolded([await getText(c.urls.folded + q)], state.view.title);
	} catch (e) {
		showMessage(e.message);
	}
}
async function listCaptures() {
	let l;
	try { l = await getJSON(API + 'captures'); } catch (e) { return; }
	const ul = $('capture-list');
	ul.textContent = '';
	for (const c of l.captures) {
		const li = document.createElement('li');
		li.textContent = `#${c.id} ${c.state} ${c.seconds} s${c.pid ? ' pid ' + c.pid : ''}${c.samples !== undefined ? ', ' + captureCount(c) : ''}` +
			(c.state === 'failed' && (c.error || c.reason) ? ': ' + (c.error || c.reason) : '');
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
for (const id of ['f-pid', 'f-comm', 'f-container', 'f-service', 'f-idle', 'f-event']) {
	$(id).addEventListener('change', () => { loadHeatmap(); loadFlame(); });
}
$('f-group').addEventListener('change', () => loadFlame());
for (const id of ['fg-focus', 'fg-ignore']) $(id).addEventListener('change', () => loadFlame());
$('f-idle').addEventListener('change', () => listCaptures());
$('arrangement').addEventListener('change', () => { state.selA = state.selB = null; hmView.locked = false; showSelection(); loadHeatmap(); });
$('refresh').addEventListener('click', () => { loadHeatmap(); loadFlame(); });
window.addEventListener('resize', () => { hmView.locked = false; drawHeatmap(); drawFlame(); });

// a small API for tests and the curious: what is drawn, and a way to select by time
window.emberDashboard = {
	state,
	frames: () => fg.drawn.map((f) => ({ name: f.node.name, label: displayName(f.node.name), x: f.x, y: f.y, w: f.w, depth: f.depth, h: fg.rowH, matched: fg.matched.has(f.node) })),
	hmLoads: () => hmView.loads,
	top: () => ({ sort: top.sort, rows: [...$('top-table').tBodies[0].rows].map((r) => ({ function: r.dataset.function,
		self: Number(r.cells[1].textContent), total: Number(r.cells[3].textContent) })) }),
	sandwich: (name) => openSandwich(name),
	search: (q) => { const t = performance.now(); $('fg-search').value = q; applySearch(); return performance.now() - t; },
	selectSeconds: (from, to) => select({ from: secToNs(String(from)), to: secToNs(String(to)) }),
	cellCenter: (col, row) => {
		const r = hmCanvas.getBoundingClientRect();
		const sx = r.width / hmCanvas.width, sy = r.height / hmCanvas.height;
		return { x: r.left + (AXIS_W + col * cellW + cellW / 2) * sx, y: r.top + ((state.hm.rows - 1 - row) * cellH + cellH / 2) * sy };
	},
};

(async function init() {
	$('fg-icicle').checked = fg.icicle;
	await pollStats();
	await loadHeatmap();
	drawFlame();
	listCaptures();
	schedule();
})();
})();
