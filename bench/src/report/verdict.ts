/** The targets of BENCHMARK.md, checked against the figures, and the places our arm loses. */
import type { RecoveryCheck } from "../arms/index.js";
import type { BenchmarkResults } from "../bench.js";
import type { SpeedResult } from "../run/speed.js";
import type { TrajectoryArmResult } from "../run/trajectories.js";

export const OURS = "prime-context";

export interface Target {
	target: string;
	measured: string;
	met: boolean;
}

const pct = (value: number) => `${(value * 100).toFixed(1)}%`;

export function targets(results: BenchmarkResults): Target[] {
	const list: Target[] = [];
	const ours = results.labelled.find((arm) => arm.arm === OURS);
	if (ours) {
		// Judged on the labels legible in the raw output (no view can show a label the tool never printed).
		const r = ours.ofRaw;
		list.push(
			{ target: "failing ids kept = 100%", measured: pct(r.failingIds.recall), met: r.failingIds.recall === 1 },
			{ target: "error types kept >= 99%", measured: pct(r.errorTypes.recall), met: r.errorTypes.recall >= 0.99 },
			{ target: "locations kept >= 99%", measured: pct(r.locations.recall), met: r.locations.recall >= 0.99 },
			{ target: "false greens = 0", measured: String(ours.falseGreens.count), met: ours.falseGreens.count === 0 },
		);
		const peers = results.labelled.filter((arm) => arm.arm !== OURS && arm.arm !== "raw");
		const smaller = peers.filter((arm) => arm.tokens.total <= ours.tokens.total);
		// "At that retention": peers keeping at least our share of failing ids.
		const rivals = peers.filter((arm) => arm.ofRaw.failingIds.recall >= r.failingIds.recall);
		const cheaperRivals = rivals.filter((arm) => arm.tokens.total <= ours.tokens.total);
		list.push(
			{
				target: "fewer labelled-corpus tokens than every peer at our failing-id retention",
				measured: `${ours.tokens.total} tokens; ${rivals.length === 0 ? "no peer reaches that retention" : rivals.map((arm) => `${arm.arm} ${arm.tokens.total}`).join(", ")}`,
				met: cheaperRivals.length === 0,
			},
			{
				target: "fewer labelled-corpus tokens than every peer, whatever its retention",
				measured: `${ours.tokens.total} tokens; ${smaller.length === 0 ? "every peer uses more" : `not fewer than ${smaller.map((arm) => `${arm.arm} (${arm.tokens.total})`).join(", ")}`}`,
				met: smaller.length === 0,
			},
		);
	}
	const replayOurs = results.trajectories.find((arm) => arm.arm === OURS);
	if (replayOurs) {
		const keepers = new Set(results.labelled.filter((arm) => arm.ofRaw.failingIds.recall === 1).map((arm) => arm.arm));
		// Masking shows raw output while it is recent, so it keeps what raw keeps.
		if (keepers.has("raw")) keepers.add("last-5-masking");
		const rivals = results.trajectories.filter((arm) => arm.arm !== OURS && arm.arm !== "raw" && keepers.has(arm.arm));
		const beaten = rivals.filter((arm) => arm.cumulativeObservationTokens <= replayOurs.cumulativeObservationTokens);
		list.push({
			target: "fewer cumulative observation tokens (trajectories) than every peer keeping all failing ids",
			measured: `${replayOurs.cumulativeObservationTokens}; rivals: ${rivals.map((arm) => `${arm.arm} ${arm.cumulativeObservationTokens}`).join(", ") || "none"}`,
			met: beaten.length === 0,
		});
	}
	list.push(recoveryTarget("labelled", results.recovery.labelled));
	list.push(...trajectoryTargets(results.trajectories, results.recovery.trajectories));
	const search = results.recovery.labelled.search;
	const found = search.failingIds.found + search.errorTypes.found + search.locations.found;
	const total = search.failingIds.total + search.errorTypes.total + search.locations.total;
	list.push({ target: "search finds every labelled fact", measured: `${found}/${total}`, met: found === total });
	list.push(...speedTargets(results.speed));
	return list;
}

