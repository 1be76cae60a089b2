import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { BenchmarkResults } from "../bench.js";
import { retentionChart } from "./chart.js";
import { resultsMarkdown } from "./markdown.js";
import { OURS } from "./verdict.js";

export { retentionChart } from "./chart.js";
export { resultsMarkdown } from "./markdown.js";
export { losses, targets } from "./verdict.js";

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
