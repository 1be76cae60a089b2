import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
	DEFAULT_HEARTBEAT_MS,
	nextRun,
	parseHeartbeatArgs,
	parseScheduleArgs,
	parseWhen,
	type ScheduleJob,
	Scheduler,
} from "./index.js";

const NOW = Date.parse("2026-12-01T10:15:00Z");
let dir: string | undefined;
afterEach(() => {
	if (dir) rmSync(dir, { recursive: true, force: true });
	dir = undefined;
});

function tempFile(): string {
	dir = mkdtempSync(join(tmpdir(), "prime-agent-schedules-"));
	return join(dir, "schedules.json");
}

/**
 * A scheduler on `file` at the clock NOW that records what it delivers, and the jobs on disk at
 * each delivery; `firing` resolves at the first delivery.
 */
function recordingScheduler(file: string): {
	scheduler: Scheduler;
	delivered: string[];
	onDisk: ScheduleJob[][];
	firing: Promise<void>;
} {
	const delivered: string[] = [];
	const onDisk: ScheduleJob[][] = [];
	let fired = () => {};
	const firing = new Promise<void>((resolve) => {
		fired = resolve;
	});
	const scheduler = new Scheduler({
		file,
		deliver: (job) => {
			delivered.push(job.id);
			onDisk.push(JSON.parse(readFileSync(file, "utf8")).jobs);
			fired();
		},
		now: () => NOW,
	});
	return { scheduler, delivered, onDisk, firing };
}

function job(overrides: Partial<ScheduleJob>): ScheduleJob {
	return {
		id: "abc123",
		kind: "schedule",
		when: { kind: "in", ms: 60_000 },
		text: "run the tests",
		delivery: "follow_up",
		createdAt: new Date(NOW - 120_000).toISOString(),
		nextRunAt: new Date(NOW - 60_000).toISOString(),
		fired: 0,
		...overrides,
	};
}

describe("when", () => {
	it("reads in, every, at and cron expressions", () => {
		expect(parseWhen("in 30m", NOW)).toEqual({ kind: "in", ms: 1_800_000 });
		expect(parseWhen("every 10m", NOW)).toEqual({ kind: "every", ms: 600_000 });
		expect(parseWhen("in 1h30m", NOW)).toEqual({ kind: "in", ms: 5_400_000 });
		expect(parseWhen("at 2026-12-01T18:00:00Z", NOW)).toEqual({ kind: "at", time: "2026-12-01T18:00:00.000Z" });
		expect(parseWhen("*/15 * * * *", NOW)).toEqual({ kind: "cron", expression: "*/15 * * * *" });
	});

	it("refuses what it cannot read, saying what to write", () => {
		expect(() => parseWhen("soon", NOW)).toThrow(
			'"soon" is not a time to run at; write "in 30m", "every 10m", "at 2026-12-01T18:00:00Z" or a cron expression such as "*/15 * * * *".',
		);
		expect(() => parseWhen("every 5s", NOW)).toThrow(
			'"every 5s" repeats more often than every 10s, the shortest interval.',
		);
		expect(() => parseWhen("in", NOW)).toThrow('"in" has no duration after "in"; write it as "in 30m" (s, m, h, d).');
		expect(() => parseWhen("at 2026-12-01T09:00:00Z", NOW)).toThrow(
			"2026-12-01T09:00:00.000Z has already passed; pick a later time.",
		);
		expect(() => parseWhen("at tomorrow", NOW)).toThrow('"tomorrow" is not a time;');
		expect(() => parseWhen("99 * * * *", NOW)).toThrow('"99 * * * *" is not a valid cron expression');
	});

	it("computes the next run: one-offs once, every from the last firing, cron by croner", () => {
		expect(nextRun({ kind: "in", ms: 60_000 }, NOW, NOW, false)).toBe(NOW + 60_000);
		expect(nextRun({ kind: "in", ms: 60_000 }, NOW, NOW + 60_000, true)).toBe(null);
		expect(nextRun({ kind: "every", ms: 600_000 }, 0, NOW, true)).toBe(NOW + 600_000);
		expect(nextRun({ kind: "cron", expression: "*/15 * * * *" }, 0, NOW, true)).toBe(
			Date.parse("2026-12-01T10:30:00Z"),
		);
	});
});

