// SPDX-License-Identifier: MIT
// The dashboard's differential view against a real emberd in replay mode (URL): with
// range A and range B selected, the page states "X% elided" (the share computed from
// /api/v1/diff.folded, $ELIDED_PCT), the result of the Hotelling test over windows, and a click
// on the elided share draws the elided flame graph. Screenshots go to outDir.
import { launch, ok, finish, outDir } from './lib.mjs';
import path from 'path';

const URL_ = process.env.URL;
const [A0, A1, B0, B1] = process.env.RANGES.split(',');
const browser = await launch();
const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
try {
	await page.goto(URL_ + '/', { waitUntil: 'load' });
	await page.waitForFunction(() => window.emberDashboard && window.emberDashboard.state.hm, null, { timeout: 15000 });
	await page.evaluate(([a0, a1, b0, b1]) => {
		const d = window.emberDashboard;
		d.selectSeconds(a0, a1);
		d.state.compare = true;
		d.selectSeconds(b0, b1);
	}, [A0, A1, B0, B1]);
	await page.waitForSelector('#fg-elided', { timeout: 15000 });
	await page.waitForSelector('#fg-compare', { timeout: 15000 });
	const pct = await page.getAttribute('#fg-elided', 'data-pct');
	ok(pct === process.env.ELIDED_PCT, 'the differential view states the elided share', `${pct} vs ${process.env.ELIDED_PCT}`);
	const cmp = await page.textContent('#fg-compare');
	ok(/Hotelling T² over \d+ s windows \(\d+ vs \d+, \d+ stacks\)/.test(cmp), 'the Hotelling test result is shown', cmp);
	const nsig = await page.evaluate(() => document.querySelectorAll('#fg-significant li').length);
	ok(String(nsig) === process.env.NSIG, 'the significant stacks are listed', `${nsig} vs ${process.env.NSIG}`);
	await page.screenshot({ path: path.join(outDir, 'dashboard-diff-info.png'), fullPage: true });
	// the frame under the cursor outlined, and its details at the cursor, in the differential view
	// and in the elided one
	const hoverCheck = async (view) => {
		const f = await page.evaluate(() => {
			const c = document.getElementById('flamegraph'), r = c.getBoundingClientRect();
			const fr = window.emberDashboard.frames().filter((x) => x.depth > 0 && x.w > 30).sort((a, b) => b.depth - a.depth)[0];
			return fr && { name: fr.name, x: r.left + fr.x + fr.w / 2, y: r.top + fr.y + fr.h / 2 };
		});
		if (f) {
			await page.evaluate((y) => window.scrollBy(0, y - 400), f.y);
			const g = await page.evaluate((name) => {
				const c = document.getElementById('flamegraph'), r = c.getBoundingClientRect();
				const fr = window.emberDashboard.frames().find((x) => x.name === name && x.w > 30);
				return { x: r.left + fr.x + fr.w / 2, y: r.top + fr.y + fr.h / 2 };
			}, f.name);
			await page.mouse.move(g.x + 1, g.y);
			await page.mouse.move(g.x, g.y);
			const h = await page.evaluate(() => {
				const o = document.getElementById('fg-overlay'), t = document.getElementById('fg-tip');
				return { hover: o.dataset.hover, ow: o.width, tip: t.hidden ? '' : t.textContent, box: t.getBoundingClientRect().toJSON() };
			});
			ok(h.hover === f.name && h.ow > 1 && h.tip.startsWith(f.name.replace(/_\[[a-z]+\]$/, '')) &&
			   Math.abs(h.box.left - g.x) < 40 && Math.abs(h.box.top - g.y) < 40,
			   `${view}: the frame under the cursor is outlined, its details at the cursor`, JSON.stringify({ f, h }));
			await page.mouse.move(2, 2);
		} else {
			ok(false, `${view}: a frame to hover`);
		}
	};
	await hoverCheck('differential view');
	await page.click('#fg-elided');
	await page.waitForFunction(() => document.getElementById('fg-title').textContent.startsWith('Elided'), null, { timeout: 10000 });
	const samples = await page.evaluate(() => document.getElementById('flamegraph').dataset.samples);
	ok(samples === process.env.ELIDED_SAMPLES, 'a click draws the elided flame graph', `${samples} vs ${process.env.ELIDED_SAMPLES}`);
	await hoverCheck('elided view');
	const href = await page.getAttribute('#download-svg', 'href');
	ok(href && href.includes('elided=1'), 'its SVG download is diff.svg?elided=1', href);
} catch (e) {
	errors.push(String(e));
}
ok(errors.length === 0, 'no page errors', errors.join('; '));
await browser.close();
finish();
