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
