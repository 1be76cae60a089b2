import type { Outcome, OutcomeCounts } from "../types.js";
import { type LineKind, noteShaped, type ShapedLines } from "./classify.js";
import { IdMarkCounter } from "./id-marks.js";
import { type Keep, keeper } from "./line-slot.js";
import { SuiteTallies } from "./suites.js";
import { clip } from "./visible.js";

/** Bounds that keep a scan's memory constant whatever the output's size. */
export const LIMITS = {
	failingIds: 5000,
	/** Distinct ids remembered for counting past `failingIds` (beyond it, repeats may be counted twice). */
	countedIds: 100_000,
	idLength: 500,
	exceptions: 500,
	/** Types first seen past `exceptions`: each still gets one entry, so a late new type is never lost. */
	lateExceptionTypes: 100,
	messageLength: 300,
	typeLength: 200,
	pathLength: 512,
	projectLocations: 4096,
	libraryLocations: 256,
	summaryLines: 128,
} as const;

/** Frames in dependencies, the standard library or the runtime: listed, never the top choice. */
const LIBRARY_PATH =
	/(?:^|[\\/])(?:node_modules|site-packages|dist-packages|\.cargo[\\/]registry|\.rustup|rustc)[\\/]|^node:|^internal[\\/]|^<frozen |[\\/]lib[\\/]python\d|^\/usr\/(?:local\/)?lib[\\/]/;

export function isLibraryPath(file: string): boolean {
	return LIBRARY_PATH.test(file);
}

/** Runners whose bare `×`/`✕`/`✖` result lines name failing tests (confirmed together as `js-test`). */
const JAVASCRIPT_RUNNERS = new Set(["jest", "vitest", "mocha", "node-test", "tap", "uvu"]);

/** Runner names that say nothing about which test runner printed the output. */
const UNSPECIFIC_RUNNERS = new Set(["generic", "exit-status"]);

/** Commands that reveal which runner printed the output. */
const COMMAND_RUNNERS: [RegExp, string][] = [
	[/\bpy\.?test\b/, "pytest"],
	[/\bunittest\b|\bmanage\.py test\b|\bruntests\.py\b/, "unittest"],
	[/\bmocha\b/, "mocha"],
	[/\bjest\b/, "jest"],
	[/\bvitest\b/, "vitest"],
	[/\bnode\b.*\s--test\b/, "node-test"],
	[/\bcargo\s+(?:test|nextest)\b/, "cargo"],
];

interface IdEntry {
	id: string;
	/** Kept only if this runner was confirmed by its own summary or header (guards look-alike prose). */
	needs?: string;
	/** A bare leaf title, dropped when a full id already names the same test. */
	leaf?: boolean;
	/** Another spelling of a test named elsewhere too (pytest's section headers); listed after the others. */
	alias?: boolean;
	/** Named by an explicit failure mark (`FAIL`, `FAILED`, `✖`, `not ok`): a failure whatever printed it. */
	marked?: boolean;
	/**
	 * The test's own title, when the id is its whole title path joined in a way no separator tells
	 * (mocha's `fullTitle` joins with spaces): a bare leaf of that title names the same test.
	 */
	covers?: string;
}

type Location = Outcome["locations"][number];

/**
 * One family of rules over a line: `text` is the visible line (ANSI stripped, bounded), `trimmed` the
 * same without surrounding whitespace. Returns true when the line was recognised (claimed).
 */
export type LineParser = (text: string, trimmed: string, lineNo: number) => boolean;

/** A family of rules and the multi-line context it keeps between lines. */
export interface LineFamily {
	line: LineParser;
	/**
	 * The context the family reads line `lineNo` in, as a number from 0 to 15 (its switches: a
	 * section, a phase), or -1 while it reads lines in a way a number does not say (a traceback, a
	 * title, a file's rows). A line that no family claims and that reports nothing and changes no mode
	 * does the same whenever it comes again in the same modes, with the same runners confirmed (see
	 * `ScanState.runnersConfirmed`): the scanner skips it. State left out of the mode must not change
	 * what an unclaimed line does, or change only so that an inert line stays inert.
	 */
	mode(lineNo: number): number;
	/** The output ended: report what was waiting for a following line (optional). */
	end?(): void;
}

