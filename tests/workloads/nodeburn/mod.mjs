// SPDX-License-Identifier: MIT
// The ES module of tests/workloads/nodeburn/app.js: its function burns 10 % of the time.
let state = 11;

export function burnModule(until) {
  for (;;) {
    for (let i = 0; i < 4096; i++) state = (state * 40692) % 2147483399;
    if (Number(process.hrtime.bigint()) / 1e6 >= until) break;
  }
}
