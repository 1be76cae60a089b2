/**
 * The continual harness inside Prime Agent, as a built-in extension: the harness section after
 * the base system prompt on every provider call (taken at each run's start and after a compaction),
 * `/refine` and `/harness`, `await refine.run()` from the kernel, and the automatic refinement
 * (every 25 assistant turns and after a compaction, 20-minute cooldown, root sessions only), which
 * runs in the background and stops at the session's abort and end. The harness itself lives in
 * `src/harness/`.
 */
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ExtensionAPI, ExtensionFactory } from "../../extensions/api.js";
import {
	HARNESS_FILE,
	HARNESS_INDEX_ENTRY,
	type HarnessDirs,
	type HarnessIndexRecord,
	type HarnessRuntime,
	latestUserText,
	REFINEMENTS_FILE,
	type RefinementTrigger,
	type RefineOutcome,
	recordedIndex,
	trajectoryText,
} from "../../harness/index.js";
import { ensurePrivateDir } from "../../home/index.js";
import { harnessCommand, refineCommand } from "./commands.js";

export const HARNESS_EXTENSION_NAME = "builtin:harness";
/** Host requests of the kernel's `refine` handle. */
export const HARNESS_REQUESTS = { refine: "harness.refine", rollback: "harness.rollback" } as const;
/** Custom entry recording each refinement on the branch (never sent to the model). */
export const REFINEMENT_ENTRY = "harness_refinement";

