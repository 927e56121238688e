// SPDX-License-Identifier: MIT
// The dashboard behind a bearer token (URL, TOKEN): the page loads, asks for the token on the
// API's 401, refuses a wrong one, then with the right one draws the heat map and the flame graph
// of a selection (SAMPLES samples, from the API), downloads the SVG through the token, and its
// curl command names $EMBER_TOKEN instead of the token.
import { launch, ok, finish, outDir } from './lib.mjs';
import fs from 'fs';
import path from 'path';

const URL_ = process.env.URL, TOKEN = process.env.TOKEN;
const browser = await launch();
const ctx = await browser.newContext({ viewport: { width: 1400, height: 1000 }, acceptDownloads: true });
const page = await ctx.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('console', (m) => {
	// the 401s before the token is given are expected; anything else is an error
	if (m.type() === 'error' && !/401|Unauthorized/i.test(m.text())) errors.push(m.text());
});
try {
	const r = await page.goto(URL_ + '/', { waitUntil: 'load' });
	ok(r.status() === 200, 'the page loads without the token', r.status());
	await page.waitForSelector('#auth:not([hidden])', { timeout: 10000 });
	ok(true, 'the page asks for the token after the API says 401');
	ok(await page.evaluate(() => !window.emberDashboard.state.hm), 'nothing is drawn without it');

	await page.fill('#auth-token', TOKEN + 'x');
	await Promise.all([page.waitForEvent('load'), page.click('#auth button[type=submit]')]);
	await page.waitForSelector('#auth:not([hidden])', { timeout: 10000 });
	const msg = await page.textContent('#auth-msg');
	ok(/refused/.test(msg), 'a wrong token is refused and asked again', msg);

	await page.fill('#auth-token', TOKEN);
	await Promise.all([page.waitForEvent('load'), page.click('#auth button[type=submit]')]);
	await page.waitForFunction(() => window.emberDashboard && window.emberDashboard.state.hm, null, { timeout: 15000 });
	ok(await page.evaluate(() => document.getElementById('auth').hidden), 'with the right token the prompt stays hidden');
	ok(true, 'the heat map loads with the token');
	await page.evaluate(() => window.emberDashboard.selectSeconds('7628263', '7628268'));
	await page.waitForFunction((n) => document.getElementById('flamegraph').dataset.samples === n,
		process.env.SAMPLES, { timeout: 15000 });
	ok(true, `a selection draws its flame graph (${process.env.SAMPLES} samples)`);
	const curl = await page.textContent('#curl-cmd');
	ok(curl.includes('Authorization: Bearer $EMBER_TOKEN') && !curl.includes(TOKEN),
		'the curl command reads the token from $EMBER_TOKEN, not the clipboard', curl);
	const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 15000 }), page.click('#download-svg')]);
	const file = path.join(process.env.DOWNLOAD_DIR, 'dl.svg');
	await dl.saveAs(file);
	const svg = fs.readFileSync(file, 'utf8');
	ok(/<svg[\s>]/.test(svg) && svg.includes('</svg>'), 'the SVG download goes through the token', `${svg.length} bytes: ${svg.slice(0, 60)}`);
	await page.screenshot({ path: path.join(outDir, 'dashboard-token.png'), fullPage: true });
} catch (e) {
	errors.push(String(e));
}
ok(errors.length === 0, 'no page errors', errors.join('; '));
await browser.close();
finish();
