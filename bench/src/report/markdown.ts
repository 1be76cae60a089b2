/** `results.md`: the figures as tables. */
import type { BenchmarkResults } from "../bench.js";
import type { SpeedResult } from "../run/speed.js";
import type { TrajectoryArmResult } from "../run/trajectories.js";
import { losses, OURS, targets } from "./verdict.js";

const int = (value: number) => Math.round(value).toLocaleString("en-US");
const pct = (value: number) => `${(value * 100).toFixed(1)}%`;
/** "96.0% (24/25)" */
const recall = (r: { recall: number; kept: number; total: number }) => `${pct(r.recall)} (${r.kept}/${r.total})`;
const row = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
/** A table's header row and its separator. */
const header = (cells: string[]) => [row(cells), row(cells.map(() => "---"))];
const bold = (name: string, text: string) => (name === OURS ? `**${text}**` : text);

export function resultsMarkdown(results: BenchmarkResults, chartFile: string): string {
	const { cases, trajectories } = results.corpora;
	const lines: string[] = [
		`# Offline benchmark${results.smoke ? " (smoke)" : ""}`,
		"",
		`Generated ${results.generatedAt} with Node ${results.node}; tokens are ${results.tokenizer}.`,
		`Labelled outputs: ${cases.count} cases, ${int(cases.bytes)} bytes. Trajectories: ${trajectories.count} runs, ${int(trajectories.observations)} observations, ${int(trajectories.bytes)} bytes.`,
		`Prime Context config: \`${JSON.stringify(results.config)}\`.`,
		"",
		`![retention against tokens](${chartFile})`,
		"",
		"## Labelled outputs: size and retention",
		"",
		...header([
			"arm",
			"tokens total",
			"tokens/obs median",
			"p90",
			"max",
			"bytes total",
			"failing ids",
			"error types",
			"locations",
			"counts shown",
			"exit code stated",
			"false greens",
			"views > input",
		]),
	];
	for (const arm of results.labelled) {
		lines.push(
			row([
				bold(arm.arm, arm.arm),
				bold(arm.arm, int(arm.tokens.total)),
				int(arm.tokens.median),
				int(arm.tokens.p90),
				int(arm.tokens.max),
				int(arm.bytes.total),
				recall(arm.ofRaw.failingIds),
				recall(arm.ofRaw.errorTypes),
				recall(arm.ofRaw.locations),
				`${arm.countsShown.shown}/${arm.countsShown.cases}`,
				`${arm.exitStated.shown}/${arm.exitStated.cases}`,
				`${arm.falseGreens.count}/${arm.falseGreens.failedCases}${arm.falseGreens.passShaped ? ` (${arm.falseGreens.passShaped} pass-shaped)` : ""}`,
				String(arm.viewsLargerThanInput.count),
			]),
		);
	}
	lines.push(
		"",
		notLegible(results),
		"",
		"A label counts as kept when its exact string is legible in the view (as written, or with ANSI escapes removed and XML entities decoded); a location also counts in the shape its tool prints it (traceback frame, `path(line,col)`, ESLint block, diff hunk) or in a listing row: a line of `file:line` or `file:line,line,...` entries (one file, its lines comma-separated; the location counts only when the list holds that exact line), relative to a directory stated just above (`under <dir>/):`) or as written. A false green is a view of a failed run that shows no failure at all: none of its failing ids or error types and no failure-shaped line (FAILED, `N failed`, an error line, a traceback, a panic, `not ok`, a non-zero exit). Counts shown: the labelled failed/errors/passed numbers appear on result-shaped lines (the raw row is the ceiling of this detector). Exit code stated: the view names the exit code (hosts also pass it beside the output).",
		"",
		"## Trajectory replay",
		"",
		...header([
			"arm",
			"obs tokens median",
			"p90",
			"max",
			"obs tokens (each once)",
			"cumulative observation tokens",
			"cumulative prompt tokens",
			"prompt tokens per run (median)",
			"views > input",
		]),
	);
	for (const arm of results.trajectories) {
		lines.push(
			row([
				bold(arm.arm, arm.arm),
				int(arm.tokens.median),
				int(arm.tokens.p90),
				int(arm.tokens.max),
				int(arm.tokens.total),
				bold(arm.arm, int(arm.cumulativeObservationTokens)),
				int(arm.cumulativePromptTokens),
				int(arm.perRunPromptTokens.median),
				String(arm.viewsLargerThanInput),
			]),
		);
	}
	lines.push(
		"",
		"Each provider call re-sends the system prompt, the task, every earlier assistant message and the arm's view of every earlier observation; cumulative figures sum over all calls of all runs.",
		"",
		"## Trajectory replay: what a provider bills",
		"",
		...billingTable(results.trajectories),
		"",
		...ageingMarkdown(results.trajectories),
		"Cumulative input tokens are every call's whole prompt. With prompt caching, the part of a prompt identical to the previous call's (message by message from the start) is a cache read and the rest is new input: at Anthropic's ratios a read costs 0.1x and a cache write 1.25x the input price; at OpenAI's, cached input costs 0.5x (the highest published ratio) and new input 1x. Costs are in units of the plain input price per token, summed over all runs; output tokens are the same for every arm and left out. Masking an old observation rewrites a message in the middle of the prompt, so everything after it is billed as new again. The peak prompt is a run's largest single prompt, which is what forces compaction.",
		"",
		"## Recovery (prime-context)",
		"",
		...header([
			"corpus",
			"observations",
			"byte-exact read-back",
			"not archived",
			"pass-through",
			"capsule",
			"delta",
			"input bytes",
			"archive bytes on disk",
		]),
	);
	for (const [corpus, check] of Object.entries(results.recovery)) {
		lines.push(
			row([
				corpus,
				check.observations,
				`${check.byteExact}/${check.observations}`,
				check.notArchived.length,
				check.decisions["pass-through"],
				check.decisions["structured-capsule"],
				check.decisions["delta-capsule"],
				int(check.inputBytes),
				int(check.archiveDiskBytes),
			]),
		);
	}
	const search = results.recovery.labelled.search;
	lines.push(
		"",
		`\`search\` on the archive finds ${search.failingIds.found}/${search.failingIds.total} failing ids, ${search.errorTypes.found}/${search.errorTypes.total} error types and ${search.locations.found}/${search.locations.total} locations.`,
		"",
		...speedMarkdown(results.speed),
		"## Targets",
		"",
		row(["target", "measured", "met"]),
		row(["---", "---", "---"]),
		...targets(results).map((t) => row([t.target, t.measured, t.met ? "yes" : "**no**"])),
		"",
		"## Where prime-context loses",
		"",
	);
	const lost = losses(results);
	lines.push(...(lost.length > 0 ? lost.map((line) => `- ${line}`) : ["- Nowhere on these corpora."]));
	lines.push("", "## Arms", "", ...results.arms.map((arm) => `- \`${arm.name}\`: ${arm.rule}`), "");
	return lines.join("\n");
}