/**
 * Everything one scan has learned so far. Parsers report facts here; `build` turns them into an `Outcome`.
 * Every collection is capped (see `LIMITS`), so memory stays bounded however many lines arrive.
 */
export class ScanState {
	private readonly ids: IdEntry[] = [];
	private readonly idSeen = new Set<string>();
	/** The recorded ids that are bare leaf titles so far (see `IdEntry.leaf`). */
	private readonly leafIds = new Set<string>();
	/** The marks the tracked ids were printed under. */
	private readonly idMarks = new IdMarkCounter();
	private unrecordedIds = 0;
	/** Recorded short names (`alias`), by their text: a whole id past the cap takes its short name's place. */
	private readonly aliasEntries = new Map<string, IdEntry>();
	/** Short names counted past the cap: their whole id, read later, is no further test. */
	private readonly countedAliases = new Set<string>();
	/** Short names of the whole ids read (`shortNames`): a short name read later past the cap is no further test. */
	private readonly wholeShortNames = new Set<string>();
	private readonly exceptions: Outcome["exceptions"] = [];
	/** Distinct exceptions seen past the cap (`LIMITS.exceptions`): counted, not kept. */
	private unrecordedExceptions = 0;
	private readonly exceptionSeen = new Set<string>();
	private readonly exceptionTypes = new Set<string>();
	private readonly projectLocations: Location[] = [];
	private readonly libraryLocations: Location[] = [];
	private readonly locationSeen = new Set<string>();
	private readonly summaryLines: number[] = [];
	private readonly confirmed = new Set<string>();

	/** Runner of the latest recognised terminal summary; else of the strongest other sign. */
	runner: string | null = null;
	private runnerFromSummary = false;
	/** The tally of each suite the output holds (one per summary block; see `SuiteTallies`). */
	private readonly tallies = new SuiteTallies();
	/** The counts of the suite being read (null before any summary with counts). */
	get counts(): OutcomeCounts | null {
		return this.tallies.counts;
	}
	/** Definite failure evidence (failing ids, failed counts, FAILED lines, diagnostics). */
	hardFailure = false;
	/** Last line of evidence that only counts if no clean summary follows (a crash, an `error:` line). */
	softFailureLine = 0;
	lastCleanSummaryLine = 0;
	statedExitCode: number | null = null;
	/** Last lines shaped like a failure and like an error or exception. */
	private readonly shaped: ShapedLines = { failure: 0, error: 0 };

	/** Applied to what is kept past its line (see `keeper`). */
	private readonly own: Keep;

	/** `copyKept`: what is kept is copied off the text it was cut from (see `ownCopy`). */
	constructor(copyKept = true) {
		this.own = keeper(copyKept);
	}

	/** Records a line's kind: without an exit status, failure-shaped lines anywhere forbid a pass. */
	shapedLike(kind: LineKind, lineNo: number): void {
		noteShaped(this.shaped, kind, lineNo);
	}

	/** The shaped lines of a scan whose lines were classified elsewhere (see `ShapedLines`). */
	shapedAs(shaped: ShapedLines): void {
		this.shaped.failure = shaped.failure;
		this.shaped.error = shaped.error;
	}

	/** Facts reported so far (ids, exceptions, locations, summaries, counts, runners, soft failures). */
	reports = 0;

	/**
	 * How many runners are confirmed: rules read it (`isConfirmed`), so a line may mean more once it
	 * grows. The set only grows, so the same count is the same set.
	 */
	get runnersConfirmed(): number {
		return this.confirmed.size;
	}

	private confirmRunner(runner: string): void {
		this.confirmed.add(runner);
		if (JAVASCRIPT_RUNNERS.has(runner)) this.confirmed.add("js-test");
	}

