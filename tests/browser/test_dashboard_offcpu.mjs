// SPDX-License-Identifier: MIT
// The dashboard's event selector; see test_dashboard_offcpu.sh. PART=on: a live emberd
// with [offcpu] enabled, the blocker's window [FROM, TO) and its blocked time WANT (ms); PART=off:
// a daemon without it.
import path from 'path';
import { launch, ok, finish, outDir } from './lib.mjs';

const URL_ = process.env.URL, PART = process.env.PART;
const browser = await launch();
const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));

const status = () => page.textContent('#fg-status');
const frames = () => page.evaluate(() => window.emberDashboard.frames().map((f) => f.name));
// the flame graph of the selection, after a change: its status line names the unit
async function waitFlame(unit) {
	await page.waitForFunction((u) => (document.getElementById('fg-status').textContent || '').includes(` ${u}, `),
		unit, { timeout: 15000 });
}

try {
	await page.goto(URL_ + '/', { waitUntil: 'load' });
	await page.waitForFunction(() => window.emberDashboard && window.emberDashboard.state.hm, null, { timeout: 15000 });
	const opts = await page.evaluate(() => Array.from(document.getElementById('f-event').options)
		.map((o) => `${o.value}:${o.disabled ? 'off' : 'on'}`).join(' '));
	const MEMIO = ['pagefault', 'vmgrow', 'blockio', 'blockio-latency', 'malloc'];
	const memioOpts = (state) => MEMIO.map((k) => `${k}:${state}`).join(' ') + ' cycles:off instructions:off';
	if (PART === 'off') {
		ok(opts === 'cpu:on offcpu:off wall:off wakeup:off chain:off ' + memioOpts('off'),
			'the off-CPU and memory and I/O events are disabled', opts);
	} else if (PART === 'memio') {
		// [pagefault] on: the memory and I/O kinds offered; the page faults' flame graph
		ok(opts === 'cpu:on offcpu:off wall:off wakeup:off chain:off ' + memioOpts('on'),
			'the event selector offers the memory and I/O kinds', opts);
		const want = Number(process.env.WANT);
		await page.fill('#f-comm', '^memio$');
		await page.evaluate(([a, b]) => window.emberDashboard.selectSeconds(a, b), [process.env.FROM, process.env.TO]);
		await waitFlame('samples');
		const loads = await page.evaluate(() => window.emberDashboard.hmLoads());
		await page.selectOption('#f-event', 'pagefault');
		await page.waitForFunction((n) => window.emberDashboard.hmLoads() > n, loads, { timeout: 15000 });
		await waitFlame('quanta');
		const st = await status();
		const n = Number(st.split(' ')[0]);
		ok(want > 100 && n === want, 'page-fault flame graph: the workload\'s quanta', `${st}; API ${want}`);
		const names = await frames();
		ok(names.includes('[page fault]') && names.includes('fault_a'), 'page-fault flame graph: its root frame and functions',
			names.slice(0, 8).join(' '));
		await page.screenshot({ path: path.join(outDir, 'pagefault-dashboard.png') });
	} else {
		ok(opts === 'cpu:on offcpu:on wall:on wakeup:on chain:on ' + memioOpts('off'),
			'the event selector offers every off-CPU kind', opts);
		const want = Number(process.env.WANT);
		await page.fill('#f-comm', '^blocker$');
		await page.evaluate(([a, b]) => window.emberDashboard.selectSeconds(a, b), [process.env.FROM, process.env.TO]);
		await waitFlame('samples');
		const loads = await page.evaluate(() => window.emberDashboard.hmLoads());
		await page.selectOption('#f-event', 'offcpu');
		await page.waitForFunction((n) => window.emberDashboard.hmLoads() > n, loads, { timeout: 15000 });
		await waitFlame('ms');
		const st = await status();
		const n = Number(st.split(' ')[0]);
		ok(want > 2000 && n === want, 'off-CPU flame graph: the blocker\'s blocked time in ms', `${st}; API ${want} ms`);
		const names = await frames();
		ok(names.includes('[off-cpu S interruptible]'), 'off-CPU flame graph: the state frame', names.slice(0, 6).join(' '));
		const info = await page.textContent('#hm-info');
		ok(/ ms, max /.test(info), 'heat map counts ms', info);
		const legend = await page.textContent('#hm-legend-label');
		ok(legend.startsWith('ms per cell'), 'heat map legend in ms', legend);
		await page.screenshot({ path: path.join(outDir, 'offcpu-dashboard.png') });
		// a capture of off-CPU events, from the page
		await page.fill('#cap-seconds', '1');
		const resp = page.waitForResponse((r) => r.url().endsWith('/api/v1/captures') && r.request().method() === 'POST');
		await page.click('#capture-start');
		const body = await (await resp).json();
		ok(body.event === 'offcpu', 'a capture started with off-CPU selected records off-CPU events', JSON.stringify(body).slice(0, 120));
		// back to on-CPU samples
		await page.selectOption('#f-event', 'cpu');
		await waitFlame('samples');
		const back = await frames();
		ok(!back.some((f) => f.startsWith('[off-cpu')), 'cpu again: no off-CPU frame', back.slice(0, 6).join(' '));
	}
} catch (e) {
	ok(false, 'the page answers', String(e));
}
ok(errors.length === 0, 'no page errors', errors.join('; '));
await browser.close();
finish();
