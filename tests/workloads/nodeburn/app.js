// SPDX-License-Identifier: MIT
// A Node program spending its CPU in five functions of its own at known shares of the time
// (tests/integration/test_node.sh): a function (burnFunction 30 %), a class method
// (Burner.burnMethod 25 %), a closure (burnClosure 20 %), an async function (burnAsync 15 %,
// resumed from the microtask queue after each await) and a function of an ES module
// (burnModule 10 %, mod.mjs). Each round gives each its share of the round's wall time, so the
// split holds whatever tier V8 runs them in. Two things keep the split the samples see equal to
// the one asked for:
//   - each round lasts a random 30-70 ms and runs the five in a random order: with fixed 50 ms
//     rounds, a sampler's period (199 Hz: 5.025 ms, ~10 samples a round) stayed in step with
//     the rounds, the same function boundaries fell between the same samples round after round,
//     and the split came out up to 5 pp off (measured, and by either symbol source alike);
//   - each round ends with a pause of a tenth of its length: a real-time process that never
//     sleeps is stopped by the kernel's RT throttling (sched_rt_runtime_us: 50 ms of each second
//     here), the rounds then fill whole seconds, and the stop fell in the same function's time
//     every second (measured: that function took 28-33 % of the wall time instead of 25-30).
//   node app.js SECONDS   prints "ready PID UNIXTIME", then, after SECONDS or at the end of the
//   round in which SIGUSR2 came, "split F M C A MOD" (the wall-time percentages the five really
//   took, measured around each call; since the last SIGUSR1 if one came) and "done UNIXTIME"
'use strict';

const ROUND_MIN_MS = 30;
const ROUND_SPAN_MS = 40;
const PAUSE = 0.1; // of the round's length
let sink = 0;

function now() {
  return Number(process.hrtime.bigint()) / 1e6;
}

// 4096 steps of an LCG: small, so TurboFan inlines it into burnFunction (its code then runs
// inside burnFunction's, with no frame of its own)
function lcgRound(x) {
  for (let i = 0; i < 4096; i++) x = (x * 1103515245 + 12345) % 2147483647;
  return x;
}

// work until @until (ms); the clock is read every 4096 steps
function burnFunction(until) {
  let x = sink;
  for (;;) {
    x = lcgRound(x);
    if (now() >= until) break;
  }
  sink = x;
}

// two levels inlined into Burner.burnMethod: its method round, and mixRound called by that
function mixRound(x) {
  for (let i = 0; i < 4096; i++) x = (x * 69069 + 1) % 4294967291;
  return x;
}

class Burner {
  constructor(seed) {
    this.seed = seed;
  }

  round(x) {
    return mixRound(x);
  }

  burnMethod(until) {
    let x = this.seed;
    for (;;) {
      x = this.round(x);
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
  const spent = shares.map(() => 0);
  const order = shares.map((_, i) => i);
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  console.log(`ready ${process.pid} ${(Date.now() / 1000).toFixed(3)}`);
  let end = now() + seconds * 1000;
  process.on('SIGUSR2', () => {
    end = 0;
  });
  // SIGUSR1: the split starts again from here (a test's window; its listener also keeps node's
  // inspector from starting)
  process.on('SIGUSR1', () => {
    spent.fill(0);
  });
  while (now() < end) {
    const round = ROUND_MIN_MS + Math.random() * ROUND_SPAN_MS;
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (const k of order) {
      const [fn, pct] = shares[k];
      const t0 = now();
      const until = t0 + (round * pct) / 100;
      if (fn) fn(until);
      else await burnAsync(until);
      spent[k] += now() - t0;
    }
    await sleep(round * PAUSE);
  }
  const total = spent.reduce((a, b) => a + b, 0) || 1;
  console.log(`split ${spent.map((t) => ((100 * t) / total).toFixed(1)).join(' ')}`);
  console.log(`done ${(Date.now() / 1000).toFixed(3)} ${sink}`);
}

main();
