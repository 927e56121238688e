// SPDX-License-Identifier: MIT
// ember heatmap's interactive SVG in Chromium. $SVG is the map of $IN; $WANT holds the expected
// per-cell counts and arrangement (computed by test_heatmap.sh without ember). Cell positions come
// from the grid's geometry; expected times and sums are computed here with BigInt nanoseconds.
import fs from 'fs';
import path from 'path';
import { execFileSync } from 'child_process';
import { launch, ok, finish, outDir } from './lib.mjs';

const want = JSON.parse(fs.readFileSync(process.env.WANT, 'utf8'));
const START = BigInt(want.start_ns), COL = BigInt(want.column_ns), ROWS = want.rows;
const rowOff = r => (BigInt(r) * COL + BigInt(ROWS) - 1n) / BigInt(ROWS);
const cellStart = (c, r) => START + BigInt(c) * COL + rowOff(r);
const cellEnd = (c, r) => START + BigInt(c) * COL + rowOff(r + 1);
const secs = ns => {
	const s = (ns / 1000000000n).toString();
	let f = (ns % 1000000000n).toString();
	if (f === '0') return s;
	return s + '.' + f.padStart(9, '0').replace(/0+$/, '');
};
const sumRange = (a, b) => {
	let n = 0;
	for (let i = a.c * ROWS + a.r; i <= b.c * ROWS + b.r; i++)
		n += want.values[Math.floor(i / ROWS)][i % ROWS];
	return n;
};

const browser = await launch();
const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
const errors = [];
page.on('pageerror', e => errors.push(e.message));
await page.goto('file://' + path.resolve(process.env.SVG));

const g = await page.evaluate(() => {
	const e = document.getElementById('grid');
	const r = e.getBoundingClientRect();
	return { left: r.left, top: r.top, w: r.width, h: r.height,
		 cols: +e.getAttribute('data-columns'), rows: +e.getAttribute('data-rows') };
});
ok(g.cols === want.values.length && g.rows === ROWS, 'arrangement read from the page', JSON.stringify(g));
const cw = g.w / g.cols, ch = g.h / g.rows;
// the centre of cell (c, r): rows are painted bottom to top
const at = (c, r) => ({ x: g.left + (c + 0.5) * cw, y: g.top + (g.rows - 1 - r + 0.5) * ch });

// every drawn cell's count is the expected one
const drawn = await page.evaluate(() => Array.from(document.querySelectorAll('#cells rect'))
	.map(e => [e.id, +e.getAttribute('data-n')]));
let bad = 0, expected = 0;
for (const [id, n] of drawn) {
	const [c, r] = id.slice(1).split('_').map(Number);
	if (want.values[c][r] !== n) bad++;
}
want.values.forEach(col => col.forEach(v => { if (v) expected++; }));
ok(bad === 0 && drawn.length === expected, 'cells drawn with the expected counts', `${bad} wrong, ${drawn.length}/${expected}`);

// hover
const hc = { c: 3, r: 0 };
let p = at(hc.c, hc.r);
await page.mouse.move(p.x, p.y);
const hover = await page.textContent('#hover');
const hwant = `cell 3,0: ${secs(cellStart(3, 0))} - ${secs(cellEnd(3, 0))} s`;
ok(hover.startsWith(hwant) && hover.includes(`${want.values[3][0]} samples`), 'hover shows the cell range and count', hover);
ok(await page.evaluate(() => document.getElementById('hcell').getAttribute('visibility')) === 'visible',
   'hover outlines the cell');
await page.screenshot({ path: path.join(outDir, 'heatmap-hover.png') });

// select: click (2, 45) then (5, 3); then the reverse order gives the same range
async function select(a, b) {
	p = at(a.c, a.r);
	await page.mouse.click(p.x, p.y);
	p = at(b.c, b.r);
	await page.mouse.click(p.x, p.y);
	return page.evaluate(() => {
		const s = document.getElementById('selection');
		return { start: s.getAttribute('data-start'), end: s.getAttribute('data-end'),
			 samples: s.getAttribute('data-samples'), text: s.textContent,
			 rects: document.querySelectorAll('#selrects rect').length };
	});
}
const A = { c: 2, r: 45 }, B = { c: 5, r: 3 };
const sel = await select(A, B);
const sStart = secs(cellStart(A.c, A.r)), sEnd = secs(cellEnd(B.c, B.r)), sN = sumRange(A, B);
ok(sel.start === sStart && sel.end === sEnd, 'selected range is [start of first cell, end of last)', JSON.stringify(sel));
ok(sel.samples === String(sN), 'selected samples are the sum of the cells', `${sel.samples} vs ${sN}`);
ok(sel.rects === B.c - A.c + 1, 'selection highlighted column by column', sel.rects);
ok(sel.text.includes(`--range ${sStart} ${sEnd}`), 'the page shows the ember command for the range', sel.text);
await page.screenshot({ path: path.join(outDir, 'heatmap-selection.png') });
const rev = await select(B, A);
ok(rev.start === sStart && rev.end === sEnd && rev.samples === String(sN), 'clicking in reverse order selects the same range');

// the page's range fed back to the CLI: the same number of samples
let folded = '';
try {
	folded = execFileSync(process.env.EMBER, ['heatmap', process.env.IN, '--range', String(sel.start), String(sel.end)], { encoding: 'utf8' });
} catch (e) {
	folded = '';
}
const cli = folded.trim().split('\n').filter(l => l).reduce((s, l) => s + Number(l.split(' ').pop()), 0);
ok(cli === sN, 'ember heatmap --range over the selection counts the same samples', `${cli} vs ${sN}`);

// a single cell selected by clicking it twice
const one = await select({ c: 7, r: 49 }, { c: 7, r: 49 });
ok(one.start === secs(cellStart(7, 49)) && one.end === secs(cellEnd(7, 49)), 'one cell selects its own range', JSON.stringify(one));
ok(errors.length === 0, 'no page errors', errors.join('; '));
await browser.close();
finish();
