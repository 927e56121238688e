// SPDX-License-Identifier: MIT
// The views and the honesty cases of the dashboard; see test_dashboard_honest.sh. PART=replay:
// the generated recording's range [FROM, TO); PART=live: a live emberd with 2 s of retention.
import fs from 'fs';
import path from 'path';
import { launch, ok, finish, outDir, decodePng } from './lib.mjs';

const URL_ = process.env.URL, PART = process.env.PART;
const browser = await launch();
const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function shot(name) {
	const file = path.join(outDir, `honest-${name}.png`);
	const buf = await page.screenshot({ path: file });
	return decodePng(buf);
}
const api = async (p) => (await fetch(URL_ + p)).json();
const apiText = async (p) => (await fetch(URL_ + p)).text();
const sum = (t) => t.split('\n').reduce((s, l) => { const i = l.lastIndexOf(' '); return i > 0 ? s + Number(l.slice(i + 1)) : s; }, 0);
const dash = (fn, arg) => page.evaluate(fn, arg);
// the graph of the current view has drawn (its status line names the unit)
async function waitFlame(prev) {
	await page.waitForFunction((p) => {
		const s = document.getElementById('fg-status').textContent || '';
		return / samples, \d+ frames drawn/.test(s) && s !== p;
	}, prev || '', { timeout: 15000 });
}
const status = () => page.textContent('#fg-status');
async function waitTop() {
	await page.waitForFunction(() => document.getElementById('top-panel').dataset.state === 'loaded' &&
		Number(document.getElementById('top-table').dataset.rows) > 0, null, { timeout: 15000 });
}

