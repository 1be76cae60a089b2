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

/** The chart: labelled-corpus facts kept against total tokens shown, one point per arm. */
export function chartOf(results: BenchmarkResults): string {
	return retentionChart(
		results.labelled.map((arm) => ({
			name: arm.arm,
			tokens: arm.tokens.total,
			retention: arm.ofRaw.facts.recall,
			highlight: arm.arm === OURS,
		})),
		`Labelled outputs (${results.corpora.cases.count} cases): facts kept vs tokens shown`,
		"labelled facts kept (failing ids, error types, locations)",
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
