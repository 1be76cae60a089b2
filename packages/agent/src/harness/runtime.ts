import { join } from "node:path";
import type { Api, Model } from "@mariozechner/pi-ai";
import { AutoRefineSchedule } from "./auto-refine.js";
import { checkName, HarnessError } from "./entries.js";
import { Harness } from "./harness.js";
import { type HarnessIndexRecord, indexRecord, sectionHash } from "./index-record.js";
import { rankingKey, renderHarnessSection } from "./prompt-index.js";
import { type RefineOutcome, rollbackRefinement, runRefinement } from "./refine.js";
import type { RefinementTrigger } from "./types.js";

/** What the harness needs from the session that hosts it. */
export interface HarnessRuntimeOptions {
	/** The agent home; the global store is its `harness/` folder. */
	agentHome: string;
	/** Depth of the session (the root is 0): sub-agents never refine automatically. */
	depth: number;
	/** The session's current model and key (refinement calls use them). */
	model(): Model<Api>;
	apiKey(): string;
	/** `"harness": {"autoRefine": false}` in settings.json turns the automatic path off. */
	autoRefine?: boolean;
	now?: () => number;
}

/** What a refinement works from, taken by the session when the refinement is asked for. */
export interface RefinementInput {
	trajectory: string;
	task: string;
}

/**
 * The continual harness of one session: its stores (opened once the session's folder is known),
 * the prompt section, refinements one at a time, rollback, and the automatic schedule.
 *
 * Refinements never hold the session up: the automatic one runs in the background
 * (`refineInBackground`), every one runs under a stop signal that `stopRefinements()` (the user's
 * Ctrl-C, Esc or SIGTERM) and `close()` (the session's end) abort at once, and one asked for before
 * a stop but not yet started never starts. Their model calls are the only slow part; edits are
 * applied under the stores' lock after the last call, so a stop never leaves a store half written.
 */
export class HarnessRuntime {
	private opened: Harness | undefined;
	private schedule: AutoRefineSchedule | undefined;
	private queue: Promise<unknown> = Promise.resolve();
	/** The section as last rendered: for the stores' signature, ranked for `rankedFor` (a `rankingKey`). */
	private section: { signature: string; rankedFor: string; text: string } | undefined;
	/** The session's recorded ranking, until the first section is rendered. */
	private recorded: HarnessIndexRecord | undefined;
	/** The section provider calls get: taken at the last boundary (see `sectionForCall`). */
	private taken: string | undefined;
	private atBoundary = true;
	/** What refinements run under: aborted by `stopRefinements()` (then replaced) and by `close()`. */
	private stop = new AbortController();
	private closed = false;
	private readonly now: () => number;

	constructor(readonly options: HarnessRuntimeOptions) {
		this.now = options.now ?? Date.now;
	}

	/** Open the stores: the local one in `<artifactDir>/harness/`, the global one in `<agentHome>/harness/`. */
	open(artifactDir: string): Harness {
		const harness = new Harness(
			{ local: join(artifactDir, "harness"), global: join(this.options.agentHome, "harness") },
			this.now,
		);
		this.opened = harness;
		let last: number | undefined;
		try {
			const at = harness.refinements().at(-1)?.at;
			last = at ? Date.parse(at) : undefined;
		} catch {
			// A damaged log is reported when it is read for the prompt or a command.
		}
		this.schedule = new AutoRefineSchedule({
			enabled: this.options.depth === 0 && this.options.autoRefine !== false,
			now: this.now,
			lastRefinementAt: last,
		});
		return harness;
	}

	get harness(): Harness {
		if (!this.opened) throw new HarnessError("the harness opens with the session; try again once it has started.");
		return this.opened;
	}

	get isOpen(): boolean {
		return this.opened !== undefined;
	}

	/**
	 * Start from the ranking a session recorded (resume, fork): the first section is rendered for it
	 * and kept when it hashes as recorded, i.e. when the harness has not changed since.
	 */
	restoreRanking(record: HarnessIndexRecord | undefined): void {
		this.recorded = record;
		this.section = undefined;
	}

	/**
	 * The `# Continual Harness State` section for the next provider call. It changes only when the
	 * harness does: a new task alone keeps the ranking it was rendered with (a changed system prompt
	 * costs the provider's cache of the whole conversation), as does a write the index does not show
	 * (a use counted, a rejected refinement), and so does a resume that finds the harness as its
	 * record says. A real change ranks again for the newest task; `ranked` is then the record for
	 * the session to keep (the ranking is the session's state), when there is an order to keep: a
	 * kind with two entries or more.
	 */
	promptSection(task: string): { text: string; ranked?: HarnessIndexRecord } {
		const harness = this.harness;
		const signature = harness.signature();
		const recorded = this.recorded;
		this.recorded = undefined;
		if (!this.section && recorded) {
			const text = renderHarnessSection(harness, recorded.rankedFor);
			if (sectionHash(text) === recorded.sha256) {
				this.section = { signature, rankedFor: recorded.rankedFor, text };
				return { text };
			}
		}
		const section = this.section;
		if (section?.signature === signature) return { text: section.text };
		if (section && renderHarnessSection(harness, section.rankedFor) === section.text) {
			this.section = { ...section, signature };
			return { text: section.text };
		}
		const rankedFor = rankingKey(task);
		const text = renderHarnessSection(harness, rankedFor);
		this.section = { signature, rankedFor, text };
		// With at most one entry of each kind every task gives this text: there is no ranking to keep.
		return ordersEntries(harness) ? { text, ranked: indexRecord(rankedFor, text) } : { text };
	}

