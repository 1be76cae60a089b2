/**
 * Replays real agent runs through every arm. Each provider call re-sends everything visible so
 * far (system prompt, task, every earlier assistant message and the arm's view of every earlier
 * observation), so a run's cumulative prompt tokens are the sum over its calls. Token counts are
 * summed per message (no per-message framing overhead, the same for every arm).
 */
import { type Arm, maskedStub, type Observation } from "../arms/index.js";
import type { Trajectory } from "../corpus/index.js";
import { billRun, type PromptMessage } from "../measure/billing.js";
import { bytesOf, type Distribution, distribution, tokensOf } from "../measure/size.js";

/**
 * Whether observation `index` is masked in a call that sees `observed` observations: sliding masking
 * hides all but the last `keep` (the boundary moves every call); block masking moves the boundary
 * only every `every` observations, so the prompt prefix stays the same between moves.
 */
export function isMasked(arm: Arm, index: number, observed: number): boolean {
	const mask = arm.mask;
	if (mask === undefined) return false;
	const beyond = Math.max(0, observed - mask.keep);
	const boundary = mask.every > 1 ? Math.floor(beyond / mask.every) * mask.every : beyond;
	return index < boundary;
}

export interface TrajectoryArmResult {
	arm: string;
	rule: string;
	runs: number;
	observations: number;
	/** Per observation, the view when first shown. */
	bytes: Distribution;
	tokens: Distribution;
	/** Sum over all runs of every call's prompt tokens. */
	cumulativePromptTokens: number;
	/** The observation part of that sum. */
	cumulativeObservationTokens: number;
	/** Per run cumulative prompt tokens. */
	perRunPromptTokens: Distribution;
	/** Of the cumulative prompt tokens, those in a prefix identical to the previous call's (cache reads). */
	cachedPromptTokens: number;
	/** Cache-aware cost of all runs, in input-price units (see `PRICE_RATIOS`). */
	cost: { anthropic: number; openai: number };
	/** Per run, its largest single prompt. */
	peakPromptTokens: Distribution;
	/** Every run's figures, in corpus order. */
	perRun: {
		id: string;
		calls: number;
		promptTokens: number;
		observationTokens: number;
		peakPromptTokens: number;
		cost: { anthropic: number; openai: number };
	}[];
	viewsLargerThanInput: number;
}

export function stepObservation(step: Trajectory["steps"][number]): Observation {
	return {
		tool: step.tool ?? "bash",
		command: step.command,
		exitCode: step.exitCode,
		text: step.observation,
		isError: step.isError,
	};
}

export async function runTrajectories(
	trajectories: Trajectory[],
	arms: Arm[],
	progress: (message: string) => void = () => {},
): Promise<TrajectoryArmResult[]> {
	const results: TrajectoryArmResult[] = [];
	for (const arm of arms) {
		const viewBytes: number[] = [];
		const viewTokens: number[] = [];
		const perRun: TrajectoryArmResult["perRun"] = [];
		let prompt = 0;
		let observationPart = 0;
		let cached = 0;
		let anthropic = 0;
		let openai = 0;
		const peaks: number[] = [];
		let larger = 0;
		for (const [index, trajectory] of trajectories.entries()) {
			progress(`trajectories ${arm.name} ${index + 1}/${trajectories.length} ${trajectory.id}`);
			const run = await arm.open(trajectory.id);
			const fixed = tokensOf(trajectory.system) + tokensOf(trajectory.task);
			const assistants = [...trajectory.steps.map((step) => step.assistant), ...trajectory.trailing].map(tokensOf);
			const seen: number[] = [];
			const stubs: number[] = [];
			for (const step of trajectory.steps) {
				const view = await run.view(stepObservation(step));
				const tokens = tokensOf(view);
				const bytes = bytesOf(view);
				if (bytes > bytesOf(step.observation)) larger++;
				viewBytes.push(bytes);
				viewTokens.push(tokens);
				seen.push(tokens);
				stubs.push(arm.mask === undefined ? tokens : tokensOf(maskedStub(view)));
			}
			// Call k produces assistant message k and sees observations 0..k-1.
			const calls: PromptMessage[][] = [];
			let runObservations = 0;
			for (let call = 0; call < assistants.length; call++) {
				const prompt: PromptMessage[] = [{ key: "fixed", tokens: fixed }];
				const observed = Math.min(call, seen.length);
				for (let i = 0; i < call; i++) {
					prompt.push({ key: `a${i}`, tokens: assistants[i] });
					if (i >= seen.length) continue;
					const hidden = isMasked(arm, i, observed);
					prompt.push({ key: hidden ? `m${i}` : `v${i}`, tokens: hidden ? stubs[i] : seen[i] });
					runObservations += hidden ? stubs[i] : seen[i];
				}
				calls.push(prompt);
			}
			const bill = billRun(calls);
			prompt += bill.inputTokens;
			observationPart += runObservations;
			cached += bill.cachedTokens;
			anthropic += bill.cost.anthropic;
			openai += bill.cost.openai;
			peaks.push(bill.peakPromptTokens);
			perRun.push({
				id: trajectory.id,
				calls: assistants.length,
				promptTokens: bill.inputTokens,
				observationTokens: runObservations,
				peakPromptTokens: bill.peakPromptTokens,
				cost: bill.cost,
			});
		}
		results.push({
			arm: arm.name,
			rule: arm.rule,
			runs: trajectories.length,
			observations: viewTokens.length,
			bytes: distribution(viewBytes),
			tokens: distribution(viewTokens),
			cumulativePromptTokens: prompt,
			cumulativeObservationTokens: observationPart,
			perRunPromptTokens: distribution(perRun.map((run) => run.promptTokens)),
			cachedPromptTokens: cached,
			cost: { anthropic, openai },
			peakPromptTokens: distribution(peaks),
			perRun,
			viewsLargerThanInput: larger,
		});
	}
	return results;
}