try {
	await page.goto(URL_ + '/', { waitUntil: 'load' });
	await page.waitForFunction(() => window.emberDashboard && window.emberDashboard.state.hm, null, { timeout: 15000 });
	if (PART === 'replay') {
		const FROM = process.env.FROM, TO = process.env.TO, R = `from=${FROM}&to=${TO}`;
		// --- the range pick of a tall graph: the root and the widest frames in view
		await dash(([a, b]) => window.emberDashboard.selectSeconds(a, b), [FROM, TO]);
		await waitFlame();
		await sleep(300);
		const g = await dash(() => {
			const c = document.getElementById('flamegraph').getBoundingClientRect();
			const fr = window.emberDashboard.frames();
			const root = fr.find((f) => f.depth === 1);
			return { H: c.height, top: c.top, rootY: c.top + root.y, rootH: root.h, rootX: c.left + root.x + 4, depth: Math.max(...fr.map((f) => f.depth)), vh: window.innerHeight };
		});
		let png = await shot('range-root');
		const px = png.px(g.rootX, g.rootY + g.rootH / 2);
		ok(g.H > g.vh && g.rootY >= 0 && g.rootY + g.rootH <= g.vh && !(px[0] > 245 && px[1] > 245 && px[2] > 245),
			`a range pick of a graph taller than the window (${Math.round(g.H)} px, depth ${g.depth}) keeps its root in view, drawn`, JSON.stringify({ g, px }));

		// --- the top table: /api/v1/top of the same range, sorted by self, then by total
		await waitTop();
		const want = await api(`/api/v1/top?${R}&limit=100000`);
		let t = await dash(() => window.emberDashboard.top());
		const bySelf = [...want.top].sort((x, y) => y.self - x.self || y.total - x.total || (x.function < y.function ? -1 : 1));
		ok(t.sort === 'self' && t.rows.length === want.top.length &&
			t.rows.every((r, i) => r.function === bySelf[i].function && r.self === bySelf[i].self && r.total === bySelf[i].total),
			`top table: the ${want.top.length} functions of /api/v1/top, sorted by self`, JSON.stringify(t.rows.slice(0, 3)));
		await page.evaluate(() => document.getElementById('top-panel').scrollIntoView({ block: 'start' }));
		await shot('top-self');
		await page.click('#top-table th[data-sort="total"]');
		t = await dash(() => window.emberDashboard.top());
		const totals = t.rows.map((r) => r.total);
		ok(t.sort === 'total' && totals.every((v, i) => !i || totals[i - 1] >= v) && t.rows[0].function === '_start' && t.rows[1].function === 'main',
			'top table: click "total" sorts by total (_start, then main, first)', JSON.stringify(t.rows.slice(0, 3)));
		await shot('top-total');

		// --- the search: the rows filtered, and the share of samples through matches
		await dash(() => window.emberDashboard.search('^leaf_'));
		t = await dash(() => window.emberDashboard.top());
		const folded = await apiText(`/api/v1/folded?${R}`);
		const all = sum(folded), through = sum(folded.split('\n').filter((l) => /;leaf_[ab] /.test(l)).join('\n'));
		const m = await page.textContent('#fg-matched');
		ok(t.rows.length === 2 && t.rows.every((r) => /^leaf_/.test(r.function)), 'the search filters the top table', JSON.stringify(t.rows));
		ok(m === `${(100 * through / all).toFixed(1)} % of samples through matches (${through} of ${all})`, 'the search says the share of samples through matches', m);
		await dash(() => window.emberDashboard.search(''));

		// --- a row opens the sandwich of a function called from two places
		await page.click('#top-table tbody tr[data-function="shared_fn"]');
		await page.waitForFunction(() => document.getElementById('sandwich-panel').dataset.function === 'shared_fn', null, { timeout: 10000 });
		const sw = await dash(() => ({ ...document.getElementById('sandwich-panel').dataset, callers: document.getElementById('sw-callers').dataset.total,
			callees: document.getElementById('sw-callees').dataset.total, status: document.getElementById('sw-status').textContent }));
		const swApi = await api(`/api/v1/sandwich?${R}&function=%5Eshared_fn%24`);
		const shared = want.top.find((r) => r.function === 'shared_fn');
		const callerNames = new Set(swApi.callers.split('\n').filter(Boolean).map((l) => l.split(';')[1]));
		ok(Number(sw.callers) === shared.total && Number(sw.callees) === shared.total && swApi.total === shared.total &&
			callerNames.has('caller_one') && callerNames.has('caller_two'),
			`sandwich of shared_fn: callers (from caller_one and caller_two) and callees each add up to its total ${shared.total}`, JSON.stringify({ sw, callerNames: [...callerNames] }));
		await page.evaluate(() => document.getElementById('sandwich-panel').scrollIntoView({ block: 'start' }));
		png = await shot('sandwich');
		const cb = await dash(() => document.getElementById('sw-callers').getBoundingClientRect().toJSON());
		const bot = png.px(cb.left + cb.width / 2, cb.bottom - 8); // shared_fn, the callers' root
		ok(!(bot[0] > 245 && bot[1] > 245 && bot[2] > 245), 'the sandwich is drawn (the function at the bottom of its callers)', bot.join(','));
		// the same as one SVG (/api/v1/sandwich.svg): callers' flame graph above, callees' icicle below
		{
			const p2 = await browser.newPage({ viewport: { width: 1200, height: 500 } });
			await p2.goto(`${URL_}/api/v1/sandwich.svg?${R}&function=%5Eshared_fn%24&width=1200`);
			await p2.waitForTimeout(500);
			const file = path.join(outDir, 'honest-sandwich-svg.png');
			const img = decodePng(await p2.screenshot({ path: file, timeout: 60000 }));
			const boxes = await p2.evaluate(() => [...document.querySelectorAll('image')].map((i) => ({ id: i.id, ...i.getBoundingClientRect().toJSON() })));
			// a frame's fill is warm (red > blue) where the background is pale; one row above the
			// callers' bottom (all) is shared_fn, one below the callees' top (all) too
			const warm = (x, y) => { const c = img.px(x, y); return c[0] > 150 && c[2] < 120; };
			const up = boxes.find((b) => b.id === 'callers'), down = boxes.find((b) => b.id === 'callees');
			ok(up && down && up.y === 0 && down.y >= up.height - 1 && warm(600, Math.floor(up.height - 30 - 24)) && warm(600, Math.floor(down.y + 30 + 24)),
				'sandwich.svg: the callers\' graph above the callees\' icicle, both drawn', JSON.stringify(boxes));
			await p2.close();
		}
		// clicking a frame of the flame graph opens its sandwich too
		const fr = await dash(() => { const c = document.getElementById('flamegraph').getBoundingClientRect();
			const f = window.emberDashboard.frames().find((x) => x.name === 'caller_two'); return f && { x: c.left + f.x + f.w / 2, y: c.top + f.y + f.h / 2 }; });
		await page.evaluate((y) => window.scrollTo(0, y - 300), fr.y + (await page.evaluate(() => window.scrollY)));
		const fr2 = await dash(() => { const c = document.getElementById('flamegraph').getBoundingClientRect();
			const f = window.emberDashboard.frames().find((x) => x.name === 'caller_two'); return { x: c.left + f.x + f.w / 2, y: c.top + f.y + f.h / 2 }; });
		await page.mouse.click(fr2.x, fr2.y);
		const opened = await page.waitForFunction(() => document.getElementById('sandwich-panel').dataset.function === 'caller_two', null, { timeout: 10000 }).then(() => true).catch(() => false);
		ok(opened, 'a click on a frame of the flame graph opens its sandwich');
		await page.click('#fg-reset');

		// --- focus and ignore: the graph is /api/v1/folded?focus= / ignore= of the range
		for (const [box, re, name] of [['#fg-focus', 'caller_one', 'focus'], ['#fg-ignore', 'tower_', 'ignore']]) {
			const prev = await status();
			await page.fill(box, re);
			await page.dispatchEvent(box, 'change');
			await waitFlame(prev);
			const n = Number((await status()).split(' ')[0]);
			const w = sum(await apiText(`/api/v1/folded?${R}&${name}=${encodeURIComponent(re)}`));
			const names = (await dash(() => window.emberDashboard.frames())).map((f) => f.name);
			ok(n === w && n < all && (name === 'focus' ? !names.includes('caller_two') : !names.some((x) => x.startsWith('tower_'))),
				`${name}=${re}: the graph is the API's (${n} of ${all} samples)`, `${n} vs ${w}`);
			await page.locator('#flame').scrollIntoViewIfNeeded();
			await shot(name);
			const p2 = await status();
			await page.fill(box, '');
			await page.dispatchEvent(box, 'change');
			await waitFlame(p2);
		}

		// --- off-CPU without [offcpu]: said next to the selector, and where the graph would be
		const note = await dash(() => ({ hidden: document.getElementById('f-event-note').hidden, text: document.getElementById('f-event-note').textContent,
			opts: [...document.getElementById('f-event').options].map((o) => o.value + ':' + (o.disabled ? 'off' : 'on')).join(' ') }));
		ok(!note.hidden && note.text.includes('[offcpu] enabled = yes in emberd.conf') && note.opts.startsWith('cpu:on offcpu:off wall:off wakeup:off chain:off'),
			'without [offcpu]: the note beside the selector, the options disabled', JSON.stringify(note));
		await dash(() => { const s = document.getElementById('f-event'); s.value = 'offcpu'; s.dispatchEvent(new Event('change')); });
		await page.waitForFunction(() => /offcpu\] enabled/.test(document.getElementById('flamegraph').dataset.message || ''), null, { timeout: 10000 });
		const msg = await dash(() => document.getElementById('flamegraph').dataset.message);
		ok(/^off-CPU events need live sampling with \[offcpu\] enabled = yes/.test(msg), 'off-CPU asked anyway: the 409\'s reason where the graph would be', msg);
		await page.evaluate(() => window.scrollTo(0, 0));
		await shot('offcpu-off');
	} else {
		// --- live: the history in the header
		await sleep(2500); // two polls of the stats
		const h = await dash(() => ({ evicted: Number(document.getElementById('st-evicted').textContent), history: document.getElementById('st-history').textContent,
			mem: document.getElementById('st-retention').parentElement.textContent, title: document.getElementById('st-evicted-wrap').title }));
		ok(h.evicted > 0 && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(\d/.test(h.history) && /memory used/.test(h.mem) && /for age/.test(h.title),
			'the header: samples evicted, the oldest sample\'s time, memory (not retention) used', JSON.stringify(h));
		// a range 30 s back: evicted, and the page says so
		const now = Date.now() / 1000;
		await dash(([a, b]) => window.emberDashboard.selectSeconds(a, b), [(now - 40).toFixed(3), (now - 30).toFixed(3)]);
		await page.waitForFunction(() => /history/.test(document.getElementById('flamegraph').dataset.message || ''), null, { timeout: 10000 }).catch(() => {});
		const msg = await dash(() => document.getElementById('flamegraph').dataset.message || '');
		ok(/^the range ends before the history: the oldest sample held is from .*; [1-9]\d* samples evicted since start/.test(msg) && !/No samples in this range/.test(msg),
			'an evicted range: the page says how far back the history reaches', msg);
		await page.locator('#flame').scrollIntoViewIfNeeded();
		await shot('evicted');
		// a filtered rate is labelled beside the host's
		await page.fill('#f-comm', '^burn$');
		await page.dispatchEvent('#f-comm', 'change');
		await page.waitForFunction(() => !document.getElementById('st-frate-wrap').hidden &&
			Number(document.getElementById('st-rate').textContent) > 0 && Number(document.getElementById('st-frate').textContent) > 0, null, { timeout: 20000 }).catch(() => {});
		const r = await dash(() => ({ host: document.getElementById('st-rate').parentElement.textContent, f: document.getElementById('st-frate-wrap').textContent,
			hidden: document.getElementById('st-frate-wrap').hidden }));
		ok(!r.hidden && /^\d+ samples\/s \(host\)/.test(r.host.trim()) && /^\d+ samples\/s \(filtered: comm=/.test(r.f.trim()) && parseInt(r.host.trim()) > 0,
			'a filtered rate is labelled as such beside the host\'s, both figures shown', JSON.stringify(r));
		await page.evaluate(() => window.scrollTo(0, 0));
		await shot('header');
		await page.fill('#f-comm', '');
		await page.dispatchEvent('#f-comm', 'change');
		// a capture: its listed count is its graph's, idle shown the same way
		await page.fill('#cap-seconds', '1');
		await page.click('#capture-start');
		// done past its end once the store holds a sample after it (at most 10 s past its end)
		await page.waitForFunction(() => /done: /.test(document.getElementById('capture-status').textContent), null, { timeout: 30000 });
		await waitFlame();
		const c = await dash(() => ({ list: document.getElementById('capture-list').textContent, status: document.getElementById('fg-status').textContent }));
		const listed = Number((/, (\d+) samples/.exec(c.list) || [])[1]);
		const graph = Number(c.status.split(' ')[0]);
		ok(listed > 0 && listed === graph && /idle, hidden: tick idle|samples(?! \()/.test(c.list), `a capture: listed ${listed} samples, its graph ${graph}`, JSON.stringify(c));
		await shot('capture');
		// the API behind it: the listed samples less the idle ones are its graph's; all with idle=1
		const cl = (await api('/api/v1/captures')).captures.find((x) => x.state === 'done');
		const g0 = sum(await apiText(cl.urls.folded)), g1 = sum(await apiText(cl.urls.folded + '?idle=1'));
		ok(cl.samples === g1 && cl.samples - cl.idle_samples === g0, `a capture's samples (${cl.samples}) and idle_samples (${cl.idle_samples}) are its graph's with and without idle`, `${g0} ${g1}`);
	}
} catch (e) {
	// where it stood: the statuses the waits read
	const where = await page.evaluate(() => ['fg-status', 'capture-status'].map((id) => id + ': ' + (document.getElementById(id) || {}).textContent).join('; ')).catch(() => '');
	ok(false, 'the page answers', String(e && e.stack || e) + '\n' + where);
}
ok(errors.length === 0, 'no page errors', errors.join('; '));
await browser.close();
finish();
