/**
 * Replays real agent runs through every arm. Each provider call re-sends everything visible so
 * far (system prompt, task, every earlier assistant message and the arm's view of every earlier
 * observation), so a run's cumulative prompt tokens are the sum over its calls. Token counts are
 * summed per message (no per-message framing overhead, the same for every arm).
 */
import { DEFAULT_CONFIG } from "prime-agent-context";
import { type Arm, maskedStub, type Observation } from "../arms/index.js";
import type { Trajectory } from "../corpus/index.js";
import { billRun, type PromptMessage } from "../measure/billing.js";
import { bytesOf, tokensOf } from "../measure/size.js";
import type { AgeableObservation } from "./ageing.js";
import { AgeingReplays } from "./ageing-replays.js";
import { observationTokensOf, Tally, type TrajectoryArmResult } from "./tally.js";

export type { AgeingFigures } from "./ageing-replays.js";
export type { TrajectoryArmResult } from "./tally.js";

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

export function stepObservation(step: Trajectory["steps"][number]): Observation {
	return {
		tool: step.tool ?? "bash",
		command: step.command,
		exitCode: step.exitCode,
		text: step.observation,
		isError: step.isError,
	};
}

/** Suffix of the row of an ageing arm's broker alone. */
export const NO_AGEING = "-no-ageing";

export async function runTrajectories(
	trajectories: Trajectory[],
	arms: Arm[],
	progress: (message: string) => void = () => {},
	window: number = DEFAULT_CONFIG.ageingWindow,
): Promise<TrajectoryArmResult[]> {
	const results: TrajectoryArmResult[] = [];
	for (const arm of arms) {
		const plain = new Tally();
		let aged: AgeingReplays | undefined;
		for (const [index, trajectory] of trajectories.entries()) {
			progress(`trajectories ${arm.name} ${index + 1}/${trajectories.length} ${trajectory.id}`);
			const run = await arm.open(trajectory.id);
			const fixed = tokensOf(trajectory.system) + tokensOf(trajectory.task);
			const assistants = [...trajectory.steps.map((step) => step.assistant), ...trajectory.trailing].map(tokensOf);
			const seen: number[] = [];
			const stubs: number[] = [];
			const ageable: AgeableObservation[] = [];
			const stubTexts: (string | null)[] = [];
			for (const step of trajectory.steps) {
				const observation = stepObservation(step);
				const archived = run.ageing ? await run.ageing.observe(observation) : null;
				const view = archived ? archived.text : await run.view(observation);
				const tokens = tokensOf(view);
				plain.view(bytesOf(view), tokens, bytesOf(view) > bytesOf(step.observation));
				seen.push(tokens);
				stubs.push(arm.mask === undefined ? tokens : tokensOf(maskedStub(view)));
				if (archived) {
					stubTexts.push(archived.stub);
					ageable.push({
						tokens,
						stubTokens: archived.stub === null ? null : tokensOf(archived.stub),
						testCommand: archived.headline?.startsWith("TEST_RESULT") ? step.command : null,
						command: step.command,
					});
				}
			}
			// Call k produces assistant message k and sees observations 0..k-1.
			const calls: PromptMessage[][] = [];
			for (let call = 0; call < assistants.length; call++) {
				const prompt: PromptMessage[] = [{ key: "fixed", tokens: fixed }];
				const observed = Math.min(call, seen.length);
				for (let i = 0; i < call; i++) {
					prompt.push({ key: `a${i}`, tokens: assistants[i] });
					if (i >= seen.length) continue;
					const hidden = isMasked(arm, i, observed);
					prompt.push({ key: hidden ? `m${i}` : `v${i}`, tokens: hidden ? stubs[i] : seen[i] });
				}
				calls.push(prompt);
			}
			const bill = billRun(calls);
			plain.run(trajectory.id, assistants.length, bill, observationTokensOf(calls), bill.cost);
			if (!run.ageing) continue;
			aged ??= new AgeingReplays(window);
			await aged.add({
				trajectory,
				fixedTokens: fixed,
				assistantTokens: assistants,
				observations: ageable,
				stubs: stubTexts,
				archive: run.ageing,
			});
		}
		const base = plain.result(arm, trajectories.length);
		if (!aged) {
			results.push(base);
			continue;
		}
		results.push({ ...base, arm: `${arm.name}${NO_AGEING}`, rule: `${arm.rule}; no ageing` });
		results.push(aged.result(arm, base));
	}
	return results;
}
