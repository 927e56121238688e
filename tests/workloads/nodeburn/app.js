// SPDX-License-Identifier: MIT
// A Node program spending its CPU in five functions of its own at known shares of the time
// (tests/integration/test_node.sh): a function (burnFunction 30 %), a class method
// (Burner.burnMethod 25 %), a closure (burnClosure 20 %), an async function (burnAsync 15 %,
// resumed from the microtask queue after each await) and a function of an ES module
// (burnModule 10 %, mod.mjs). Each round gives each its share of ROUND_MS of wall time, so the
// split holds whatever tier V8 runs them in.
//   node app.js SECONDS   prints "ready PID UNIXTIME", then "done UNIXTIME"
'use strict';

const ROUND_MS = 50;
let sink = 0;

function now() {
  return Number(process.hrtime.bigint()) / 1e6;
}

// work until @until (ms); the clock is read every 4096 steps
function burnFunction(until) {
  let x = sink;
  for (;;) {
    for (let i = 0; i < 4096; i++) x = (x * 1103515245 + 12345) % 2147483647;
    if (now() >= until) break;
  }
  sink = x;
}

class Burner {
  constructor(seed) {
    this.seed = seed;
  }

  burnMethod(until) {
    let x = this.seed;
    for (;;) {
      for (let i = 0; i < 4096; i++) x = (x * 69069 + 1) % 4294967291;
      if (now() >= until) break;
    }
    this.seed = x;
  }
}

function makeBurner(seed) {
  let state = seed;
  return function burnClosure(until) {
    for (;;) {
      for (let i = 0; i < 4096; i++) state = (state * 48271) % 2147483647;
      if (now() >= until) break;
    }
  };
}

async function burnAsync(until) {
  let x = 7;
  // awaits a few times: the rest of the time it runs resumed from the microtask queue
  for (let k = 0; k < 4; k++) {
    const part = now() + (until - now()) / (4 - k);
    for (;;) {
      for (let i = 0; i < 4096; i++) x = (x * 16807) % 2147483647;
      if (now() >= part) break;
    }
    await null;
  }
  sink += x;
}

async function main() {
  const seconds = Number(process.argv[2] || 10);
  const { burnModule } = await import('./mod.mjs');
  const burner = new Burner(3);
  const burnClosure = makeBurner(5);
  const shares = [
    [burnFunction, 30],
    [(u) => burner.burnMethod(u), 25],
    [burnClosure, 20],
    [null, 15], // burnAsync
    [burnModule, 10],
  ];
  console.log(`ready ${process.pid} ${(Date.now() / 1000).toFixed(3)}`);
  const end = now() + seconds * 1000;
  while (now() < end) {
    for (const [fn, pct] of shares) {
      const until = now() + (ROUND_MS * pct) / 100;
      if (fn) fn(until);
      else await burnAsync(until);
    }
  }
  console.log(`done ${(Date.now() / 1000).toFixed(3)} ${sink}`);
}

main();
