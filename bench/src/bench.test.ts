import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { primeContextDeps } from "./arms/prime-context-binding.js";
import { type BenchmarkResults, runBenchmark, SMOKE } from "./bench.js";
import { readLabelledCorpus } from "./corpus/index.js";
import { CHART_FILE, writeReport } from "./report/index.js";

const fixtures = fileURLToPath(new URL("../../fixtures/", import.meta.url));
const casesDir = join(fixtures, "outputs");
const trajectoriesDir = join(fixtures, "trajectories");

describe("smoke benchmark on the repository fixtures", () => {
	let out: string;
	let results: BenchmarkResults;
	let files: string[];

	beforeAll(async () => {
		if (!existsSync(casesDir) || !existsSync(trajectoriesDir)) {
			throw new Error(`The fixtures are missing at ${fixtures}; the smoke benchmark needs them.`);
		}
		out = await mkdtemp(join(tmpdir(), "bench-smoke-"));
		results = await runBenchmark({ casesDir, trajectoriesDir, smoke: true, primeContext: primeContextDeps });
		files = await writeReport(results, out);
	}, 60_000);
	afterAll(() => rm(out, { recursive: true, force: true }));

	it("writes results.json, results.md and the chart", async () => {
		expect(files.map((file) => file.slice(out.length + 1)).sort()).toEqual(
			[CHART_FILE, "results.json", "results.md"].sort(),
		);
		const json = JSON.parse(await readFile(join(out, "results.json"), "utf8")) as BenchmarkResults;
		expect(json.corpora.cases.count).toBe(SMOKE.cases);
		expect(json.corpora.trajectories.count).toBe(SMOKE.trajectories);
		const markdown = await readFile(join(out, "results.md"), "utf8");
		const svg = await readFile(join(out, CHART_FILE), "utf8");
		expect(svg.startsWith("<svg")).toBe(true);
		for (const arm of results.labelled) {
			expect(markdown).toContain(`| ${arm.arm === "prime-context" ? "**prime-context**" : arm.arm} |`);
			expect(svg).toContain(`>${arm.arm} (`);
		}
	});

	it("shows the raw arm keeping every label at exactly the raw token count", async () => {
		const raw = results.labelled.find((arm) => arm.arm === "raw");
		const cases = (await readLabelledCorpus(casesDir)).filter((item) =>
			results.corpora.cases.names.includes(item.name),
		);
		expect(raw?.failingIds.recall).toBe(1);
		expect(raw?.ofRaw.facts.recall).toBe(1);
		expect(raw?.tokens.total).toBe(cases.reduce((sum, item) => sum + countTokens(item.text), 0));
		expect(raw?.bytes.total).toBe(results.corpora.cases.bytes);
		expect(raw?.falseGreens.count).toBe(0);
	});

	it("keeps every failing id in the prime-context views, including a capsule's", () => {
		const ours = results.labelled.find((arm) => arm.arm === "prime-context");
		expect(results.recovery.labelled.decisions["structured-capsule"]).toBeGreaterThan(0);
		expect(ours?.failingIds.total).toBeGreaterThan(0);
		expect(ours?.failingIds.kept).toBe(ours?.failingIds.total);
		expect(ours?.falseGreens.count).toBe(0);
	});

	it("reads every archived observation back byte for byte and finds every labelled fact by search", () => {
		const { labelled, trajectories } = results.recovery;
		expect(labelled.observations).toBe(SMOKE.cases);
		expect(trajectories.observations).toBe(results.corpora.trajectories.observations);
		for (const check of [labelled, trajectories]) {
			expect(check.mismatches).toEqual([]);
			expect(check.notArchived).toEqual([]);
			expect(check.byteExact).toBe(check.observations);
		}
		const search = labelled.search;
		expect(search.failingIds.missing.concat(search.errorTypes.missing, search.locations.missing)).toEqual([]);
	});

	it("replays the trajectory with masking cheaper than raw and prompts that include the observations", () => {
		const raw = results.trajectories.find((arm) => arm.arm === "raw");
		const masked = results.trajectories.find((arm) => arm.arm === "last-5-masking");
		expect(masked?.cumulativeObservationTokens).toBeLessThan(raw?.cumulativeObservationTokens ?? 0);
		for (const arm of results.trajectories) {
			expect(arm.observations).toBe(results.corpora.trajectories.observations);
			expect(arm.cumulativePromptTokens).toBeGreaterThan(arm.cumulativeObservationTokens);
		}
	});

	it("times the broker on each smoke size bucket", () => {
		expect(results.speed.buckets.map((bucket) => bucket.label)).toEqual(["1 KB", "100 KB", "1 MB"]);
		for (const bucket of results.speed.buckets) expect(bucket.p95Ms).toBeGreaterThanOrEqual(bucket.p50Ms);
	});
});
