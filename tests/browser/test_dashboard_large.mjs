// SPDX-License-Identifier: MIT
// 100k unique stacks in the dashboard; see test_dashboard_large.sh.
import { launch, ok, finish, outDir } from './lib.mjs';
import fs from 'fs';
import path from 'path';

const URL_ = process.env.URL;
const expect = JSON.parse(fs.readFileSync(process.env.EXPECT, 'utf8'));
const browser = await launch();
const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
const timing = (what, ms) => console.log(`# timing: ${what}: ${ms.toFixed(0)} ms`);
try {
	await page.goto(URL_ + '/', { waitUntil: 'load' });
	await page.waitForFunction(() => window.emberDashboard && window.emberDashboard.state.hm, null, { timeout: 30000 });
	let t0 = Date.now();
	await page.evaluate(() => window.emberDashboard.selectSeconds('1699999999', '1700000011'));
	await page.waitForFunction((n) => Number(document.getElementById('flamegraph').dataset.samples || 0) === n,
		expect.total, { timeout: 60000 });
	timing('fetch, parse and draw 100k stacks', Date.now() - t0);
	const drawn = await page.evaluate(() => Number(document.getElementById('flamegraph').dataset.frames));
	ok(drawn > 10 && drawn < 20000, 'only the visible frames are drawn (pruned)', drawn);

	const searchMs = await page.evaluate((re) => window.emberDashboard.search(re), expect.regex);
	timing('search over every frame + redraw', searchMs);
	const pct = await page.evaluate(() => Number(document.getElementById('fg-matched').dataset.pct));
	ok(Math.abs(pct - expect.pct) < 0.001, 'Matched % is exact over all 100k stacks', `${pct} vs ${expect.pct}`);
	// zoom into the widest frame of depth 2 and back, timed in the page
	const z = await page.evaluate(() => {
		const d = window.emberDashboard;
		const f = d.frames().filter((x) => x.name.startsWith('lvl1_')).sort((a, b) => b.w - a.w)[0];
		const c = document.getElementById('flamegraph');
		const r = c.getBoundingClientRect();
		const t = performance.now();
		c.dispatchEvent(new MouseEvent('click', { clientX: r.left + f.x + f.w / 2, clientY: r.top + f.y + 8, bubbles: true }));
		const zoomMs = performance.now() - t;
		const g = d.frames().find((x) => x.name === f.name);
		const t2 = performance.now();
		document.getElementById('fg-reset').click();
		return { zoomMs, resetMs: performance.now() - t2, w: g.w, W: c.clientWidth };
	});
	timing('zoom redraw', z.zoomMs);
	timing('reset redraw', z.resetMs);
	ok(Math.abs(z.w - z.W) < 2, 'zoom works on the large profile');
	await page.screenshot({ path: path.join(outDir, 'dashboard-100k.png') });
	ok(errors.length === 0, 'no errors in the page', errors.join(' | '));
} catch (e) {
	ok(false, 'large dashboard test ran to the end', String(e).split('\n')[0]);
}
await browser.close();
finish();
