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

/** What a refinement works from, given by the session at the time it runs. */
export interface RefinementInput {
	trajectory: string;
	task: string;
	signal?: AbortSignal;
}

/**
 * The continual harness of one session: its stores (opened once the session's folder is known),
 * the prompt section, refinements one at a time, rollback, and the automatic schedule.
 */
export class HarnessRuntime {
	private opened: Harness | undefined;
	private schedule: AutoRefineSchedule | undefined;
	private queue: Promise<unknown> = Promise.resolve();
	/** The section as last rendered: for the stores' signature, ranked for `rankedFor` (a `rankingKey`). */
	private section: { signature: string; rankedFor: string; text: string } | undefined;
	/** The session's recorded ranking, until the first section is rendered. */
	private recorded: HarnessIndexRecord | undefined;
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

	/** Run a refinement after any running one (one at a time per session). */
	refine(
		trigger: RefinementTrigger,
		input: RefinementInput,
		options: { instructions?: string; review?: boolean } = {},
	): Promise<RefineOutcome> {
		return this.serialize(async () => {
			const outcome = await runRefinement({
				harness: this.harness,
				trajectory: input.trajectory,
				task: input.task,
				trigger,
				instructions: options.instructions,
				review: options.review === true,
				model: { model: this.options.model(), apiKey: this.options.apiKey(), signal: input.signal },
			});
			this.schedule?.refined();
			return outcome;
		});
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
