import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { BenchmarkResults, SpeedOnlyResults } from "../bench.js";
import { retentionChart } from "./chart.js";
import { resultsMarkdown, speedMarkdown } from "./markdown.js";
import { OURS, speedTargets } from "./verdict.js";

export { retentionChart } from "./chart.js";
export { resultsMarkdown, speedMarkdown } from "./markdown.js";
export { losses, speedTargets, targets } from "./verdict.js";

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
