// SPDX-License-Identifier: MIT
// `ember diff --both`: the page shows diff1 and diff2 side by side (each a whole interactive SVG
// in an iframe), and hovering a frame in one highlights the frame of the same stack path in the
// other; a frame whose path is absent from the other graph highlights nothing. $PAGE is the
// page, $EXPECT a JSON {hover: [name, ...]} prepared by test_diff_both.sh.
import fs from 'fs';
import path from 'path';
import { launch, ok, finish, outDir } from './lib.mjs';

const page_path = process.env.PAGE;
const expect = JSON.parse(fs.readFileSync(process.env.EXPECT, 'utf8'));
const browser = await launch();
const page = await browser.newPage({ viewport: { width: 1900, height: 900 } });
const errors = [];
page.on('pageerror', e => errors.push(e.message));
await page.goto(`file://${page_path}`);
try {
	await page.waitForFunction(() => document.body.getAttribute('data-ready') === '2', null,
		{ timeout: 15000 });
} catch (e) {
	errors.push('the two graphs did not load');
}
ok(errors.length === 0, 'the page loads both graphs without errors', errors.join('; '));
const frames = page.frames().filter(f => f !== page.mainFrame());
const byId = {};
for (const f of frames) byId[(await f.frameElement()).getAttribute ? await (await f.frameElement()).getAttribute('id') : ''] = f;
ok(byId.g1 && byId.g2, 'two graphs: diff1 and diff2');

// the frame whose title starts with `name (` in graph @f
async function frameBox(f, key) {
	const el = await f.$(`#frames > g[data-key="${key}"] rect`);
	return el;
}
async function linked(f) {
	return f.evaluate(() => [...document.querySelectorAll('#frames > g.linked')]
		.map(g => g.getAttribute('data-key')));
}
for (const h of expect.hover) {
	const [from, to] = h.from === 'g1' ? [byId.g1, byId.g2] : [byId.g2, byId.g1];
	const el = await frameBox(from, h.key);
	if (!el) {
		ok(false, `${h.from}: frame ${h.key} is drawn`);
		continue;
	}
	await el.hover({ force: true });
	await page.waitForTimeout(100);
	const lit = await linked(to);
	if (h.present)
		ok(lit.length === 1 && lit[0] === h.key, `hovering ${h.key} in ${h.from} highlights it in the other`, JSON.stringify(lit));
	else
		ok(lit.length === 0, `hovering ${h.key} in ${h.from} highlights nothing in the other (absent there)`, JSON.stringify(lit));
}
await page.screenshot({ path: path.join(outDir, 'diff-both.png'), fullPage: true });
// the stated elided share is on diff2
const info = await byId.g2.evaluate(() => document.documentElement.textContent);
ok(/% elided/.test(info), 'diff2 states the elided share');
await browser.close();
finish();
