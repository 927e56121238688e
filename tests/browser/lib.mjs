// SPDX-License-Identifier: MIT
// Shared by the browser tests: Debian's chromium driven by playwright-core, TAP-style output.
import { createRequire } from 'module';
import path from 'path';

const require = createRequire(path.join(process.env.NODE_PATH || '.', 'noop.js'));
const { chromium } = require('playwright-core');

export const outDir = process.env.SCREENSHOT_DIR || path.join(process.env.OUTPUT || '.', 'screenshots');

export async function launch() {
	return chromium.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync'],
	});
}

let failures = 0;
export function ok(cond, name, detail) {
	if (cond) {
		console.log(`ok - ${name}`);
	} else {
		failures++;
		console.log(`not ok - ${name}${detail !== undefined ? ` (${detail})` : ''}`);
	}
}
export function finish() {
	process.exit(failures ? 1 : 0);
}

// Decodes a PNG screenshot (8-bit RGB or RGBA, not interlaced, as Chromium writes them) so that
// tests can assert on what the screenshot shows. Returns { width, height, px(x, y) -> [r, g, b] }.
export function decodePng(buf) {
	const zlib = require('zlib');
	let off = 8, width = 0, height = 0, ctype = 0;
	const idat = [];
	while (off < buf.length) {
		const len = buf.readUInt32BE(off), type = buf.toString('latin1', off + 4, off + 8);
		const data = buf.subarray(off + 8, off + 8 + len);
		if (type === 'IHDR') {
			width = data.readUInt32BE(0);
			height = data.readUInt32BE(4);
			if (data[8] !== 8 || data[12] !== 0) throw new Error('unsupported PNG');
			ctype = data[9];
		} else if (type === 'IDAT') {
			idat.push(data);
		}
		off += 12 + len;
	}
	const bpp = ctype === 6 ? 4 : ctype === 2 ? 3 : 0;
	if (!bpp) throw new Error('unsupported PNG colour type ' + ctype);
	const raw = zlib.inflateSync(Buffer.concat(idat)), stride = width * bpp;
	const out = Buffer.alloc(stride * height);
	for (let y = 0; y < height; y++) {
		const f = raw[y * (stride + 1)], src = y * (stride + 1) + 1, dst = y * stride;
		for (let i = 0; i < stride; i++) {
			const a = i >= bpp ? out[dst + i - bpp] : 0, b = y ? out[dst + i - stride] : 0;
			const c = i >= bpp && y ? out[dst + i - stride - bpp] : 0;
			let v = raw[src + i];
			if (f === 1) v += a;
			else if (f === 2) v += b;
			else if (f === 3) v += (a + b) >> 1;
			else if (f === 4) {
				const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
				v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
			}
			out[dst + i] = v & 255;
		}
	}
	return { width, height, px: (x, y) => { const i = Math.round(y) * stride + Math.round(x) * bpp; return [out[i], out[i + 1], out[i + 2]]; } };
}
