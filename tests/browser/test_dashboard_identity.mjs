// SPDX-License-Identifier: MIT
// The dashboard's workload fields: container=, service= and group_by= in the page's
// requests and in what it draws; see test_dashboard_identity.sh.
import path from 'path';
import { launch, ok, finish, outDir } from './lib.mjs';

const URL_ = process.env.URL, ID = process.env.ID, SVC = process.env.SVC;
const browser = await launch();
const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
const errors = [], requests = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
page.on('request', (r) => requests.push(r.url()));

// the root's children as drawn (depth 1), and their widths' sum against the root's
const top = () => page.evaluate(() => {
	const fr = window.emberDashboard.frames();
	const root = fr.find((f) => f.depth === 0);
	return { names: [...new Set(fr.filter((f) => f.depth === 1).map((f) => f.name))], root: root && root.name };
});
// sets a field and waits for the flame graph it asks for to be the one drawn (under load the
// answer took longer than a fixed 1.5 s: the old graph was read)
async function setField(id, value) {
	await page.evaluate(([id, v]) => {
		const e = document.getElementById(id);
		e.value = v;
		e.dispatchEvent(new Event('change'));
	}, [id, value]);
	await page.waitForFunction(() => {
		const s = window.emberDashboard.state;
		return s.view && s.view.foldedUrl && s.drawn === s.view.foldedUrl;
	}, null, { timeout: 20000 });
}
const folded = async (q) => {
	const t = await (await fetch(URL_ + '/api/v1/folded?' + q)).text();
	return t.split('\n').filter(Boolean).reduce((n, l) => n + Number(l.split(' ').pop()), 0);
};
// the samples of the graph shown: its folded URL's, fetched again
const shown = async () => {
	const u = await page.evaluate(() => window.emberDashboard.state.view.foldedUrl);
	return { url: u, n: await folded(u.split('?')[1]) };
};

try {
	await page.goto(URL_ + '/', { waitUntil: 'load' });
	await page.waitForFunction(() => window.emberDashboard && window.emberDashboard.state.hm, null, { timeout: 15000 });
	// the last 3.5 s the store holds (not the clock's: under load its newest sample was more
	// than 4 s old, the range came out empty and its graph never had a frame)
	const newest = (await (await fetch(URL_ + '/api/v1/stats')).json()).store.newest;
	await page.evaluate(([a, b]) => window.emberDashboard.selectSeconds(a, b), [newest - 3.5, newest]);
	await page.waitForFunction(() => window.emberDashboard.frames().length > 1, null, { timeout: 10000 });
	const all = await top();
	ok(all.names.includes('burn') && all.names.includes(SVC), 'no filter: both burners in the graph', JSON.stringify(all));

	await setField('f-container', ID.slice(0, 12));
	const hmReq = requests.filter((u) => u.includes('/heatmap?')).pop() || '';
	ok(hmReq.includes('container=' + ID.slice(0, 12)), 'container: the heat map asks with container=', hmReq);
	let g = await top(), s = await shown();
	ok(s.url.includes('container=' + ID.slice(0, 12)), 'container: the flame graph asks with container=', s.url);
	ok(g.names.length === 1 && g.names[0] === 'burn', 'container: only the container\'s burner drawn', JSON.stringify(g));
	const want = await folded(`container=${ID}&from=${s.url.match(/from=([^&]+)/)[1]}&to=${s.url.match(/to=([^&]+)/)[1]}`);
	ok(s.n > 0 && s.n === want, `container: the graph's ${s.n} samples = the API's ${want} for the full id`);

	await setField('f-group', 'container');
	g = await top(); s = await shown();
	ok(s.url.includes('group_by=container') && g.names.length === 1 && g.names[0] === ID.slice(0, 12),
	   'group by container: the id above the root', JSON.stringify({ g, url: s.url }));
	await page.screenshot({ path: path.join(outDir, 'identity-group.png') });

	await setField('f-group', '');
	await setField('f-container', '');
	await setField('f-service', SVC);
	g = await top(); s = await shown();
	ok(s.url.includes('service=' + SVC) && g.names.length === 1 && g.names[0] === SVC,
	   'service: only the service\'s samples drawn', JSON.stringify({ g, url: s.url }));
	const hmReq2 = requests.filter((u) => u.includes('/heatmap?')).pop() || '';
	ok(hmReq2.includes('service=' + SVC) && !hmReq2.includes('container='), 'service: the heat map follows', hmReq2);
} catch (e) {
	ok(false, 'the test ran to the end', String(e).split('\n')[0]);
	await page.screenshot({ path: path.join(outDir, 'identity-failure.png'), fullPage: true }).catch(() => {});
}
ok(errors.length === 0, 'no errors in the page', errors.join(' | '));
await browser.close();
finish();