function recoveryTarget(corpus: string, check: RecoveryCheck): Target {
	return {
		target: `recovery byte-exact = 100% (${corpus})`,
		measured: `${check.byteExact}/${check.observations}`,
		met: check.observations > 0 && check.byteExact === check.observations,
	};
}

/** At most these multiples of raw's cost, at each column's cache ratios. */
export const COST_CEILINGS = { anthropic: 0.93, openai: 0.72 } as const;

const COLUMN_NAMES = { anthropic: "Anthropic's", openai: "OpenAI's" } as const;

/**
 * The trajectory replay's targets: our arm (the broker with ageing) costs the least of every arm at
 * both price ratios and at most the ceilings of raw's cost, its median peak prompt per run is at most
 * block masking's (under the ageing priced at either ratio), and every aged observation reads back
 * byte-exact from the id its stub names; every archived observation reads back byte-exact.
 */
export function trajectoryTargets(arms: TrajectoryArmResult[], recovery: RecoveryCheck): Target[] {
	const list: Target[] = [];
	const ours = arms.find((arm) => arm.arm === OURS);
	if (ours) {
		const raw = arms.find((arm) => arm.arm === "raw");
		for (const column of ["anthropic", "openai"] as const) {
			const others = arms.filter((arm) => arm.arm !== OURS);
			const cheapest = others.reduce<TrajectoryArmResult | undefined>(
				(best, arm) => (best === undefined || arm.cost[column] < best.cost[column] ? arm : best),
				undefined,
			);
			const cost = ours.cost[column];
			list.push({
				target: `lowest cost of every arm at ${COLUMN_NAMES[column]} cache ratios (trajectories)`,
				measured: `${Math.round(cost)}; next ${cheapest ? `${cheapest.arm} ${Math.round(cheapest.cost[column])}` : "none"}`,
				met: others.every((arm) => arm.cost[column] > cost),
			});
			if (raw) {
				const times = cost / raw.cost[column];
				list.push({
					target: `cost <= ${COST_CEILINGS[column].toFixed(2)}x raw at ${COLUMN_NAMES[column]} cache ratios (trajectories)`,
					measured: `${times.toFixed(3)}x`,
					met: times <= COST_CEILINGS[column],
				});
			}
		}
		const block = arms.find((arm) => arm.arm === "block-masking");
		const replays = (ours.ageing?.replays ?? []).filter((replay) => replay.remaining === "estimated");
		const medians =
			replays.length > 0 ? replays.map((replay) => replay.peakPromptTokens.median) : [ours.peakPromptTokens.median];
		if (block) {
			list.push({
				target: "median peak prompt per run <= block masking's (trajectories)",
				measured: `${replays.length > 0 ? replays.map((replay) => `${replay.peakPromptTokens.median} priced at ${COLUMN_NAMES[replay.prices]}`).join(", ") : ours.peakPromptTokens.median}; block masking ${block.peakPromptTokens.median}`,
				met: Math.max(...medians) <= block.peakPromptTokens.median,
			});
		}
		const all = ours.ageing?.replays ?? [];
		const aged = all.reduce((sum, replay) => sum + replay.aged, 0);
		const exact = all.reduce((sum, replay) => sum + replay.agedByteExact, 0);
		list.push({
			target: "aged observations read back byte-exact from their stub's id = 100% (trajectories)",
			measured: aged === 0 ? "no observation aged" : `${exact}/${aged} (over ${all.length} replays)`,
			met: aged > 0 && exact === aged,
		});
	}
	list.push(recoveryTarget("trajectories", recovery));
	return list;
}

/** The speed target of BENCHMARK.md, when the 1 MB bucket was timed. */
export function speedTargets(speed: SpeedResult): Target[] {
	const mb = speed.buckets.find((bucket) => bucket.bytes === 1024 * 1024);
	if (!mb) return [];
	return [
		{
			target: "p95 < 50 ms per 1 MB observation",
			measured: `${mb.p95Ms} ms wall, ${mb.cpuP95Ms} ms CPU`,
			met: mb.p95Ms < 50,
		},
	];
}

