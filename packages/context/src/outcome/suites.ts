import type { OutcomeCounts, SuiteResult } from "../types.js";
import { countsTotal } from "./counted.js";

/** Suites listed one by one in an outcome; the others are only counted and summed. */
export const LISTED_SUITES = 100;

/** One runner's tally: the counts of one summary block, and the verdicts printed with them. */
interface Tally {
	runner: string;
	counts: OutcomeCounts;
	/** Line of the last result line that set its counts. */
	line: number;
	/** A summary line followed its counts: counts read after it may open the next suite. */
	closed: boolean;
	failed: boolean;
	clean: boolean;
	/** Nested in another run (`runStarts`) or quoted in a run's report (`quoted`): no suite of this output. */
	nested: boolean;
}

/** What the suites of one output add up to. */
export interface SuiteTotals {
	/** The counts of the whole output: the one suite's, or the sum of all of them. */
	counts: OutcomeCounts | null;
	/** Each suite, when there are several (else empty). */
	suites: SuiteResult[];
	/** Suites past `LISTED_SUITES`: how many, and how many of them failed. */
	unlisted: { suites: number; failed: number };
}

/**
 * The test suites of one output, one tally per summary block: two runners in one command, `npm test`
 * over several workspaces, logs put together. Counts that restate a runner's whole tally (a second
 * `5 passed in 0.1s`, jest's `Tests:`, node's `ℹ pass` of the next run) open a new suite once a summary
 * line closed the tally before; until then they replace it (node's `ℹ fail` after `ℹ pass`). Counts
 * that add to a tally always refine it (mocha's `2 failing` after `3 passing`, unittest's verdict).
 * Memory: `LISTED_SUITES` tallies, then one running sum.
 */
export class SuiteTallies {
	private readonly done: Tally[] = [];
	private current: Tally | null = null;
	/** A verdict printed before its suite's counts (jest's `Test Suites: 1 failed` over its `Tests:`). */
	private pending: { runner: string; clean: boolean } | null = null;
	private readonly unlisted = { suites: 0, failed: 0, counts: {} as OutcomeCounts };
	/** Per runner, the runs started and not yet summed up (see `runStarts`). */
	private readonly running = new Map<string, number>();

	/** Counts of the suite being read (null before any). */
	get counts(): OutcomeCounts | null {
		return this.current?.counts ?? null;
	}

	get runner(): string | null {
		return this.current?.runner ?? null;
	}

	/** Counts of a result line. `fresh`: they restate the whole tally (else their fields merge into it). */
	set(runner: string, counts: OutcomeCounts, fresh: boolean, line: number): void {
		const current = this.current;
		if (current === null || current.runner !== runner || (current.closed && fresh)) {
			this.begin(runner, line);
		}
		const tally = this.current as Tally;
		if (fresh) tally.counts = {};
		Object.assign(tally.counts, counts);
		tally.line = line;
		tally.closed = false;
	}

	/** Adds counts to the runner's tally (one summary per test binary, like cargo's). */
	add(runner: string, counts: OutcomeCounts, line: number): void {
		if (this.current === null || this.current.runner !== runner) this.begin(runner, line);
		const tally = this.current as Tally;
		for (const [key, value] of Object.entries(counts) as [keyof OutcomeCounts, number][]) {
			tally.counts[key] = (tally.counts[key] ?? 0) + value;
		}
		tally.line = line;
		tally.closed = false;
	}

	/**
	 * A run of `runner` starts (pytest's `test session starts`). A run that starts before the one
	 * around it printed its summary is nested in it (pytest's own tests print the runs they start):
	 * its tally is quoted text.
	 */
	runStarts(runner: string): void {
		this.running.set(runner, (this.running.get(runner) ?? 0) + 1);
	}

	/**
	 * The last tally of `runner`, closed by its summary, was quoted in a run's report (pytest's own
	 * tests print the runs they start, and more of the report follows): no suite of this output.
	 */
	quoted(runner: string): void {
		if (this.current !== null && this.current.runner === runner && this.current.closed) this.current.nested = true;
	}

	/** A summary line of `runner` with its verdict (null: none). It closes the runner's open tally. */
	verdict(runner: string, clean: boolean | null): void {
		const tally = this.current;
		if (tally !== null && tally.runner === runner && !tally.closed) {
			tally.closed = true;
			const runs = this.running.get(runner) ?? 0;
			if (runs > 0) this.running.set(runner, runs - 1);
			if (clean === false) tally.failed = true;
			if (clean === true) tally.clean = true;
		} else if (clean !== null) {
			this.pending = { runner, clean };
		}
	}

	/** The suites' counts and results. */
	totals(): SuiteTotals {
		const all = this.current ? [...this.done, this.current] : this.done;
		// With every summary nested or quoted (the run around them cut off), those are all there is.
		const outer = all.filter((tally) => !tally.nested);
		const tallies = outer.length > 0 ? outer : all;
		const suites = tallies.map((tally): SuiteResult => {
			const counts = completed(tally);
			const status = failedTally(tally, counts) ? "fail" : tally.clean ? "pass" : "unknown";
			return { runner: tally.runner, counts, line: tally.line, status };
		});
		const unlisted = { suites: this.unlisted.suites, failed: this.unlisted.failed };
		if (suites.length + unlisted.suites <= 1) return { counts: suites[0]?.counts ?? null, suites: [], unlisted };
		const sum: OutcomeCounts = { ...this.unlisted.counts };
		for (const suite of suites) addCounts(sum, suite.counts);
		return { counts: sum, suites, unlisted };
	}

	private begin(runner: string, line: number): void {
		if (this.current !== null) this.keep(this.current);
		const pending = this.pending?.runner === runner ? this.pending : null;
		this.pending = null;
		this.current = {
			runner,
			counts: {},
			line,
			closed: false,
			failed: pending?.clean === false,
			clean: pending?.clean === true,
			nested: (this.running.get(runner) ?? 0) > 1,
		};
	}

	private keep(tally: Tally): void {
		if (this.done.length < LISTED_SUITES - 1) {
			this.done.push(tally);
			return;
		}
		if (tally.nested) return;
		const counts = completed(tally);
		this.unlisted.suites++;
		if (failedTally(tally, counts)) this.unlisted.failed++;
		addCounts(this.unlisted.counts, counts);
	}
}

/** A tally's counts, completed as its runner prints them: unittest and uvu print a total and the non-passing counts. */
function completed({ runner, counts: tally }: Tally): OutcomeCounts {
	const counts = { ...tally };
	if (runner === "unittest" && counts.total !== undefined && counts.passed === undefined) {
		counts.passed =
			counts.total - (counts.failed ?? 0) - (counts.errors ?? 0) - (counts.skipped ?? 0) - (counts.xfailed ?? 0);
	}
	if (runner === "uvu" && counts.total !== undefined && counts.failed === undefined) {
		counts.failed = Math.max(0, counts.total - (counts.passed ?? 0) - (counts.skipped ?? 0));
	}
	return counts;
}

function failedTally(tally: Tally, counts: OutcomeCounts): boolean {
	return tally.failed || (counts.failed ?? 0) + (counts.errors ?? 0) > 0;
}

/**
 * Adds `counts` into `sum`, field by field. A stated total is added where the suite states one, else
 * the suite's counted tests are: the sum's total covers every suite.
 */
function addCounts(sum: OutcomeCounts, counts: OutcomeCounts): void {
	for (const [key, value] of Object.entries(counts) as [keyof OutcomeCounts, number][]) {
		if (key !== "total") sum[key] = (sum[key] ?? 0) + value;
	}
	sum.total = (sum.total ?? 0) + countsTotal(counts);
}