	isConfirmed(runner: string): boolean {
		return this.confirmed.has(runner);
	}

	/** A runner was seen (header, id shape); a summary's runner wins over this. */
	sawRunner(runner: string): void {
		this.reports++;
		this.confirmRunner(runner);
		if (!this.runnerFromSummary && this.runner === null) this.runner = runner;
	}

	/** A run of `runner` starts (pytest's `test session starts`; see `SuiteTallies.runStarts`). */
	runStarts(runner: string): void {
		this.sawRunner(runner);
		this.tallies.runStarts(runner);
	}

	/** The last summary of `runner` was quoted in a run's report, not the end of a suite (see `SuiteTallies.quoted`). */
	quotedSummary(runner: string): void {
		this.reports++;
		this.tallies.quoted(runner);
	}

	/** The current line without surrounding whitespace, and the spaces it ended with. */
	private lineTrimmed = "";
	private lineTrailing = "";

	/** Where the current line's first `: ` is (in its trimmed text; -1: none); -2 until asked. */
	private colonSpaceAt = -2;

	/**
	 * Where the current line's first `: ` is, in its trimmed text (-1: none): the rules for
	 * `path:line:col: message` lines of several tools ask, and the line is searched once.
	 */
	colonSpace(): number {
		if (this.colonSpaceAt === -2) this.colonSpaceAt = this.lineTrimmed.indexOf(": ");
		return this.colonSpaceAt;
	}

	/** The line being read (1-based). */
	private lineNo = 0;

	/** Called for every line before the parsers see it. */
	startLine(text: string, trimmed: string, lineNo: number): void {
		this.lineNo = lineNo;
		this.lineTrimmed = trimmed;
		this.colonSpaceAt = -2;
		const last = text.charCodeAt(text.length - 1);
		// Most lines end in neither a space nor a tab: no string is built for them.
		this.lineTrailing = last === 32 || last === 9 ? text.slice(text.trimEnd().length).replace(/[^ \t]/g, "") : "";
	}

	/**
	 * `earlierLine`: the name was read on an earlier line than the current one. `whole`: the name is
	 * complete as given (the line's trailing spaces are not part of it). `verbatim`: the name is
	 * exactly as given, its own trailing spaces included (a time followed it: `✖ name  (1.2ms)`).
	 */
	addId(
		raw: string,
		options: {
			needs?: string;
			leaf?: boolean;
			alias?: boolean;
			marked?: boolean;
			covers?: string;
			earlierLine?: boolean;
			whole?: boolean;
			verbatim?: boolean;
		} = {},
	): void {
		this.reports++;
		const { earlierLine, whole, verbatim, ...entry } = options;
		let id = verbatim ? raw : raw.trim();
		// A name that ends the line keeps its trailing spaces: they are part of the name a re-run needs.
		if (!earlierLine && !whole && this.lineTrailing !== "" && id !== "" && this.lineTrimmed.endsWith(id))
			id += this.lineTrailing;
		id = clip(id, LIMITS.idLength);
		if (id === "") return;
		// Every line that names a tracked id tells a mark it is printed under (`idMarks`).
		const note = (tracked: string) => {
			if (!earlierLine) this.idMarks.note(this.lineTrimmed, tracked);
		};
		if (this.idSeen.has(id)) {
			note(id);
			// A whole id that a bare leaf spelled first (a test at the top level) is no leaf.
			if (!entry.leaf && this.leafIds.delete(id)) {
				const seen = this.ids.find((known) => known.id === id);
				if (seen) seen.leaf = false;
			}
			return;
		}
		id = this.own(id);
		if (this.ids.length >= LIMITS.failingIds) {
			if (this.sameTestAsRead(id, entry.alias === true)) {
				note(id);
				return;
			}
			// Past the cap ids are only counted, so a capsule never claims to list them all.
			if (this.idSeen.size < LIMITS.countedIds) {
				this.idSeen.add(id);
				note(id);
				if (entry.alias) this.countedAliases.add(id);
			}
			this.unrecordedIds++;
			return;
		}
		this.idSeen.add(id);
		note(id);
		if (entry.leaf) this.leafIds.add(id);
		const recorded = { id, ...entry };
		this.ids.push(recorded);
		if (entry.alias) this.aliasEntries.set(id, recorded);
		else this.rememberShortNames(id);
	}

