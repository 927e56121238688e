// SPDX-License-Identifier: MIT
// The dashboard's heat map and flame graph as an on-call engineer reads them, at
// 1366x768; see test_dashboard_views.sh. PART=replay: a 30 min recording; PART=live: a live
// emberd whose drain the file PAUSE pauses (EMBERD_TEST_PAUSE_DRAIN). Screenshots are decoded
// (decodePng) and checked, not only saved.
import fs from 'fs';
import path from 'path';
import { launch, ok, finish, outDir, decodePng } from './lib.mjs';

const URL_ = process.env.URL, PART = process.env.PART, DOCS = process.env.DOCS || '';
const W = 1366, H = 768;
const shot = async (page, name, opts) => {
	const buf = await page.screenshot(Object.assign({ path: path.join(outDir, `views-${name}.png`) }, opts || {}));
	return decodePng(buf);
};
// docs/img screenshots (DOCS set): decoded again and @check(png) asserted, as the others are
const docShot = async (page, name, opts, check, what) => {
	if (!DOCS) return;
	const buf = await page.screenshot(Object.assign({ path: path.join(DOCS, name) }, opts || {}));
	const png = decodePng(buf);
	const r = check(png);
	ok(r === true, `docs/img/${name} shows ${what}`, JSON.stringify(r));
};
// whether some pixel of @box (page coordinates, on a screenshot clipped at 0,0) satisfies @pred
const anyPx = (png, box, pred) => {
	for (let y = Math.max(0, Math.floor(box.top)); y < Math.min(png.height, box.bottom); y++)
		for (let x = Math.max(0, Math.floor(box.left)); x < Math.min(png.width, box.right); x++)
			if (pred(png.px(x, y))) return true;
	return { box, w: png.width, h: png.height };
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const near = (a, b, tol) => Math.abs(a - b) <= tol;
const rgbOf = (s) => s.match(/\d+/g).slice(0, 3).map(Number);
const sameRgb = (a, b, tol) => a.every((v, i) => near(v, b[i], tol));

const browser = await launch();
const page = await browser.newPage({ viewport: { width: W, height: H } });
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });

const loads = () => page.evaluate(() => window.emberDashboard.hmLoads());
async function waitLoads(n, timeout) {
	await page.waitForFunction((n) => window.emberDashboard.hmLoads() >= n, n, { timeout: timeout || 10000 });
}
// the cell under the pointer, as the tooltip reports it
async function tipCell() {
	return page.evaluate(() => {
		const t = document.getElementById('hm-tip');
		return t.hidden ? null : { col: +t.dataset.col, row: +t.dataset.row, count: +t.dataset.count, text: t.textContent };
	});
}
async function hoverAt(p) {
	await page.mouse.move(p.x + 1, p.y);
	await page.mouse.move(p.x, p.y);
}

try {
	await page.goto(URL_ + '/', { waitUntil: 'load' });
	await page.waitForFunction(() => window.emberDashboard && window.emberDashboard.state.hm, null, { timeout: 15000 });
	if (PART === 'replay') await replay();
	else await live();
} catch (e) {
	ok(false, 'the test ran to the end', String(e).split('\n')[0]);
	await page.screenshot({ path: path.join(outDir, `views-${PART}-failure.png`), fullPage: true }).catch(() => {});
}
ok(errors.length === 0, 'no errors in the page', errors.join(' | '));
await browser.close();
finish();