describe("commands", () => {
	it("reads /schedule and /heartbeat arguments", () => {
		expect(parseScheduleArgs("in 30m check the build")).toEqual({
			action: "add",
			when: "in 30m",
			text: "check the build",
			delivery: "follow_up",
		});
		expect(parseScheduleArgs('--steer "*/5 * * * *" look at the logs')).toEqual({
			action: "add",
			when: "*/5 * * * *",
			text: "look at the logs",
			delivery: "steer",
		});
		expect(parseScheduleArgs("")).toEqual({ action: "list" });
		expect(parseScheduleArgs("remove ab12")).toEqual({ action: "remove", id: "ab12" });
		expect(() => parseScheduleArgs("whenever")).toThrow("Write /schedule in 30m <prompt>");
		expect(parseHeartbeatArgs("on")).toEqual({ action: "set", ms: DEFAULT_HEARTBEAT_MS });
		expect(parseHeartbeatArgs("90s check the job")).toEqual({ action: "set", ms: 90_000, text: "check the job" });
		expect(parseHeartbeatArgs("off")).toEqual({ action: "off" });
		expect(() => parseHeartbeatArgs("often")).toThrow('"often" is not an interval;');
	});
});

describe("Scheduler", () => {
	it("a heartbeat defaults to every 5 minutes and refuses less than 10 s", () => {
		const scheduler = new Scheduler({ file: tempFile(), deliver: () => {}, now: () => NOW });
		const beat = scheduler.setHeartbeat();
		expect(beat.when).toEqual({ kind: "every", ms: 300_000 });
		expect(beat.nextRunAt).toBe(new Date(NOW + 300_000).toISOString());
		expect(() => scheduler.setHeartbeat(9_000)).toThrow(
			"A heartbeat of 9s is too frequent: the shortest interval is 10s.",
		);
		expect(scheduler.setHeartbeat(10_000).when).toEqual({ kind: "every", ms: 10_000 });
		expect(scheduler.list().filter((job) => job.kind === "heartbeat").length).toBe(1);
	});

	it("a firing missed while nothing ran is delivered once on start, and a restart after it does not repeat it", async () => {
		const file = tempFile();
		writeFileSync(file, JSON.stringify({ version: 1, jobs: [job({})] }));
		const first = recordingScheduler(file);
		first.scheduler.start();
		await first.firing;
		first.scheduler.stop();
		expect(first.delivered).toEqual(["abc123"]);
		// Written before delivery: the one-off was gone from disk when it was delivered.
		expect(first.onDisk).toEqual([[]]);
		// A restart holds no job, so nothing is left that could fire again.
		const second = recordingScheduler(file);
		second.scheduler.start();
		expect(second.scheduler.list()).toEqual([]);
		second.scheduler.stop();
		expect(second.delivered).toEqual([]);
	});

	it("a repeating job missed several times fires once, then from now on", async () => {
		const file = tempFile();
		const missed = job({
			when: { kind: "every", ms: 20_000 },
			nextRunAt: new Date(NOW - 100_000).toISOString(),
		});
		writeFileSync(file, JSON.stringify({ version: 1, jobs: [missed] }));
		const { scheduler, delivered, onDisk, firing } = recordingScheduler(file);
		scheduler.start();
		await firing;
		scheduler.stop();
		expect(delivered).toEqual(["abc123"]);
		const [saved] = scheduler.list() as [ScheduleJob];
		expect(saved.fired).toBe(1);
		// The next firing is a whole interval after the clock, not one of the missed ones.
		expect(saved.nextRunAt).toBe(new Date(NOW + 20_000).toISOString());
		// On disk before it was delivered: a restart now would not fire it again.
		expect(onDisk).toEqual([[saved]]);
	});

	it("a damaged schedules file is reported, not overwritten", () => {
		const file = tempFile();
		writeFileSync(file, "{not json");
		expect(() => new Scheduler({ file, deliver: () => {} })).toThrow(`The schedules file ${file} does not parse`);
		expect(readFileSync(file, "utf8")).toBe("{not json");
	});
});