/** Per arm: cumulative input tokens, cache reads, cache-aware cost at both price ratios, peak prompt per run. */
export function billingTable(trajectories: TrajectoryArmResult[]): string[] {
	const raw = trajectories.find((arm) => arm.arm === "raw");
	const times = (value: number, base: number | undefined) => (base ? `${(value / base).toFixed(2)}x` : "-");
	const out = [
		...header([
			"arm",
			"cumulative input tokens",
			"x raw",
			"cached share",
			"cost, Anthropic ratios",
			"x raw",
			"cost, OpenAI ratios",
			"x raw",
			"peak prompt per run (median)",
			"p90",
			"max",
		]),
	];
	for (const arm of trajectories) {
		out.push(
			row([
				bold(arm.arm, arm.arm),
				int(arm.cumulativePromptTokens),
				times(arm.cumulativePromptTokens, raw?.cumulativePromptTokens),
				pct(arm.cachedPromptTokens / Math.max(1, arm.cumulativePromptTokens)),
				bold(arm.arm, int(arm.cost.anthropic)),
				times(arm.cost.anthropic, raw?.cost.anthropic),
				int(arm.cost.openai),
				times(arm.cost.openai, raw?.cost.openai),
				int(arm.peakPromptTokens.median),
				int(arm.peakPromptTokens.p90),
				int(arm.peakPromptTokens.max),
			]),
		);
	}
	return out;
}

const REMAINING = { estimated: "estimated", true: "true (oracle)" } as const;

/**
 * The ageing replays of our arm: each priced with one column's ratios and billed in it, with the
 * agent's estimate of the calls to come and with the true ones; what was aged, read back, repeated.
 */
export function ageingMarkdown(trajectories: TrajectoryArmResult[]): string[] {
	const ours = trajectories.find((arm) => arm.ageing !== undefined);
	const raw = trajectories.find((arm) => arm.arm === "raw");
	if (!ours?.ageing) return [];
	const out = [
		`### Ageing (${ours.arm}, window ${ours.ageing.window})`,
		"",
		...header([
			"priced and billed at",
			"calls to come",
			"cumulative input tokens",
			"cost",
			"x raw",
			"peak prompt median",
			"p90",
			"max",
			"aged",
			"read back byte-exact",
			"calls that aged",
			"later commands repeating an aged one",
		]),
	];
	for (const replay of ours.ageing.replays) {
		out.push(
			row([
				replay.prices === "anthropic" ? "Anthropic's ratios" : "OpenAI's ratios",
				REMAINING[replay.remaining],
				int(replay.cumulativePromptTokens),
				int(replay.cost),
				raw ? `${(replay.cost / raw.cost[replay.prices]).toFixed(3)}x` : "-",
				int(replay.peakPromptTokens.median),
				int(replay.peakPromptTokens.p90),
				int(replay.peakPromptTokens.max),
				int(replay.aged),
				`${replay.agedByteExact}/${replay.aged}`,
				`${replay.moments}/${replay.calls}`,
				int(replay.repeatedCommands),
			]),
		);
	}
	out.push(
		"",
		`The \`${ours.arm}\` row above takes each cost column from the replay whose ageing was priced with that column's ratios (estimated calls to come), and its tokens and peak prompts from the Anthropic-priced one. Before each call the package's \`planAgeing\` sees the history (system prompt and task first, never aged), the observations the previous call sent unchanged and \`estimateRemainingCalls\` of the calls so far; an aged observation stays aged, and its stub is a new message to the cache. A replay cannot show the extra call a model makes to read an aged output back; a later command repeating an aged observation's command is counted as a proxy for needing it back.`,
		"",
	);
	return out;
}