	/**
	 * Past the cap: the id names a test read already under its other spelling (pytest prints a failing
	 * test's short name over its traceback and its whole id in the summary, in either order), so it is
	 * no further failing test. A whole id takes the place of its recorded short name in the list.
	 */
	private sameTestAsRead(id: string, alias: boolean): boolean {
		if (alias) return this.wholeShortNames.has(id);
		this.rememberShortNames(id);
		for (const name of shortNames(id)) {
			const entry = this.aliasEntries.get(name);
			if (entry) {
				this.aliasEntries.delete(name);
				this.idSeen.delete(name);
				this.idSeen.add(id);
				entry.id = id;
				entry.alias = false;
				return true;
			}
			if (this.countedAliases.has(name)) {
				this.countedAliases.delete(name);
				return true;
			}
		}
		return false;
	}

	private rememberShortNames(id: string): void {
		if (this.wholeShortNames.size >= LIMITS.countedIds) return;
		for (const name of shortNames(id)) this.wholeShortNames.add(name);
	}

	/** Withdraws an id that turned out to name a group (a suite failing only through its tests). */
	removeId(id: string): void {
		this.reports++;
		if (!this.idSeen.delete(id)) return;
		this.leafIds.delete(id);
		this.idMarks.forget(id);
		const index = this.ids.findIndex((entry) => entry.id === id);
		if (index >= 0) this.ids.splice(index, 1);
	}

	/** The failing ids printed under no mark: the recorded ones, and how many of those past the record. */
	private unmarkedIds(recorded: string[]): Pick<Outcome, "unmarkedFailingIds" | "unmarkedUnrecordedIds"> {
		const unmarkedRecorded = this.ids.filter((entry) => !this.idMarks.marked(entry.id)).length;
		const unmarkedSeen = this.idSeen.size - this.idMarks.markedIds;
		return {
			unmarkedFailingIds: recorded.filter((id) => !this.idMarks.marked(id)),
			unmarkedUnrecordedIds: unmarkedSeen - unmarkedRecorded,
		};
	}

	/** Takes back the exception of `type` with no message recorded at output line `line`, if any. */
	withdrawException(type: string, line: number): void {
		const index = this.exceptions.findIndex((e) => e.type === type && e.message === "" && e.line === line);
		if (index < 0) return;
		this.reports++;
		this.exceptions.splice(index, 1);
		this.exceptionSeen.delete(`${type}\u0000`);
		if (!this.exceptions.some((e) => e.type === type)) this.exceptionTypes.delete(type);
	}

	/** An exception of a type tagged with this code (`TypeError [ERR_X]`) was recorded. */
	hasExceptionTagged(code: string): boolean {
		const tag = ` [${code}]`;
		for (const type of this.exceptionTypes) if (type.endsWith(tag)) return true;
		return false;
	}

	addException(type: string, message: string, line: number): void {
		this.reports++;
		const msg = clip(message.trim(), LIMITS.messageLength);
		if (type.length > LIMITS.typeLength) return;
		const key = `${type}\u0000${msg}`;
		if (this.exceptionSeen.has(key)) return;
		if (
			this.exceptions.length >= LIMITS.exceptions &&
			(this.exceptionTypes.has(type) || this.exceptions.length >= LIMITS.exceptions + LIMITS.lateExceptionTypes)
		) {
			// Past the cap distinct exceptions are only counted, so the capsule's counts stay true. A message
			// cut short with an ellipsis may repeat one not kept: it is not counted (no count too many).
			if (ellipsisLength(msg) === 0 && this.exceptionSeen.size < LIMITS.countedIds) {
				this.exceptionSeen.add(this.own(key));
				this.unrecordedExceptions++;
			}
			return;
		}
		if (this.truncatedCopy(type, msg)) return;
		this.exceptionSeen.add(this.own(key));
		const ownType = this.own(type);
		this.exceptionTypes.add(ownType);
		this.exceptions.push({ type: ownType, message: this.own(msg), line });
	}

