// SPDX-License-Identifier: MIT
// A Java program spending its CPU in three methods of its own at known shares of the time
// (tests/integration/test_java.sh): a static method (App.burnStatic 50 %), an instance method
// (Burner.burnInstance 30 %: its work in an interface call of Burner.step, which the JIT
// inlines into it) and a lambda's body (App.lambda$main$0, 20 %, called through the
// IntSupplier interface). Each round lasts a random 30-70 ms, runs the three in a random order
// for their share of it and pauses a tenth of it (the same reasons as nodeburn/app.js: a round
// in step with the sampler's period, and RT throttling of a process that never sleeps).
// Each method loops until its deadline itself, so it is compiled on its own (OSR or whole) and
// its frame is its own: a call per round is too cold for the JIT to inline it into main.
//   java -cp DIR App SECONDS   prints "ready PID UNIXTIME TID" (TID: the main thread's), then
//   after SECONDS "split S I L"
//   (the wall-time percentages the three really took, measured around each call) and
//   "done UNIXTIME"
import java.util.Random;
import java.util.function.IntSupplier;

public class App {
	static long sink;
	static long deadline;

	static long now() {
		return System.nanoTime();
	}

	static void burnStatic(long until) {
		long x = sink | 1;
		for (;;) {
			for (int i = 0; i < 4096; i++)
				x = (x * 1103515245L + 12345L) % 2147483647L;
			if (now() >= until)
				break;
		}
		sink = x;
	}

	/* three implementations: the call in Burner.step sees all three (megamorphic), so it stays
	 * a real interface call, and step (small, hot) is inlined into burnInstance around it */
	interface Op {
		long apply(long x);
	}

	static final class Lcg implements Op {
		public long apply(long x) {
			return (x * 69069L + 1L) % 4294967291L;
		}
	}

	static final class XorShift implements Op {
		public long apply(long x) {
			x ^= x << 13;
			x ^= x >>> 7;
			return x ^ (x << 17);
		}
	}

	static final class Pcg implements Op {
		public long apply(long x) {
			return (x * 6364136223846793005L + 1442695040888963407L) >>> 1;
		}
	}

	static final class Burner {
		long seed = 3;
		final Op[] ops = { new Lcg(), new XorShift(), new Pcg() };

		private long step(long x, int i) {
			return ops[i % 3].apply(x) + 1;
		}

		void burnInstance(long until) {
			long x = seed;
			for (;;) {
				for (int i = 0; i < 4096; i++)
					x = step(x, i);
				if (now() >= until)
					break;
			}
			seed = x;
		}
	}

	static double unixTime() {
		return System.currentTimeMillis() / 1000.0;
	}

	public static void main(String[] args) throws Exception {
		double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 10;
		Burner b = new Burner();
		IntSupplier lambda = () -> {
			long x = sink | 7;
			for (;;) {
				for (int i = 0; i < 4096; i++)
					x = (x * 48271L) % 2147483647L;
				if (now() >= deadline)
					break;
			}
			return (int)x;
		};
		double[] share = { 0.5, 0.3, 0.2 };
		long[] spent = new long[3];
		Random rnd = new Random(42);
		/* the main thread's own id, for the test to give it (alone) real-time priority */
		String self = java.nio.file.Files.readSymbolicLink(java.nio.file.Paths.get("/proc/thread-self")).toString();
		/* one write (printf writes its pieces apart: a reader saw "ready " alone) */
		System.out.print(String.format("ready %d %.3f %s%n", ProcessHandle.current().pid(),
					       unixTime(), self.substring(self.lastIndexOf('/') + 1)));
		System.out.flush();
		long end = now() + (long)(seconds * 1e9);
		int[] order = { 0, 1, 2 };
		while (now() < end) {
			long round = (30 + rnd.nextInt(41)) * 1000000L;
			for (int i = 2; i > 0; i--) {
				int j = rnd.nextInt(i + 1), t = order[i];
				order[i] = order[j];
				order[j] = t;
			}
			for (int k : order) {
				long t0 = now(), until = t0 + (long)(round * share[k]);
				if (k == 0) {
					burnStatic(until);
				} else if (k == 1) {
					b.burnInstance(until);
				} else {
					deadline = until;
					sink += lambda.getAsInt();
				}
				spent[k] += now() - t0;
			}
			Thread.sleep(round / 10000000L);
		}
		long tot = spent[0] + spent[1] + spent[2];
		System.out.print(String.format("split %.1f %.1f %.1f%n", 100.0 * spent[0] / tot,
					       100.0 * spent[1] / tot, 100.0 * spent[2] / tot));
		System.out.print(String.format("done %.3f%n", unixTime()));
	}
}
