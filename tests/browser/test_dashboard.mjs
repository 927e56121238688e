// SPDX-License-Identifier: MIT
// The dashboard against a real emberd (URL): the heat map renders, a drag selects a range, the
// flame graph shows the function FN, search highlights it with a Matched %, the curl command and
// downloads point at the range, a second range gives a differential graph, and (CAPTURE=1) an
// on-call capture completes and opens. Screenshots go to outDir.
import { launch, ok, finish, outDir } from './lib.mjs';
import path from 'path';

const URL_ = process.env.URL;
const FN = process.env.FN || 'burn_c';
const CAPTURE = process.env.CAPTURE === '1';
// what the capture must show: the burner's functions (burn_a, burn_b, burn_c). A 2 s capture of
// the host beside the first lane's real-time workloads once held 791 samples and none in burn_c,
// the burner's smallest share (burn_a and burn_b were there): the burner had ~6 % of the CPU
const CAP_FN = process.env.CAP_FN || FN;
const shot = (page, name) => page.screenshot({ path: path.join(outDir, `dashboard-${name}.png`), fullPage: true });

const browser = await launch();
const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
const external = [];
page.on('request', (r) => { if (!r.url().startsWith(URL_)) external.push(r.url()); });

try {
	await page.goto(URL_ + '/', { waitUntil: 'load' });
	await page.waitForFunction(() => window.emberDashboard && window.emberDashboard.state.hm, null, { timeout: 15000 });
	const hm = await page.evaluate(() => {
		const s = window.emberDashboard.state.hm;
		const c = document.getElementById('heatmap');
		return { columns: s.columns, rows: s.rows, total: s.total, w: c.width, h: c.height };
	});
	ok(hm.columns >= 1 && hm.rows === 50 && hm.total > 0, 'heat map renders with samples', JSON.stringify(hm));
	// some cells are painted: the canvas is not all white
	const painted = await page.evaluate(() => {
		const c = document.getElementById('heatmap');
		const d = c.getContext('2d').getImageData(0, 0, c.width, c.height - 18).data;
		let n = 0;
		for (let i = 0; i < d.length; i += 4) if (d[i + 1] < 240) n++;
		return n;
	});
	ok(painted > 0, 'heat map cells are painted', painted);
	await shot(page, 'heatmap');

	// drag across every column, bottom row of the first to top row of the last
	const { a, b } = await page.evaluate(() => {
		const d = window.emberDashboard, s = d.state.hm;
		return { a: d.cellCenter(0, 0), b: d.cellCenter(s.columns - 1, s.rows - 1) };
	});
	await page.mouse.move(a.x, a.y);
	await page.mouse.down();
	await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 4 });
	await page.mouse.move(b.x, b.y, { steps: 4 });
	await page.mouse.up();
	const sel = await page.waitForFunction(() => {
		const s = document.querySelector('#selection-info .a');
		return s && s.dataset.from && s.dataset.to ? { from: s.dataset.from, to: s.dataset.to } : null;
	}, null, { timeout: 5000 }).then((h) => h.jsonValue());
	ok(Number(sel.to) > Number(sel.from), 'a drag selects a range', JSON.stringify(sel));

	await page.waitForFunction(() => Number(document.getElementById('flamegraph').dataset.frames || 0) > 1, null, { timeout: 15000 });
	const names = await page.evaluate(() => window.emberDashboard.frames().map((f) => f.name));
	ok(names.some((n) => n === FN || n.startsWith(FN)), `the flame graph shows ${FN}`, names.slice(0, 20).join(','));
	await shot(page, 'flamegraph');

	// hover shows the frame's samples
	const frameOf = (fn) => page.evaluate((fn) => {
		const c = document.getElementById('flamegraph');
		const f = window.emberDashboard.frames().filter((x) => x.name.startsWith(fn)).sort((p, q) => q.w - p.w)[0];
		window.scrollTo(0, c.getBoundingClientRect().top + window.scrollY + f.y - 300);
		const r = c.getBoundingClientRect();
		return { x: r.left + f.x + Math.min(f.w / 2, 20), y: r.top + f.y + 8 };
	}, fn);
	const fr = await frameOf(FN);
	await page.mouse.move(fr.x, fr.y);
	const status = await page.textContent('#fg-status');
	ok(status.includes(FN) && /samples/.test(status), 'hover describes the frame', status);

	// search highlights it and reports Matched %
	await page.fill('#fg-search', FN);
	await page.waitForFunction(() => document.getElementById('fg-matched').dataset.pct, null, { timeout: 5000 });
	const m = await page.evaluate(() => ({
		pct: Number(document.getElementById('fg-matched').dataset.pct),
		text: document.getElementById('fg-matched').textContent,
		hl: window.emberDashboard.frames().filter((f) => f.matched).map((f) => f.name),
	}));
	ok(m.hl.length > 0 && m.hl.every((n) => n.includes(FN)), 'search highlights the function', m.hl.join(','));
	ok(m.pct > 0 && m.pct <= 100 && new RegExp(`^${Number(m.pct).toFixed(1)} % of samples through matches \\(\\d+ of \\d+\\)$`).test(m.text),
	   'the share of samples through matches is shown', m.text);
	await shot(page, 'search');

	// zoom: click the function's frame, it spans the width
	const fz = await frameOf(FN);
	await page.mouse.click(fz.x, fz.y);
	const z = await page.evaluate((fn) => {
		const f = window.emberDashboard.frames().filter((x) => x.name.startsWith(fn)).sort((p, q) => q.w - p.w)[0];
		return { w: f.w, W: document.getElementById('flamegraph').clientWidth };
	}, FN);
	ok(Math.abs(z.w - z.W) < 2, 'click zooms into the frame', JSON.stringify(z));
	await page.click('#fg-reset');

	// curl command and downloads carry the range
	const curl = await page.textContent('#curl-cmd');
	ok(curl.startsWith("curl -s '") && curl.includes('/api/v1/flamegraph.svg?') && curl.includes('from=' + sel.from), 'curl command for the view', curl);
	const svgHref = await page.getAttribute('#download-svg', 'href');
	const foldedHref = await page.getAttribute('#download-folded', 'href');
	const svg = await page.evaluate((u) => fetch(u).then((r) => r.text()), svgHref);
	ok(svg.includes('<svg') && svg.includes(FN), 'download SVG is the full SVG with the function');
	const folded = await page.evaluate((u) => fetch(u).then((r) => r.text()), foldedHref);
	ok(folded.split('\n').some((l) => l.includes(FN)), 'download folded has the function');
	await page.click('#copy-curl');

	// second range: first and second half -> differential flame graph
	const half = (Number(sel.from) + Number(sel.to)) / 2;
	await page.evaluate(([f, h, t]) => {
		const d = window.emberDashboard;
		d.selectSeconds(f, h.toFixed(6));
		d.state.compare = true;
		d.selectSeconds(h.toFixed(6), t);
	}, [sel.from, half, sel.to]);
	await page.waitForFunction(() => document.getElementById('fg-title').textContent.startsWith('Differential'), null, { timeout: 10000 });
	await page.waitForFunction(() => Number(document.getElementById('flamegraph').dataset.frames || 0) > 1, null, { timeout: 10000 });
	const dsvg = await page.evaluate(() => fetch(document.getElementById('download-svg').href).then((r) => r.status));
	ok(dsvg === 200, 'a second range gives the differential flame graph (and its SVG)', dsvg);
	await shot(page, 'diff');

	if (CAPTURE) {
		await page.fill('#cap-seconds', '2');
		await page.fill('#cap-frequency', '199');
		await page.click('#capture-start');
		const prog = await page.waitForFunction(() => {
			const p = document.getElementById('capture-progress');
			return !p.hidden ? true : null;
		}, null, { timeout: 5000 }).then(() => true).catch(() => false);
		ok(prog, 'a progress indicator shows while the capture runs');
		await shot(page, 'capture-running');
		await page.waitForFunction(() => document.getElementById('capture-status').dataset.state === 'done', null, { timeout: 20000 });
		await page.waitForFunction(() => document.getElementById('fg-title').textContent.startsWith('Capture #'), null, { timeout: 10000 });
		await page.waitForFunction(() => Number(document.getElementById('flamegraph').dataset.frames || 0) > 1, null, { timeout: 10000 });
		const cnames = await page.evaluate(() => window.emberDashboard.frames().map((f) => f.name));
		ok(cnames.some((n) => n.startsWith(CAP_FN)), `the capture completes and its flame graph shows ${CAP_FN}`);
		await shot(page, 'capture-done');
	}
	ok(external.length === 0, 'nothing fetched from outside emberd', external.join(' '));
	ok(errors.length === 0, 'no errors in the page', errors.join(' | '));
} catch (e) {
	ok(false, 'dashboard test ran to the end', String(e).split('\n')[0]);
	await shot(page, 'failure').catch(() => {});
}
await browser.close();
finish();