/** How many labels the raw output itself does not show (they are left out of the recall columns). */
function notLegible(results: BenchmarkResults): string {
	const raw = results.labelled.find((arm) => arm.arm === "raw");
	if (!raw) return "";
	const gap = (all: { total: number }, legible: { total: number }) => all.total - legible.total;
	return `Recall is over the labels legible in the raw output: ${raw.ofRaw.failingIds.total}/${raw.failingIds.total} failing ids, ${raw.ofRaw.errorTypes.total}/${raw.errorTypes.total} error types, ${raw.ofRaw.locations.total}/${raw.locations.total} locations (${gap(raw.errorTypes, raw.ofRaw.errorTypes)} error types come from the machine report only, e.g. a class name the text never prints; every arm's figures over all labels are in results.json).`;
}

/** How the buckets were warmed up, and what the first observation of each size took (cold). */
function warmupNote(speed: SpeedResult): string[] {
	const warmed = speed.buckets.filter((bucket) => (bucket.warmup ?? 0) > 0);
	if (warmed.length === 0) return [];
	const each = warmed.map((bucket) => `${bucket.label}: ${bucket.warmup}, the first took ${bucket.coldFirstMs} ms`);
	return [
		`Before a bucket is timed, a few untimed observations of its size (other windows) warm the process up, as a long-running agent is (${each.join("; ")}).`,
		"",
	];
}

/** How many timed samples of each bucket had their lines selected on the package's selection thread. */
function threadNote(speed: SpeedResult): string[] {
	const threaded = speed.buckets.filter((bucket) => (bucket.onThread ?? 0) > 0);
	if (threaded.length === 0) return [];
	const each = threaded.map((bucket) => `${bucket.label}: ${bucket.onThread} of ${bucket.samples}`);
	return [
		`Samples whose lines were selected on the selection thread while the scanning thread archived and scanned the outcome (observations of 4 MiB or more, once the thread runs): ${each.join("; ")}.`,
		"",
	];
}

/** The speed section: one row per size bucket, then peak RSS and the load average of the machine. */
export function speedMarkdown(speed: SpeedResult): string[] {
	const load = (values: number[] | undefined) => (values ?? []).map((value) => value.toFixed(2)).join(" / ");
	return [
		"## Speed (prime-context)",
		"",
		...header([
			"size",
			"samples",
			"p50 ms",
			"p95 ms",
			"max ms",
			"CPU p50 ms",
			"CPU p95 ms",
			"p50 ms per MiB",
			"one session: p50 ms",
			"p95 ms",
			"max ms",
		]),
		...speed.buckets.map((bucket) =>
			row([
				bucket.label,
				bucket.samples,
				bucket.p50Ms,
				bucket.p95Ms,
				bucket.maxMs,
				bucket.cpuP50Ms,
				bucket.cpuP95Ms,
				bucket.p50MsPerMiB,
				bucket.source === "file" ? "-" : bucket.sameSession.p50Ms,
				bucket.source === "file" ? "-" : bucket.sameSession.p95Ms,
				bucket.source === "file" ? "-" : bucket.sameSession.maxMs,
			]),
		),
		"",
		"Each sample is a distinct window of real fixture text. The first columns time every sample in a fresh session (wall time, then the CPU time of the process, which other load on the machine inflates less); the last three observe the same samples one after another in one session, where each is also compared with the earlier ones. The 100 MB samples arrive as a complete-output file, as a host hands them over.",
		"",
		...warmupNote(speed),
		...threadNote(speed),
		`Peak RSS of the process: ${int(speed.maxRssKiBBefore / 1024)} MiB before the timed runs, ${int(speed.maxRssKiBAfter / 1024)} MiB after. Load average of the machine (1 / 5 / 15 minutes): ${load(speed.loadAverageBefore)} before, ${load(speed.loadAverageAfter)} after. Machine reference (a fixed CPU-bound workload of no package code, lower is faster): ${speed.referenceMsBefore ?? "-"} ms before, ${speed.referenceMsAfter ?? "-"} ms after.`,
		"",
	];
}
