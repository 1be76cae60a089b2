/**
 * Replays real agent runs through every arm. Each provider call re-sends everything visible so
 * far (system prompt, task, every earlier assistant message and the arm's view of every earlier
 * observation), so a run's cumulative prompt tokens are the sum over its calls. Token counts are
 * summed per message (no per-message framing overhead, the same for every arm).
 */
import { type Arm, maskedStub, type Observation } from "../arms/index.js";
import type { Trajectory } from "../corpus/index.js";
import { bytesOf, type Distribution, distribution, tokensOf } from "../measure/size.js";

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
	/** Every run's figures, in corpus order. */
	perRun: { id: string; calls: number; promptTokens: number; observationTokens: number }[];
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
				stubs.push(arm.maskAfter === undefined ? tokens : tokensOf(maskedStub(view)));
			}
			// Call k produces assistant message k and sees observations 0..k-1.
			let runPrompt = 0;
			let runObservations = 0;
			for (let call = 0; call < assistants.length; call++) {
				let visible = 0;
				let history = fixed;
				for (let i = 0; i < call; i++) {
					history += assistants[i];
					if (i >= seen.length) continue;
					const masked = arm.maskAfter !== undefined && i < Math.min(call, seen.length) - arm.maskAfter;
					visible += masked ? stubs[i] : seen[i];
				}
				runPrompt += history + visible;
				runObservations += visible;
			}
			prompt += runPrompt;
			observationPart += runObservations;
			perRun.push({
				id: trajectory.id,
				calls: assistants.length,
				promptTokens: runPrompt,
				observationTokens: runObservations,
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
			perRun,
			viewsLargerThanInput: larger,
		});
	}
	return results;
}