	/**
	 * A boundary where the system prompt may change: a run starts, or its context was compacted.
	 * The next `sectionForCall` takes the section afresh.
	 */
	markBoundary(): void {
		this.atBoundary = true;
	}

	/**
	 * The section for this provider call: the one taken at the last boundary. A harness change
	 * during a run (a background refinement that finishes, a cell's write) reaches the model from the
	 * next boundary on, never between two calls of one run. `record`: what the session records for
	 * this call, when it ranks the index anew or takes a section other than the previous calls' (the
	 * boundary: the system prompt changes here).
	 */
	sectionForCall(task: string): { text: string; record?: HarnessIndexRecord } {
		if (!this.atBoundary && this.taken !== undefined) return { text: this.taken };
		const { text, ranked } = this.promptSection(task);
		const changed = this.taken !== undefined && text !== this.taken;
		this.taken = text;
		this.atBoundary = false;
		const record = ranked ?? (changed && this.section ? indexRecord(this.section.rankedFor, text) : undefined);
		return record ? { text, record } : { text };
	}

	/**
	 * A refinement the user asked for (`/refine`, `refine.run()`), after any running one (one at a
	 * time per session). A stop during its model calls ends it as `stopped`; a stop before it
	 * started, or the session closing, is a `HarnessError`.
	 */
	async refine(
		trigger: RefinementTrigger,
		input: RefinementInput,
		options: { instructions?: string; review?: boolean } = {},
	): Promise<RefineOutcome> {
		if (this.closed) throw new HarnessError("the session is closing, so no refinement starts now.");
		const outcome = await this.enqueue(trigger, input, options);
		if (!outcome)
			throw new HarnessError(
				"the session was stopped before this refinement started; nothing was changed. Ask for it again.",
			);
		return outcome;
	}

	/**
	 * The automatic refinement (review first): queued after any running one, and not waited for by
	 * whoever asked. Resolves with its outcome, or undefined when it never started (the session was
	 * stopped since it was asked for, or is closing).
	 */
	refineInBackground(trigger: RefinementTrigger, input: RefinementInput): Promise<RefineOutcome | undefined> {
		if (this.closed) return Promise.resolve(undefined);
		return this.enqueue(trigger, input, { review: true });
	}

	/**
	 * The user asked the session to stop (Ctrl-C, Esc, SIGTERM): the running refinement's model call
	 * is aborted now, and those asked for before are dropped. Later ones run as usual.
	 */
	stopRefinements(): void {
		this.stop.abort();
		if (!this.closed) this.stop = new AbortController();
	}

	/** The session ends: stop every refinement, start none from now on; resolves once the running one has been recorded. */
	async close(): Promise<void> {
		this.closed = true;
		this.stop.abort();
		await this.queue;
	}

	rollback(id: string): Promise<RefineOutcome> {
		return this.serialize(async () => rollbackRefinement(this.harness, id.trim()));
	}

	/** An assistant turn ended: the automatic trigger, when due (a root session only). */
	dueAfterTurn(): boolean {
		return this.schedule?.turnEnded() ?? false;
	}

	dueAfterCompaction(): boolean {
		return this.schedule?.compacted() ?? false;
	}

	/** The text of sub-agent spec `name` for `rlm(spec=name)`, counted as a use. */
	subagentSpec(name: unknown): string {
		return this.harness.use("subagent", checkName(name)).text;
	}

	private enqueue(
		trigger: RefinementTrigger,
		input: RefinementInput,
		options: { instructions?: string; review?: boolean },
	): Promise<RefineOutcome | undefined> {
		const stop = this.stop.signal;
		return this.serialize(async () => {
			if (stop.aborted) return undefined;
			const outcome = await runRefinement({
				harness: this.harness,
				trajectory: input.trajectory,
				task: input.task,
				trigger,
				instructions: options.instructions,
				review: options.review === true,
				model: { model: this.options.model(), apiKey: this.options.apiKey(), signal: stop },
			});
			this.schedule?.refined();
			return outcome;
		});
	}

	private serialize<T>(work: () => Promise<T>): Promise<T> {
		const run = this.queue.then(work, work);
		this.queue = run.catch(() => undefined);
		return run;
	}
}

/** Some kind holds two entries or more, so the task decides their order (and which ones show). */
function ordersEntries(harness: Harness): boolean {
	const kinds = harness.readable().entries.map((entry) => entry.kind);
	return kinds.some((kind, index) => kinds.indexOf(kind) !== index);
}
