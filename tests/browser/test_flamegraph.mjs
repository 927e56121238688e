// SPDX-License-Identifier: MIT
// ember flamegraph's interactive SVG in Chromium. $SVG, $ICICLE, $PRESET, $BIG are SVGs made by
// test_flamegraph.sh; $FRAMES is the frame table of $SVG (y x width samples name), from which the
// expected texts are computed here, independently of the page's script.
import fs from 'fs';
import path from 'path';
import { launch, ok, finish, outDir } from './lib.mjs';

const rows = fs.readFileSync(process.env.FRAMES, 'utf8').trim().split('\n').map(l => {
	const [y, x, w, samples, name] = l.split('\t');
	return { y: +y, x: +x, w: +w, samples: +samples, name, ys: y, xs: x };
});
const root = rows.find(r => r.name === 'all');
const total = root.samples;
const commas = n => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

// the widest frame one level above the root that is not full width, and its widest child
const level1 = rows.filter(r => r.y === root.y - 16 && r.w < root.w).sort((a, b) => b.w - a.w);
const target = level1[0];
const child = rows.filter(r => r.y === target.y - 16 && r.x >= target.x && r.x < target.x + target.w)
	.sort((a, b) => b.w - a.w)[0];

function matchedPct(re) {
	const m = rows.filter(r => r.name !== 'all' && re.test(r.name)).sort((a, b) => a.x - b.x || b.w - a.w);
	let sum = 0, end = -1;
	for (const r of m) {
		if (r.x >= end - 0.0001) {
			sum += r.w;
			end = r.x + r.w;
		}
	}
	const pct = 100 * sum / (root.w);
	return pct >= 99.995 ? '100' : pct.toFixed(1);
}

const browser = await launch();
const page = await browser.newPage({ viewport: { width: 1250, height: 1300 } });
const errors = [];
page.on('pageerror', e => errors.push(e.message));
let answer = null;
page.on('dialog', d => d.accept(answer === null ? '' : answer));

const url = p => `file://${p}`;
const rectOf = (x, y) => `#frames rect[fx="${x}"][y="${y}"], #frames rect[x="${x}"][y="${y}"]`;
const text = id => page.$eval(`#${id}`, e => e.textContent);
async function width(r) {
	return page.$eval(`#frames rect[y="${r.ys}"][${'fx'}="${r.xs}"]`, e => +e.getAttribute('width'))
		.catch(() => page.$eval(`#frames rect[y="${r.ys}"][x="${r.xs}"]`, e => +e.getAttribute('width')));
}

await page.goto(url(process.env.SVG));
ok((await text('title')) === 'browser test', 'the graph loads with its title');

// hover: the details line
await page.hover(`#frames rect[x="${target.xs}"][y="${target.ys}"]`, { force: true });
const pct = (100 * target.samples / total).toFixed(2);
const want = `Function: ${target.name} (${commas(target.samples)} samples, ${pct}%)`;
const details = await text('details');
ok(details === want, 'hover shows the details line', `${details} != ${want}`);
await page.screenshot({ path: path.join(outDir, 'flamegraph-hover.png') });
await page.mouse.move(1, 1);
ok((await text('details')) === ' ', 'moving away clears the details line');

// click: zoom horizontally into the frame
const childBefore = await width(child);
await page.click(`#frames rect[x="${target.xs}"][y="${target.ys}"]`, { force: true });
const tw = await page.$eval(`#frames rect[fx="${target.xs}"][y="${target.ys}"]`, e => +e.getAttribute('width'));
ok(Math.abs(tw - root.w) < 0.2, 'the clicked frame fills the width', `${tw}`);
const childAfter = await width(child);
const ratio = root.w / target.w;
ok(Math.abs(childAfter - childBefore * ratio) < 1, 'its child is scaled by the same ratio',
	`${childBefore} -> ${childAfter}, ratio ${ratio}`);
ok(await page.$eval(`#frames rect[fx="${root.xs}"][y="${root.ys}"]`, e => e.parentNode.classList.contains('parent')),
	'the ancestor is drawn faded');
const hidden = await page.$$eval('#frames > g.hide', gs => gs.length);
ok(hidden > 0, 'frames outside the zoomed one are hidden', `${hidden}`);
ok(!(await page.$eval('#unzoom', e => e.classList.contains('hide'))), 'Reset Zoom is shown');
const q = new URL(page.url()).searchParams;
ok(q.get('x') === target.xs && q.get('y') === target.ys, 'zoom state is in the URL (x=, y=)', page.url());
await page.screenshot({ path: path.join(outDir, 'flamegraph-zoom.png') });