	/**
	 * The message is cut short with an ellipsis (pytest's short summary fits each line to the terminal:
	 * `FAILED t.py::t - ValueError: Expecting propert...`) and an exception of this type whose message
	 * it begins was recorded already: the same exception again.
	 */
	private truncatedCopy(type: string, message: string): boolean {
		const cut = ellipsisLength(message);
		if (cut === 0) return false;
		const start = message.slice(0, -cut);
		return this.exceptions.some(
			(e) => e.type === type && e.message.length > start.length && e.message.startsWith(start),
		);
	}

	/** `library`: the line says the frame is not the project's (else the path decides, `isLibraryPath`). */
	addLocation(rawFile: string, line: number, column: number | undefined, at: number, library = false): void {
		this.reports++;
		if (!Number.isSafeInteger(line) || line < 0) return;
		const file = rawFile.startsWith("file://") ? rawFile.slice(7) : rawFile;
		if (file.length > LIMITS.pathLength) return;
		// `./src/a.rs` (a backtrace's frame) is the `src/a.rs` of the panic line: one place, listed once.
		const key = `${file.startsWith("./") ? file.slice(2) : file}:${line}`;
		if (this.locationSeen.has(key)) return;
		if (!library) library = isLibraryPath(file);
		const list = library ? this.libraryLocations : this.projectLocations;
		if (list.length >= (library ? LIMITS.libraryLocations : LIMITS.projectLocations)) return;
		this.locationSeen.add(this.own(key));
		const own = this.own(file);
		list.push(column === undefined ? { file: own, line, at } : { file: own, line, column, at });
	}

	/**
	 * A result-shaped terminal line. `clean` true: a success summary; false: a failure summary;
	 * null: neutral (e.g. a total without verdict).
	 */
	summary(lineNo: number, runner: string, clean: boolean | null): void {
		this.reports++;
		if (this.summaryLines[this.summaryLines.length - 1] !== lineNo) {
			if (this.summaryLines.length >= LIMITS.summaryLines) this.summaryLines.shift();
			this.summaryLines.push(lineNo);
		}
		this.confirmRunner(runner);
		this.runner = runner;
		this.runnerFromSummary = true;
		if (clean === true) this.lastCleanSummaryLine = lineNo;
		if (clean === false) this.hardFailure = true;
		this.tallies.verdict(runner, clean);
	}

	/**
	 * Counts of a summary. `fresh`: they restate the runner's whole tally (else fields merge into it);
	 * after a summary line closed the tally they open the next suite (see `SuiteTallies`).
	 */
	setCounts(runner: string, counts: OutcomeCounts, fresh: boolean): void {
		this.reports++;
		this.tallies.set(runner, counts, fresh, this.lineNo);
	}

	/** Adds counts to the tally (runners that print one summary per test binary, like cargo). */
	addCounts(runner: string, counts: OutcomeCounts): void {
		this.reports++;
		this.tallies.add(runner, counts, this.lineNo);
	}

	softFailure(lineNo: number): void {
		this.reports++;
		this.softFailureLine = lineNo;
	}