export function harnessExtension(runtime: HarnessRuntime): ExtensionFactory {
	return (api: ExtensionAPI) => {
		/** What the index ranks against: the newest user prompt. */
		let task = "";
		/** Why the ranking recorded in the session could not be used, until the user is told. */
		let unusableRecord: string | undefined;
		const input = () => ({ trajectory: trajectoryText(api.getBranch()), task });
		const noted = (outcome: RefineOutcome): RefineOutcome => {
			const { id, trigger, status, summary, rollbackOf } = outcome.refinement;
			api.appendEntry(REFINEMENT_ENTRY, { id, trigger, status, summary, ...(rollbackOf ? { rollbackOf } : {}) });
			return outcome;
		};
		/** Automatic refinements under way, with the recording of their outcome (the session's end waits for it). */
		const background = new Set<Promise<void>>();
		/** Started, never awaited: the turn (and the user's next prompt) goes on while it runs. */
		const automatic = (trigger: RefinementTrigger): void => {
			const work = runtime.refineInBackground(trigger, input()).then(
				(outcome) => {
					if (!outcome) return;
					noted(outcome);
					if (outcome.refinement.status === "failed")
						api.warn(`Automatic refinement ${outcome.refinement.id} failed: ${outcome.refinement.summary}`);
				},
				(error) => api.warn(`Automatic refinement failed: ${(error as Error).message}`),
			);
			background.add(work);
			void work.finally(() => background.delete(work));
		};

		api.on("session_start", (event) => {
			const harness = runtime.open(join(dirname(event.sessionFile), event.sessionId));
			task = latestUserText(api.getBranch());
			// The ranking the session recorded (resume, fork) is kept while the harness is unchanged.
			const recorded = recordedIndex(api.getBranch());
			unusableRecord = recorded.problem;
			runtime.restoreRanking(recorded.record);
			api.addKernelStartup(kernelStartup(harness.dirs), { names: ["refine"] });
		});
		// A fork starts with its parent's session store and refinement log (so its ids can be rolled back).
		api.on("session_fork", (event) => {
			const parent = parentHarnessDir(event.fromSessionFile);
			if (!parent) return;
			for (const name of [HARNESS_FILE, REFINEMENTS_FILE]) {
				const target = join(runtime.harness.dirs.local, name);
				if (existsSync(join(parent, name)) && !existsSync(target)) {
					ensurePrivateDir(runtime.harness.dirs.local);
					copyFileSync(join(parent, name), target);
				}
			}
		});
		// A woken run (a notice, a continuation) works on the task of the last prompt.
		api.on("before_agent_start", (event) => {
			if (!event.woken) task = event.prompt;
		});
		/** Stores the user was told cannot be read (each problem once; the model sees it in the index). */
		const warned = new Set<string>();
		/** A ranking not yet in the session file (its write failed: tried again with the next call). */
		let unrecorded: HarnessIndexRecord | undefined;
		const recordRanking = (record: HarnessIndexRecord) => {
			try {
				api.appendEntry(HARNESS_INDEX_ENTRY, record);
				unrecorded = undefined;
			} catch (error) {
				// The call goes on with the section; only a resume before the record lands would rank again.
				// (`warned` also holds this entry's name, so the user is told once.)
				if (!warned.has(HARNESS_INDEX_ENTRY))
					api.warn(
						`The harness index's ranking could not be recorded in the session (${(error as Error).message}); it is tried again with the next call.`,
					);
				warned.add(HARNESS_INDEX_ENTRY);
			}
		};
		// The section is taken at a run's start and after a compaction only, so the calls of one run share
		// one system prompt (the provider's cache) whatever changes the harness meanwhile.
		api.on("turn_start", (event) => {
			if (event.turnIndex === 0) runtime.markBoundary();
		});
		api.on("system_prompt", () => {
			if (!runtime.isOpen) return undefined;
			// Said with the first call (the user hears it then; at start-up nothing listens yet).
			if (unusableRecord) api.warn(unusableRecord);
			unusableRecord = undefined;
			const { text, record } = runtime.sectionForCall(task);
			if (record) unrecorded = record;
			if (unrecorded) recordRanking(unrecorded);
			for (const problem of runtime.harness.readable().problems) {
				if (!warned.has(problem)) api.warn(problem);
				warned.add(problem);
			}
			return { append: text };
		});
		api.on("turn_end", (event) => {
			// A turn the user stopped starts nothing.
			const message = event.message;
			if (message.role === "assistant" && message.stopReason !== "aborted" && runtime.dueAfterTurn())
				automatic("auto-turns");
		});
		api.on("compact", () => {
			runtime.markBoundary();
			if (runtime.dueAfterCompaction()) automatic("auto-compaction");
		});
		api.on("session_abort", () => runtime.stopRefinements());
		api.on("session_shutdown", async () => {
			await runtime.close();
			await Promise.all(background);
		});

		api.onHostRequest(HARNESS_REQUESTS.refine, async (payload) => {
			const instructions = payload.instructions;
			if (instructions !== undefined && instructions !== null && typeof instructions !== "string")
				throw new Error("refine.run(instructions): instructions must be a string or None.");
			const outcome = noted(await runtime.refine("kernel", input(), { instructions: instructions || undefined }));
			return { id: outcome.refinement.id, refinement_status: outcome.refinement.status, report: outcome.report };
		});
		api.onHostRequest(HARNESS_REQUESTS.rollback, async (payload) => {
			if (typeof payload.id !== "string") throw new Error("refine.rollback(id): id must be a string such as ref_0001.");
			const outcome = noted(await runtime.rollback(payload.id));
			return { id: outcome.refinement.id, refinement_status: outcome.refinement.status, report: outcome.report };
		});

		api.registerCommand("refine", {
			description: "refine the harness from this session: /refine [instructions], /refine list, /refine rollback <id>",
			arguments: ["list", "rollback"],
			handler: (args) => refineCommand(args, runtime, () => input(), noted),
		});
		api.registerCommand("harness", {
			description: "browse the continual harness: /harness [list [kind]], /harness show [kind] <name>",
			arguments: ["list", "show"],
			handler: (args) => harnessCommand(args, runtime),
		});
	};
}

/** The session folder's `harness/` of the session in `sessionFile` (its id is in the header line). */
function parentHarnessDir(sessionFile: string): string | undefined {
	try {
		const header = JSON.parse(readFileSync(sessionFile, "utf8").split("\n", 1)[0] ?? "") as { id?: unknown };
		return typeof header.id === "string" ? join(dirname(sessionFile), header.id, "harness") : undefined;
	} catch {
		return undefined;
	}
}

/** Python run in every kernel: point the kernel's harness at this session's stores, define `refine`. */
function kernelStartup(dirs: HarnessDirs): string {
	return [
		"from prime_agent_runtime import harness as _prime_harness",
		`_prime_harness.configure(local_dir=${JSON.stringify(dirs.local)}, global_dir=${JSON.stringify(dirs.global)})`,
		"from prime_agent_runtime.refine import refine",
		"del _prime_harness",
		"",
	].join("\n");
}