async function replay() {
	const hm = await page.evaluate(() => {
		const s = window.emberDashboard.state.hm;
		return { columns: s.columns, rows: s.rows, max: s.max, total: s.total, last: s.values[s.columns - 1] };
	});
	ok(hm.columns >= 1800 && hm.rows === 50, '30 min of 1 s columns', JSON.stringify({ columns: hm.columns, rows: hm.rows }));

	// axes and legend: what they say, and that they are drawn where the screenshot shows them
	const ax = await page.evaluate(() => {
		const y = document.getElementById('hm-yaxis'), m = document.getElementById('heatmap');
		const l = document.getElementById('hm-legend');
		const ink = (c, x0, y0, w, h) => {
			const d = c.getContext('2d').getImageData(x0, y0, w, h).data;
			let n = 0;
			for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && d[i] < 150 && d[i + 1] < 150) n++;
			return n;
		};
		const rows = +m.dataset.rows, ch = +m.dataset.cellH;
		return { ylabels: y.dataset.labels, yunit: y.dataset.unit, xlabels: m.dataset.xlabels.split('|'),
			 ticks: l.dataset.ticks, yink: ink(y, 0, 0, y.width, y.height),
			 xink: ink(m, Math.max(0, m.width - 1300), rows * ch + 2, Math.min(1300, m.width), 12),
			 legendLabel: document.getElementById('hm-legend-label').textContent };
	});
	const yl = ax.ylabels.split('|').map(Number), ystep = yl[1] - yl[0];
	ok(yl[0] === 0 && yl[yl.length - 1] === 1000 && yl.length >= 3 && yl.every((v, i) => v === i * ystep) && ax.yunit === 'ms' && ax.yink > 50,
	   'y-axis: ms of the second, 0 to 1000 in even steps, drawn', JSON.stringify({ l: ax.ylabels, u: ax.yunit, ink: ax.yink }));
	ok(ax.xlabels.length >= 20 && ax.xlabels.every((t) => /^\d\d:\d\d:\d\d$/.test(t)) && ax.xink > 50,
	   'x-axis: clock times (hh:mm:ss), drawn', ax.xlabels.slice(-3).join(' ') + ' ink ' + ax.xink);
	ok(ax.ticks === `0|${Math.round(hm.max / 2)}|${hm.max}` && /samples per cell \(20 ms\)/.test(ax.legendLabel),
	   'colour legend with counts 0, max/2, max per cell', ax.ticks + ' ' + ax.legendLabel);

	// the newest column is in view: on the screenshot, at its centre, the colour drawn there
	const lastRow = hm.last.indexOf(Math.max(...hm.last));
	const nc = await page.evaluate((r) => {
		const d = window.emberDashboard, s = d.state.hm, c = document.getElementById('heatmap');
		const p = d.cellCenter(s.columns - 1, r), w = document.getElementById('heatmap-wrap').getBoundingClientRect();
		const cr = c.getBoundingClientRect(), sx = c.width / cr.width;
		const px = c.getContext('2d').getImageData(Math.floor((p.x - cr.left) * sx), Math.floor((p.y - cr.top) * sx), 1, 1).data;
		return { x: p.x, y: p.y, wl: w.left, wr: w.right, rgb: [px[0], px[1], px[2]] };
	}, lastRow);
	let png = await shot(page, 'heatmap');
	// the axes and the legend on the screenshot: dark label ink in the y-axis and in the x-axis
	// strip under the visible cells, the legend's colour ramp (red of the hottest cell)
	const boxes = await page.evaluate(() => {
		const r = (id) => document.getElementById(id).getBoundingClientRect().toJSON();
		const m = document.getElementById('heatmap'), mr = r('heatmap'), wr = r('heatmap-wrap');
		const sy = mr.height / m.height, y0 = mr.top + (+m.dataset.rows * +m.dataset.cellH + 2) * sy;
		return { y: r('hm-yaxis'), legend: r('hm-legend'),
			 x: { left: Math.max(mr.left, wr.left), right: Math.min(mr.right, wr.right), top: y0, bottom: y0 + 12 * sy } };
	});
	const dark = (q) => q[0] < 110 && q[1] < 110 && q[2] < 110;
	const shown = { y: anyPx(png, boxes.y, dark), x: anyPx(png, boxes.x, dark),
		legend: anyPx(png, boxes.legend, (q) => q[0] > 100 && q[0] - q[1] > 60 && Math.abs(q[1] - q[2]) <= 4) };
	ok(shown.y === true && shown.x === true && shown.legend === true, 'the axes\' labels and the legend\'s colours show on the screenshot', JSON.stringify(shown));
	const seen = png.px(nc.x, nc.y);
	ok(nc.x > nc.wl && nc.x < nc.wr && nc.x < W && nc.y < H && sameRgb(seen, nc.rgb, 3) && seen[1] < 240,
	   'the newest column is in view after 30 min of history (on the screenshot)', JSON.stringify({ nc, seen }));
	const legendBottom = await page.evaluate(() => document.getElementById('hm-legend').getBoundingClientRect().bottom);
	await docShot(page, 'dashboard-heatmap.png', { clip: { x: 0, y: 0, width: W, height: Math.min(H, Math.ceil(legendBottom) + 8) } },
		(png) => sameRgb(png.px(nc.x, nc.y), nc.rgb, 3) || png.px(nc.x, nc.y), 'the newest column');

	// tooltip at the cursor: time, count and share
	const col = hm.columns - 3;
	const p0 = await page.evaluate(([c]) => {
		const d = window.emberDashboard, s = d.state.hm;
		const r = s.values[c].indexOf(Math.max(...s.values[c]));
		return Object.assign(d.cellCenter(c, r), { r, v: s.values[c][r], sum: s.values[c].reduce((a, b) => a + b, 0) });
	}, [col]);
	await hoverAt(p0);
	const tip = await tipCell();
	const tipBox = await page.evaluate(() => document.getElementById('hm-tip').getBoundingClientRect().toJSON());
	const share = (100 * p0.v / p0.sum).toFixed(1) + '%';
	ok(tip && tip.col === col && tip.row === p0.r && tip.text.includes(`${p0.v} samples`) && tip.text.includes(share) &&
	   /\d\d:\d\d:\d\d\.\d{3} \+20 ms/.test(tip.text),
	   'heat map tooltip: time, count and share of the column', tip && tip.text);
	ok(near(tipBox.left, p0.x + 12, 3) && near(tipBox.top, p0.y + 12, 3), 'the tooltip is at the cursor', JSON.stringify(tipBox));
	png = await shot(page, 'heatmap-tooltip');
	const tipPx = png.px(tipBox.left + 3, tipBox.top + 2);
	ok(sameRgb(tipPx, [255, 255, 224], 6) || sameRgb(tipPx, [153, 153, 153], 6), 'the tooltip shows on the screenshot', tipPx.join(','));

	// stable cells: two refreshes, the same cell under the pointer
	const n0 = await loads();
	for (let i = 1; i <= 2; i++) {
		await page.evaluate(() => document.getElementById('refresh').click());
		await waitLoads(n0 + i);
	}
	await hoverAt(p0);
	const tip2 = await tipCell();
	ok(tip2 && tip2.col === tip.col && tip2.row === tip.row, 'the cell under the pointer is the same after two refreshes', JSON.stringify(tip2));
	// scrolled back: a refresh keeps the user's place
	await page.mouse.move(5, 5);
	await page.evaluate(() => { document.getElementById('heatmap-wrap').scrollLeft = 0; });
	const n1 = await loads();
	await page.evaluate(() => document.getElementById('refresh').click());
	await waitLoads(n1 + 1);
	const sl = await page.evaluate(() => document.getElementById('heatmap-wrap').scrollLeft);
	ok(sl === 0, 'a refresh does not move a heat map scrolled back', sl);
	await page.evaluate(() => { const w = document.getElementById('heatmap-wrap'); w.scrollLeft = w.scrollWidth; });

	// a selection (drag over the last 30 columns) brings the flame graph into view with its top
	// frame on screen, no scrolling by the test
	await page.evaluate(() => window.scrollTo(0, 0));
	const [a, b] = await page.evaluate(() => {
		const d = window.emberDashboard, s = d.state.hm;
		return [d.cellCenter(s.columns - 30, 0), d.cellCenter(s.columns - 1, s.rows - 1)];
	});
	await page.mouse.move(a.x, a.y);
	await page.mouse.down();
	await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 4 });
	await page.mouse.move(b.x, b.y, { steps: 4 });
	await page.mouse.up();
	await page.waitForFunction(() => Number(document.getElementById('flamegraph').dataset.frames || 0) > 10, null, { timeout: 15000 });
	await sleep(200);
	const geo = () => page.evaluate(() => {
		const c = document.getElementById('flamegraph').getBoundingClientRect();
		const fr = window.emberDashboard.frames();
		const top = fr.reduce((m, f) => (f.depth > m.depth ? f : m), fr[0]);
		const root = fr.find((f) => f.depth === 0);
		return { top: { name: top.name, y: c.top + top.y, h: top.h, x: c.left + top.x, w: top.w }, root: { y: c.top + root.y, h: root.h },
			 depth: top.depth, ch: c.height, view: document.getElementById('flamegraph').dataset.view };
	});
	let g = await geo();
	ok(g.view === 'flame' && g.top.y >= 0 && g.top.y + g.top.h <= H && g.root.y >= 0 && g.root.y + g.root.h <= H,
	   `flame view at ${W}x${H}: the top frame (depth ${g.depth}) and the root on screen after the selection`, JSON.stringify(g));
	png = await shot(page, 'flamegraph');
	const topPx = png.px(g.top.x + Math.min(g.top.w / 2, 3), g.top.y + g.top.h / 2);
	ok(!sameRgb(topPx, [255, 255, 255], 8), 'the top frame shows on the screenshot', topPx.join(','));
	await docShot(page, 'dashboard-flamegraph.png', {},
		(png) => !sameRgb(png.px(g.top.x + Math.min(g.top.w / 2, 3), g.top.y + g.top.h / 2), [255, 255, 255], 8) || 'white', 'the top frame');

	// icicle: root at the top of the canvas
	await page.evaluate(() => document.getElementById('fg-icicle').click());
	g = await geo();
	const c0 = await page.evaluate(() => document.getElementById('flamegraph').getBoundingClientRect().top);
	ok(g.view === 'icicle' && near(g.root.y, c0, 1) && g.top.y > g.root.y && g.top.y + g.top.h <= H,
	   'icicle view: root at the top, the deepest frame below it on screen', JSON.stringify(g));
	await shot(page, 'icicle');
	await page.evaluate(() => document.getElementById('fg-icicle').click());

	// names: markers as colour, Python files by base name in labels, full path in the tooltip
	const fr = await page.evaluate(() => window.emberDashboard.frames());
	const pyf = fr.find((f) => f.name.startsWith('Worker.run ('));
	const kf = fr.find((f) => f.name === 'vfs_write_[k]');
	ok(pyf && pyf.label === 'Worker.run (worker.py:112)', 'Python frame label: qualname (file.py:line)', pyf && pyf.label);
	ok(kf && kf.label === 'vfs_write', 'kernel frame label without _[k]', kf && kf.label);
	const cr = await page.evaluate(() => document.getElementById('flamegraph').getBoundingClientRect().toJSON());
	const hp = { x: cr.left + pyf.x + Math.min(pyf.w / 2, 30), y: cr.top + pyf.y + pyf.h / 2 };
	await hoverAt(hp);
	const ft = await page.evaluate(() => {
		const t = document.getElementById('fg-tip');
		return { hidden: t.hidden, text: t.textContent, box: t.getBoundingClientRect().toJSON(),
			 hover: document.getElementById('fg-overlay').dataset.hover };
	});
	ok(!ft.hidden && ft.text.includes('/opt/app/lib/python3.11/site-packages/app/worker.py:112') && ft.text.includes('[Python]') &&
	   ft.hover === pyf.name, 'frame details at the cursor: full path, kind; the frame outlined', JSON.stringify(ft));
	ok(near(ft.box.left, hp.x + 14, 3) && near(ft.box.top, hp.y + 16, 3) || (ft.box.left < hp.x && ft.box.top < hp.y + 40),
	   'the frame tooltip is at the cursor', JSON.stringify({ box: ft.box, hp }));
	await shot(page, 'flamegraph-tooltip');

	// search, then a bad regex: the old highlight goes
	await page.fill('#fg-search', 'deep_1');
	await page.waitForFunction(() => window.emberDashboard.frames().some((f) => f.matched), null, { timeout: 5000 });
	const magenta = () => page.evaluate(() => {
		const c = document.getElementById('flamegraph'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
		let n = 0;
		for (let i = 0; i < d.length; i += 4) if (d[i] === 230 && d[i + 1] === 0 && d[i + 2] === 230) n++;
		return n;
	});
	const m1 = await magenta();
	ok(m1 > 0, 'search highlights the matches', m1);
	await page.fill('#fg-search', 'deep_(');
	await page.waitForFunction(() => document.getElementById('fg-matched').dataset.error === '1', null, { timeout: 5000 });
	const bad = await page.evaluate(() => ({ text: document.getElementById('fg-matched').textContent,
		matched: window.emberDashboard.frames().filter((f) => f.matched).length }));
	const m2 = await magenta();
	ok(bad.matched === 0 && m2 === 0 && /^bad regex/.test(bad.text), 'a bad regex clears the old highlight and says so', JSON.stringify({ bad, m2 }));
	await page.fill('#fg-search', '');

	// the recording's unresolved frames explained: emberd did not symbolize them (replay), perf did
	await page.evaluate(() => window.scrollTo(0, 0));
	await page.click('#st-unres-btn');
	const u = await page.evaluate(() => {
		const r = [...document.querySelectorAll('#unres-table tbody tr')].find((x) => x.dataset.frame === '[libcrypto.so.3]');
		const total = Number(document.getElementById('flamegraph').dataset.samples);
		return { total, row: r && { reason: r.dataset.reason, cells: [...r.cells].map((c) => c.textContent) } };
	});
	const m = u.row && /^(\d+) samples \(([\d.]+)%/.exec(u.row.cells[1]);
	ok(u.row && u.row.reason === 'recorded' && m && +m[1] > 0 && Math.abs(+m[2] - 100 * +m[1] / u.total) < 0.1 &&
	   +m[2] > 5 && +m[2] < 15 && /perf found no symbol in libcrypto\.so\.3.*debug symbols.*perf script again/.test(u.row.cells[5]),
	   'the unresolved panel explains [libcrypto.so.3] (~10 % of the graph): perf named no symbol there, and what would', JSON.stringify(u));
	await page.click('#unres-close');
}

async function live() {
	const PAUSE = process.env.PAUSE;
	// stable cells while live: the pointer on a cell, two refreshes append columns
	const p = await page.evaluate(() => {
		const d = window.emberDashboard, s = d.state.hm;
		return Object.assign(d.cellCenter(Math.max(0, s.columns - 2), 25), { columns: s.columns });
	});
	await hoverAt(p);
	const t1 = await tipCell();
	const cw1 = await page.evaluate(() => document.getElementById('heatmap').dataset.cellW);
	const n0 = await loads();
	await waitLoads(n0 + 2, 15000);
	await sleep(100);
	await hoverAt(p);
	const t2 = await tipCell();
	const after = await page.evaluate(() => ({ columns: window.emberDashboard.state.hm.columns, cw: document.getElementById('heatmap').dataset.cellW }));
	ok(t1 && t2 && t1.col === t2.col && t1.row === t2.row && after.cw === cw1 && after.columns > p.columns,
	   'live: two refreshes append columns, the cell under the pointer stays', JSON.stringify({ t1, t2, p, after, cw1 }));
	await page.mouse.move(5, 5);
	const rate = await page.evaluate(() => Number(document.getElementById('st-rate').textContent));
	await page.waitForFunction(() => !isNaN(Number(document.getElementById('st-rate').textContent)), null, { timeout: 10000 }).catch(() => {});
	const r2 = await page.evaluate(() => Number(document.getElementById('st-rate').textContent));
	const cpus = await page.evaluate(() => (window.emberDashboard.state.lastStats.sampler || {}).cpus_attached || navigator.hardwareConcurrency);
	ok(r2 > 0 && r2 <= cpus * 99 * 1.02, `samples/s within CPUs x 99 Hz (${cpus} CPUs)`, `${rate} ${r2}`);
	await shot(page, 'live');
	if (process.env.STRIPPED) await unresolved(process.env.STRIPPED);

	// the drain paused: the banner with the time of the last sample, "live" dropped
	fs.writeFileSync(PAUSE, '');
	const stalled = await page.waitForFunction(() => document.getElementById('live-banner').dataset.state === 'stalled', null, { timeout: 40000 })
		.then(() => true).catch(() => false);
	const b = await page.evaluate(() => ({ text: document.getElementById('live-banner').textContent, hidden: document.getElementById('live-banner').hidden,
		badge: document.getElementById('mode').textContent, box: document.getElementById('live-banner').getBoundingClientRect().toJSON() }));
	ok(stalled && !b.hidden && /the last sample was at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/.test(b.text) && b.badge !== 'live',
	   'drain paused: the stalled banner with the time of the last sample, no "live" badge', JSON.stringify(b));
	const png = await shot(page, 'stalled');
	const bp = png.px(b.box.left + 3, b.box.top + 3);
	ok(stalled && sameRgb(bp, [255, 235, 238], 6), 'the banner shows on the screenshot', bp.join(','));
	if (stalled) await docShot(page, 'dashboard-stalled.png', { clip: { x: 0, y: 0, width: W, height: Math.min(H, Math.ceil(b.box.bottom) + 120) } },
		(png) => sameRgb(png.px(b.box.left + 3, b.box.top + 3), [255, 235, 238], 6) || png.px(b.box.left + 3, b.box.top + 3), 'the stalled banner');
	fs.unlinkSync(PAUSE);
	const back = await page.waitForFunction(() => document.getElementById('live-banner').dataset.state === 'ok', null, { timeout: 30000 })
		.then(() => true).catch(() => false);
	const badge = await page.textContent('#mode');
	ok(back && badge === 'live', 'drain resumed: the banner goes, "live" again', badge);
}

// "unresolved" explained: a stripped copy of burn runs beside burn; the panel names its
// file, path and build-id, says it is stripped and what would name it, with its samples in the
// flame graph shown; its frames' tooltips say why; burn itself (with symbols) is not listed
async function unresolved(stripped) {
	const frame = '[' + path.basename(stripped) + ']';
	await page.evaluate(() => window.scrollTo(0, 0));
	const [a, b] = await page.evaluate(() => {
		const d = window.emberDashboard, s = d.state.hm;
		return [d.cellCenter(Math.max(0, s.columns - 6), 0), d.cellCenter(s.columns - 1, s.rows - 1)];
	});
	await page.mouse.move(a.x, a.y);
	await page.mouse.down();
	await page.mouse.move(b.x, b.y, { steps: 4 });
	await page.mouse.up();
	await page.waitForFunction((fr) => window.emberDashboard.frames().some((f) => f.name === fr), frame, { timeout: 15000 });
	await page.waitForFunction((fr) => ((window.emberDashboard.state.lastStats.symbols || {}).unresolved_files || []).some((u) => u.frame === fr),
		frame, { timeout: 10000 });
	await page.evaluate(() => window.scrollTo(0, 0));
	await page.click('#st-unres-btn');
	// for docs/img: the panel as it opens, the reason of a stripped file in red on it
	const why = await page.evaluate(() => {
		const r = [...document.querySelectorAll('#unres-table tbody tr')].find((x) => x.dataset.reason === 'stripped' &&
			x.getBoundingClientRect().bottom < window.innerHeight);
		return r ? r.cells[4].getBoundingClientRect().toJSON() : { top: 0, bottom: 0, left: 0, right: 0 };
	});
	await docShot(page, 'dashboard-unresolved.png', {},
		(png) => anyPx(png, why, (q) => q[0] > 150 && q[1] < 90 && q[2] < 90), 'a stripped file\'s reason (red text)');
	await page.evaluate((fr) => { // the row in view, as a user scrolls to it
		const r = [...document.querySelectorAll('#unres-table tbody tr')].find((x) => x.dataset.frame === fr);
		if (r) r.scrollIntoView({ block: 'center' });
	}, frame);
	await sleep(100);
	const t = await page.evaluate((fr) => {
		const rows = [...document.querySelectorAll('#unres-table tbody tr')];
		const r = rows.find((x) => x.dataset.frame === fr);
		return { panel: !document.getElementById('unresolved-panel').hidden, frames: rows.map((x) => x.dataset.frame),
			row: r && { reason: r.dataset.reason, cells: [...r.cells].map((c) => c.textContent), box: r.getBoundingClientRect().toJSON() } };
	}, frame);
	const c = t.row ? t.row.cells : [];
	ok(t.panel && t.row && t.row.reason === 'stripped' && c[3].startsWith(stripped) && /build-id [0-9a-f]{40}/.test(c[3]) &&
	   /stripped/.test(c[4]) && /-dbgsym/.test(c[5]) && /^[1-9]\d* samples \(\d/.test(c[1]),
	   `the unresolved panel: ${frame} stripped, its path and build-id, what would name it, its samples in the graph`, JSON.stringify(t));
	ok(!t.frames.includes('[burn]') && !t.frames.some((x) => /^\[(truncated|lost stack|stack collision|idle)\]/.test(x)),
	   'burn, which has symbols, is not listed, nor emberd\'s own markers ([truncated]...)', JSON.stringify(t.frames));
	const png = await shot(page, 'unresolved');
	const px = t.row ? png.px(t.row.box.left + t.row.box.width * 0.6, t.row.box.top + t.row.box.height / 2) : [0, 0, 0];
	ok(t.row && t.row.box.top >= 0 && t.row.box.top + 4 < H, 'the row is on the screenshot', JSON.stringify({ box: t.row && t.row.box, px }));
	// the tooltip of one of its frames
	const f = await page.evaluate((fr) => {
		const c = document.getElementById('flamegraph').getBoundingClientRect();
		const x = window.emberDashboard.frames().filter((q) => q.name === fr).sort((p, q) => q.w - p.w)[0];
		return x && { x: c.left + x.x + Math.min(x.w / 2, 20), y: c.top + x.y + x.h / 2 };
	}, frame);
	await page.evaluate((y) => window.scrollBy(0, y - 300), f ? f.y : 0);
	const f2 = await page.evaluate((fr) => {
		const c = document.getElementById('flamegraph').getBoundingClientRect();
		const x = window.emberDashboard.frames().filter((q) => q.name === fr).sort((p, q) => q.w - p.w)[0];
		return x && { x: c.left + x.x + Math.min(x.w / 2, 20), y: c.top + x.y + x.h / 2 };
	}, frame);
	if (f2) await hoverAt(f2);
	const tip = await page.evaluate(() => { const e = document.getElementById('fg-tip'); return e.hidden ? '' : e.textContent; });
	ok(f2 && tip.includes('unresolved: stripped binary, no debug symbols (' + stripped + ')') && /dbgsym/.test(tip),
	   `the tooltip of a ${frame} frame says why`, tip);
	await page.mouse.move(5, 5);
	await page.click('#unres-close');
	await page.evaluate(() => window.scrollTo(0, 0));
}
