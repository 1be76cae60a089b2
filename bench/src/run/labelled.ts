/** Runs every arm over a labelled-output corpus: sizes of the views and retention of the labels. */
import type { Arm, Observation } from "../arms/index.js";
import { PrimeContextArm } from "../arms/index.js";
import type { CaseMeta, LabelledCase } from "../corpus/index.js";
import { type CaseRetention, retentionOf } from "../measure/retention.js";
import { bytesOf, type Distribution, distribution, tokensOf } from "../measure/size.js";

export interface Recall {
	kept: number;
	total: number;
	/** kept / total, or 1 when there is nothing to keep. */
	recall: number;
}

export interface LabelledArmResult {
	arm: string;
	rule: string;
	bytes: Distribution;
	tokens: Distribution;
	failingIds: Recall;
	errorTypes: Recall;
	locations: Recall;
	/** All labelled facts together (ids, error types, locations). */
	facts: Recall;
	/**
	 * The same recalls over only the labels legible in the raw output: labels come from machine
	 * reports, and some (e.g. an error class jest's JSON names but the text never prints) are in no
	 * view at all. No arm can beat raw here; the targets are judged on these.
	 */
	ofRaw: { failingIds: Recall; errorTypes: Recall; locations: Recall; facts: Recall };
	countsShown: { shown: number; cases: number };
	exitStated: { shown: number; cases: number };
	falseGreens: { count: number; passShaped: number; failedCases: number; cases: string[] };
	viewsLargerThanInput: { count: number; cases: string[] };
	perCase: { name: string; bytes: number; tokens: number; retention: CaseRetention }[];
}

const recall = (kept: number, total: number): Recall => ({ kept, total, recall: total === 0 ? 1 : kept / total });

export function caseObservation(item: LabelledCase): Observation {
	return { tool: "bash", command: item.meta.command, exitCode: item.meta.exit_code, text: item.text };
}

export async function runLabelled(
	cases: LabelledCase[],
	arms: Arm[],
	progress: (message: string) => void = () => {},
): Promise<LabelledArmResult[]> {
	const rawMissing = cases.map((item) => retentionOf(item.text, item.meta).missing);
	const results: LabelledArmResult[] = [];
	for (const arm of arms.filter((candidate) => !candidate.trajectoriesOnly)) {
		const perCase: LabelledArmResult["perCase"] = [];
		for (const [index, item] of cases.entries()) {
			progress(`labelled ${arm.name} ${index + 1}/${cases.length} ${item.name}`);
			const observation = caseObservation(item);
			const view =
				arm instanceof PrimeContextArm
					? await arm.observeCase(item.name, observation, item.meta, rawMissing[index])
					: await (await arm.open(item.name)).view(observation);
			perCase.push({
				name: item.name,
				bytes: bytesOf(view),
				tokens: tokensOf(view),
				retention: retentionOf(view, item.meta),
			});
		}
		results.push(summarise(arm, cases, perCase, rawMissing));
	}
	return results;
}

function summarise(
	arm: Arm,
	cases: LabelledCase[],
	perCase: LabelledArmResult["perCase"],
	rawMissing: CaseRetention["missing"][],
): LabelledArmResult {
	const sum = (pick: (retention: CaseRetention) => { kept: number; total: number }) =>
		perCase.reduce(
			(acc, row) => ({ kept: acc.kept + pick(row.retention).kept, total: acc.total + pick(row.retention).total }),
			{ kept: 0, total: 0 },
		);
	const ids = sum((r) => r.failingIds);
	const types = sum((r) => r.errorTypes);
	const locations = sum((r) => r.locations);
	const withCounts = perCase.filter((row) => row.retention.countsShown !== null);
	const failed = perCase.filter((row) => row.retention.falseGreen !== null);
	const green = failed.filter((row) => row.retention.falseGreen);
	const ofRaw = (key: keyof CaseRetention["missing"], labels: (meta: CaseMeta) => string[]) => {
		let kept = 0;
		let total = 0;
		for (const [index, row] of perCase.entries()) {
			const notInRaw = new Set(rawMissing[index][key]);
			const missing = new Set(row.retention.missing[key]);
			for (const label of labels(cases[index].meta)) {
				if (notInRaw.has(label)) continue;
				total++;
				if (!missing.has(label)) kept++;
			}
		}
		return { kept, total };
	};
	const rawIds = ofRaw("failingIds", (meta) => meta.failing_ids);
	const rawTypes = ofRaw("errorTypes", (meta) => meta.error_types);
	const rawLocations = ofRaw("locations", (meta) => meta.locations);
	const larger = perCase.filter((row, index) => row.bytes > cases[index].bytes);
	return {
		arm: arm.name,
		rule: arm.rule,
		bytes: distribution(perCase.map((row) => row.bytes)),
		tokens: distribution(perCase.map((row) => row.tokens)),
		failingIds: recall(ids.kept, ids.total),
		errorTypes: recall(types.kept, types.total),
		locations: recall(locations.kept, locations.total),
		facts: recall(ids.kept + types.kept + locations.kept, ids.total + types.total + locations.total),
		ofRaw: {
			failingIds: recall(rawIds.kept, rawIds.total),
			errorTypes: recall(rawTypes.kept, rawTypes.total),
			locations: recall(rawLocations.kept, rawLocations.total),
			facts: recall(
				rawIds.kept + rawTypes.kept + rawLocations.kept,
				rawIds.total + rawTypes.total + rawLocations.total,
			),
		},
		countsShown: { shown: withCounts.filter((row) => row.retention.countsShown).length, cases: withCounts.length },
		exitStated: { shown: perCase.filter((row) => row.retention.exitStated).length, cases: perCase.length },
		falseGreens: {
			count: green.length,
			passShaped: green.filter((row) => row.retention.falseGreenPassShaped).length,
			failedCases: failed.length,
			cases: green.map((row) => row.name),
		},
		viewsLargerThanInput: { count: larger.length, cases: larger.map((row) => row.name) },
		perCase,
	};
}