/** Plain statements of where our arm does worse than a peer or misses a target. */
export function losses(results: BenchmarkResults): string[] {
	const out: string[] = [];
	const ours = results.labelled.find((arm) => arm.arm === OURS);
	if (ours) {
		for (const peer of results.labelled) {
			if (peer.arm === OURS) continue;
			const fewerTokens = peer.tokens.total < ours.tokens.total;
			const better = (["failingIds", "errorTypes", "locations"] as const).filter(
				(key) => peer.ofRaw[key].recall > ours.ofRaw[key].recall,
			);
			if (fewerTokens) {
				out.push(
					`Labelled outputs: ${peer.arm} shows fewer tokens (${peer.tokens.total} vs ${ours.tokens.total}), keeping ${pct(peer.ofRaw.facts.recall)} of facts vs our ${pct(ours.ofRaw.facts.recall)}.`,
				);
			}
			if (better.length > 0 && peer.arm !== "raw") {
				out.push(
					`Labelled outputs: ${peer.arm} keeps more ${better.join(", ")} (${better.map((key) => `${pct(peer.ofRaw[key].recall)} vs ${pct(ours.ofRaw[key].recall)}`).join(", ")}).`,
				);
			}
		}
		// Only labels the raw output shows: a label the tool never printed is in no view.
		const raw = results.labelled.find((arm) => arm.arm === "raw");
		for (const row of ours.perCase) {
			const notInRaw = raw?.perCase.find((other) => other.name === row.name)?.retention.missing;
			const lost = (key: "failingIds" | "errorTypes" | "locations") =>
				row.retention.missing[key].filter((label) => !notInRaw?.[key].includes(label));
			const ids = lost("failingIds");
			const types = lost("errorTypes");
			const locations = lost("locations");
			const parts = [
				ids.length ? `${ids.length} failing id(s)` : "",
				types.length ? `error type(s) ${types.slice(0, 3).join(", ")}${types.length > 3 ? ", ..." : ""}` : "",
				locations.length ? `${locations.length} location(s), e.g. ${locations.slice(0, 2).join(", ")}` : "",
			].filter(Boolean);
			if (parts.length > 0) out.push(`Case ${row.name}: our view misses ${parts.join("; ")}.`);
		}
		if (ours.falseGreens.count > 0) out.push(`False greens in: ${ours.falseGreens.cases.join(", ")}.`);
		if (ours.viewsLargerThanInput.count > 0) {
			out.push(`Views larger than their input: ${ours.viewsLargerThanInput.cases.join(", ")}.`);
		}
	}
	const replayOurs = results.trajectories.find((arm) => arm.arm === OURS);
	if (replayOurs) {
		for (const peer of results.trajectories) {
			if (peer.arm === OURS) continue;
			if (peer.cumulativeObservationTokens < replayOurs.cumulativeObservationTokens) {
				out.push(
					`Trajectories: ${peer.arm} has fewer cumulative observation tokens (${peer.cumulativeObservationTokens} vs ${replayOurs.cumulativeObservationTokens}).`,
				);
			}
		}
		const figures: [string, (arm: (typeof results.trajectories)[number]) => number][] = [
			["cost at Anthropic's cache ratios", (arm) => arm.cost.anthropic],
			["cost at OpenAI's cache ratios", (arm) => arm.cost.openai],
			["median peak prompt per run", (arm) => arm.peakPromptTokens.median],
		];
		for (const [figure, value] of figures) {
			const cheaper = results.trajectories.filter((peer) => peer.arm !== OURS && value(peer) < value(replayOurs));
			for (const peer of cheaper) {
				out.push(
					`Trajectories: ${peer.arm} has a lower ${figure} (${Math.round(value(peer))} vs ${Math.round(value(replayOurs))}).`,
				);
			}
		}
		if (replayOurs.viewsLargerThanInput > 0) {
			out.push(`Trajectories: ${replayOurs.viewsLargerThanInput} observation view(s) larger than the recorded output.`);
		}
	}
	for (const t of targets(results)) if (!t.met) out.push(`Target missed: ${t.target} (measured ${t.measured}).`);
	return out;
}