	build(exitHint: number | null | undefined, isError: boolean | undefined, command?: string): Outcome {
		// The command names its runner even when the output was cut before the runner's summary.
		for (const [pattern, runner] of COMMAND_RUNNERS) if (command && pattern.test(command)) this.confirmRunner(runner);
		const exitCode = exitHint ?? this.statedExitCode;
		const failingIds = this.finalIds(exitCode !== 0);
		const { counts, suites, unlisted } = this.tallies.totals();
		const failedCount = (counts?.failed ?? 0) + (counts?.errors ?? 0);
		const terminalCrash =
			this.softFailureLine > this.lastCleanSummaryLine && exitCode !== 0 && this.softFailureLine > 0;
		const failed =
			this.hardFailure ||
			failingIds.length > 0 ||
			this.unrecordedIds > 0 ||
			failedCount > 0 ||
			terminalCrash ||
			(exitCode !== null && exitCode !== 0) ||
			isError === true;
		// With no exit status to trust, a clean summary is not enough: a failure-shaped line anywhere
		// (a coverage gate's `FAIL ...` before `300 passed`) makes the run a failure, and an error or
		// exception line leaves it undecided. A known exit status 0 says the command itself passed.
		const evidence =
			exitCode === null && this.shaped.failure > 0
				? "fail"
				: exitCode === null && (this.shaped.error > 0 || this.exceptions.length > 0)
					? "unknown"
					: null;
		const status =
			failed || evidence === "fail" ? "fail" : this.lastCleanSummaryLine > 0 && evidence === null ? "pass" : "unknown";
		const runner = this.runner ?? (exitCode !== null ? "exit-status" : null);
		return {
			runner,
			status,
			counts,
			failingIds,
			unrecordedFailingIds: this.unrecordedIds,
			failingIdMarks: this.idMarks.list(),
			...this.unmarkedIds(failingIds),
			exceptions: [...this.exceptions],
			unrecordedExceptions: this.unrecordedExceptions,
			locations: [...this.projectLocations, ...this.libraryLocations],
			summaryLines: [...this.summaryLines],
			exitCode,
			...(suites.length > 0 ? { suites } : {}),
			...(unlisted.suites > 0 ? { unlistedSuites: unlisted } : {}),
		};
	}

	/**
	 * The failing ids to report. An id whose runner was not confirmed is look-alike prose while another
	 * runner is known; with no runner known and no clean exit, an id on a failure-marked line is all
	 * there is, so it is reported (an unknown runner's failures are failures).
	 */
	private finalIds(mayHaveFailed: boolean): string[] {
		const knownRunner = [...this.confirmed].some((runner) => !UNSPECIFIC_RUNNERS.has(runner));
		const kept = this.ids.filter(
			(entry) =>
				entry.needs === undefined ||
				this.confirmed.has(entry.needs) ||
				(entry.marked === true && !knownRunner && mayHaveFailed),
		);
		const full = kept.filter((entry) => !entry.leaf);
		// Every tail of a full id at a title separator (` › `, ` > `) names the same test as a bare leaf.
		const tails = new Set<string>();
		for (const { id, covers } of full) {
			if (covers !== undefined && covers !== id) tails.add(covers);
			for (const separator of [" › ", " > "]) {
				for (let at = id.indexOf(separator); at >= 0; at = id.indexOf(separator, at + 1)) {
					tails.add(id.slice(at + separator.length));
				}
			}
		}
		const listed = kept.filter((entry) => !entry.leaf || !tails.has(entry.id));
		return [...listed.filter((entry) => !entry.alias), ...listed.filter((entry) => entry.alias)].map(
			(entry) => entry.id,
		);
	}
}

/**
 * The short names pytest prints over a whole id's traceback: the test's own name, and with its class
 * (`Class.test_a[1]` for `t.py::Class::test_a[1]`). None for an id without `::`.
 */
function shortNames(id: string): string[] {
	const parts = id.split("::");
	const names: string[] = [];
	for (let i = parts.length - 1; i >= 1; i--) names.push(parts.slice(i).join("."));
	return names;
}

/** The length of the ellipsis a message cut short ends with (`...` or `…`); 0 when none. */
function ellipsisLength(message: string): number {
	return message.endsWith("...") ? 3 : message.endsWith("\u2026") ? 1 : 0;
}
