// SPDX-License-Identifier: MIT
// speedscope's own importer (the npm package's bundled page) opens files written by
// `ember convert --to speedscope`: no import error, the sandwich table lists every frame once and
// its Self column sums to the folded total; the time-order view renders. Cases come from
// $CASES (JSON: [{js, name, total, frames}]), prepared by test_speedscope.sh.
import { createRequire } from 'module';
import fs from 'fs';
import path from 'path';
import { launch, ok, finish, outDir } from './lib.mjs';

const require = createRequire(path.join(process.env.NODE_PATH || '.', 'noop.js'));
const html = path.join(path.dirname(require.resolve('speedscope/package.json')),
	'dist/release/index.html');
const cases = JSON.parse(fs.readFileSync(process.env.CASES, 'utf8'));

const browser = await launch();
for (const c of cases) {
	// tall enough that the (virtualized) table renders every row
	const page = await browser.newPage({ viewport: { width: 1200, height: 30 * c.frames + 400 } });
	const errors = [];
	let imported = false;
	page.on('pageerror', e => errors.push(e.message));
	page.on('console', m => {
		if (/^import:/.test(m.text())) imported = true;
		if (m.type() === 'error') errors.push(m.text());
	});
	// what `speedscope FILE` does: the page loads a script that hands it the file
	await page.goto(`file://${html}#localProfilePath=${c.js}&view=sandwich`);
	try {
		await page.waitForFunction(n => document.querySelectorAll('tr').length >= n + 1,
			c.frames, { timeout: 20000 });
	} catch (e) {
		errors.push(`table did not fill: ${e.message.split('\n')[0]}`);
	}
	const rows = await page.evaluate(() => [...document.querySelectorAll('tr')].slice(1)
		.map(tr => [...tr.querySelectorAll('td')].map(td => td.textContent)));
	const self = rows.reduce((s, r) => s + Number((r[1] || '').replace(/\s*\(.*$/, '').replace(/,/g, '')), 0);
	const names = new Set(rows.map(r => r[2]));
	ok(imported && errors.length === 0, `${c.name}: speedscope imports it`, errors.join('; '));
	ok(rows.length === c.frames && names.size === c.frames,
		`${c.name}: every frame listed once`, `${rows.length} rows, ${names.size} names, want ${c.frames}`);
	ok(self === c.total, `${c.name}: total ${c.total}`, `speedscope shows ${self}`);
	const title = await page.evaluate(() => document.body.innerText);
	ok(title.includes(c.name), `${c.name}: profile name shown`);
	// the time-order view draws the samples in file order
	await page.setViewportSize({ width: 1200, height: 700 });
	await page.getByText('Time Order', { exact: false }).first().click();
	await page.waitForTimeout(500);
	const body = await page.evaluate(() => document.body.innerText);
	const canvas = await page.evaluate(() => document.querySelectorAll('canvas').length);
	ok(!/Something went wrong/i.test(body) && errors.length === 0 && canvas > 0 &&
		!body.includes('Symbol Name'), `${c.name}: time order view`, errors.join('; '));
	await page.screenshot({ path: path.join(outDir, `speedscope-${c.name}.png`) });
	await page.close();
}
await browser.close();
finish();