// clicking another frame while zoomed re-zooms
await page.click(`#frames rect[fx="${child.xs}"][y="${child.ys}"]`, { force: true });
const cw = await page.$eval(`#frames rect[fx="${child.xs}"][y="${child.ys}"]`, e => +e.getAttribute('width'));
ok(Math.abs(cw - root.w) < 0.2, 'clicking a frame while zoomed re-zooms into it', `${cw}`);

// Reset Zoom
await page.click('#unzoom');
ok(Math.abs((await width(child)) - childBefore) < 0.05, 'Reset Zoom restores the widths');
ok(!new URL(page.url()).searchParams.has('x'), 'Reset Zoom clears the URL state');

// search: button prompt, magenta matches, Matched %
answer = '^ext4_';
await page.click('#search');
const wantPct = matchedPct(/^ext4_/);
ok((await text('matched')) === `Matched: ${wantPct}%`, 'search shows Matched % (nested matches counted once)',
	`${await text('matched')} vs ${wantPct}`);
const magenta = await page.$$eval('#frames rect[fill="rgb(230,0,230)"]', rs => rs.length);
const nmatch = rows.filter(r => /^ext4_/.test(r.name)).length;
ok(magenta === nmatch, 'matching frames are magenta', `${magenta} vs ${nmatch}`);
ok(new URL(page.url()).searchParams.get('s') === '^ext4_', 'the search is in the URL (s=)');
await page.screenshot({ path: path.join(outDir, 'flamegraph-search.png') });
await page.click('#search'); // Reset Search
ok(await page.$eval('#matched', e => e.classList.contains('hide')), 'Reset Search hides Matched');

// Ctrl-F prompts; Ctrl-I toggles case-insensitivity
answer = '^EXT4_';
await page.keyboard.press('Control+f');
ok((await text('matched')) === 'Matched: 0.0%', 'Ctrl-F searches, case-sensitive by default', await text('matched'));
await page.keyboard.press('Control+i');
ok((await text('matched')) === `Matched: ${wantPct}%`, 'Ctrl-I makes the search case-insensitive', await text('matched'));

// a link reproduces the view
await page.goto(url(process.env.SVG) + `?s=${encodeURIComponent('^ext4_')}&x=${target.xs}&y=${target.ys}`);
ok((await text('matched')) === `Matched: ${wantPct}%`, 'URL s= restores the search');
const tw2 = await page.$eval(`#frames rect[fx="${target.xs}"][y="${target.ys}"]`, e => +e.getAttribute('width'))
	.catch(() => -1);
ok(Math.abs(tw2 - root.w) < 0.2, 'URL x=, y= restore the zoom', `${tw2}`);

// --search pre-highlights
await page.goto(url(process.env.PRESET));
ok((await text('matched')) === `Matched: ${wantPct}%`, '--search highlights when the graph opens');

// icicle: the root is on top, zoom fades it
await page.goto(url(process.env.ICICLE));
const iroot = await page.$eval('#frames > g:first-child rect', e => +e.getAttribute('y'));
const others = await page.$$eval('#frames rect', rs => rs.map(r => +r.getAttribute('y')));
ok(others.every(y => y >= iroot), 'icicle graph: the root is at the top');
const icicleTarget = await page.$$eval('#frames rect', rs => {
	const y0 = Math.min(...rs.map(r => +r.getAttribute('y')));
	const l1 = rs.filter(r => +r.getAttribute('y') === y0 + 16).sort((a, b) => b.getAttribute('width') - a.getAttribute('width'));
	return { x: l1[0].getAttribute('x'), y: l1[0].getAttribute('y') };
});
await page.click(`#frames rect[x="${icicleTarget.x}"][y="${icicleTarget.y}"]`, { force: true });
ok(await page.$eval('#frames > g:first-child', g => g.classList.contains('parent')), 'icicle zoom fades the root above');
await page.screenshot({ path: path.join(outDir, 'flamegraph-icicle-zoom.png') });

// 100k unique stacks open
await page.goto(url(process.env.BIG));
const nbig = await page.$$eval('#frames > g', gs => gs.length);
ok(nbig > 1000, 'a graph of 100k unique stacks opens', `${nbig} frames`);
const bigTitle = await page.$eval('#frames > g:nth-child(2) title', t => t.textContent);
await page.hover('#frames > g:nth-child(2) rect', { force: true });
ok((await text('details')) === `Function: ${bigTitle}`, 'and responds to hover');
await page.screenshot({ path: path.join(outDir, 'flamegraph-100k.png') });

ok(errors.length === 0, 'no script errors', errors.join('; '));
await browser.close();
finish();
