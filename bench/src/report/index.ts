import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { BenchmarkResults, SpeedOnlyResults, TrajectoriesOnlyResults } from "../bench.js";
import { retentionChart } from "./chart.js";
import { ageingMarkdown, billingTable, resultsMarkdown, speedMarkdown } from "./markdown.js";
import { OURS, speedTargets, trajectoryTargets } from "./verdict.js";

export { retentionChart } from "./chart.js";
export { ageingMarkdown, billingTable, resultsMarkdown, speedMarkdown } from "./markdown.js";
export { COST_CEILINGS, losses, speedTargets, targets, trajectoryTargets } from "./verdict.js";

export const CHART_FILE = "retention-vs-tokens.svg";

/** The chart: labelled-corpus tokens shown against failing ids kept, and against all facts kept. */
export function chartOf(results: BenchmarkResults): string {
	const points = (pick: (arm: BenchmarkResults["labelled"][number]) => number) =>
		results.labelled.map((arm) => ({
			name: arm.arm,
			tokens: arm.tokens.total,
			retention: pick(arm),
			highlight: arm.arm === OURS,
		}));
	return retentionChart(
		[
			{ title: "Failing test ids", yLabel: "failing ids kept", points: points((arm) => arm.ofRaw.failingIds.recall) },
			{
				title: "All labelled facts",
				yLabel: "ids, error types and locations kept",
				points: points((arm) => arm.ofRaw.facts.recall),
			},
		],
		`Labelled outputs (${results.corpora.cases.count} cases): what the model keeps vs tokens it reads`,
		"total tokens the model sees (o200k, log scale)",
	);
}

/** Writes `results.json`, `results.md` and the SVG chart into `outDir`; returns their paths. */
export async function writeReport(results: BenchmarkResults, outDir: string): Promise<string[]> {
	await mkdir(outDir, { recursive: true });
	const files = {
		json: join(outDir, "results.json"),
		md: join(outDir, "results.md"),
		svg: join(outDir, CHART_FILE),
	};
	await writeFile(files.json, `${JSON.stringify(results, null, "\t")}\n`);
	await writeFile(files.md, resultsMarkdown(results, CHART_FILE));
	await writeFile(files.svg, chartOf(results));
	return Object.values(files);
}

/** Writes `speed.json` and `speed.md` (a speed-only run) into `outDir`; returns their paths. */
export async function writeSpeedReport(results: SpeedOnlyResults, outDir: string): Promise<string[]> {
	await mkdir(outDir, { recursive: true });
	const files = { json: join(outDir, "speed.json"), md: join(outDir, "speed.md") };
	await writeFile(files.json, `${JSON.stringify(results, null, "\t")}\n`);
	const verdicts = speedTargets(results.speed).map((t) => `- ${t.target}: ${t.measured} (${t.met ? "met" : "missed"})`);
	const md = [
		`# Broker speed${results.smoke ? " (smoke)" : ""}`,
		"",
		`Generated ${results.generatedAt} with Node ${results.node} from ${results.corpus.count} labelled outputs (${results.corpus.bytes.toLocaleString("en-US")} bytes) of ${results.corpus.dir}.`,
		"",
		...speedMarkdown(results.speed),
		...verdicts,
		"",
	];
	await writeFile(files.md, md.join("\n"));
	return Object.values(files);
}

/** Writes `trajectories.json` and `trajectories.md` (a replay-only run) into `outDir`; returns their paths. */
export async function writeTrajectoriesReport(results: TrajectoriesOnlyResults, outDir: string): Promise<string[]> {
	await mkdir(outDir, { recursive: true });
	const files = { json: join(outDir, "trajectories.json"), md: join(outDir, "trajectories.md") };
	await writeFile(files.json, `${JSON.stringify(results, null, "\t")}\n`);
	const { corpus, recovery } = results;
	const verdicts = trajectoryTargets(results.trajectories, recovery).map(
		(t) => `- ${t.target}: ${t.measured} (${t.met ? "met" : "MISSED"})`,
	);
	const md = [
		`# Trajectory replay${results.smoke ? " (smoke)" : ""}`,
		"",
		`Generated ${results.generatedAt} with Node ${results.node}; tokens are ${results.tokenizer}. ${corpus.count} runs, ${corpus.observations.toLocaleString("en-US")} observations, ${corpus.bytes.toLocaleString("en-US")} bytes, from ${corpus.dir}.`,
		"",
		...billingTable(results.trajectories),
		"",
		...ageingMarkdown(results.trajectories),
		`Recovery: ${recovery.byteExact}/${recovery.observations} archived observations read back byte-exact (${recovery.notArchived.length} not archived).`,
		"",
		...verdicts,
		"",
	];
	await writeFile(files.md, md.join("\n"));
	return Object.values(files);
}
