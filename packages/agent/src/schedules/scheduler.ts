import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { writePrivateJson } from "../home/index.js";
import {
	DEFAULT_HEARTBEAT_MS,
	describeWhen,
	formatDuration,
	MIN_INTERVAL_MS,
	nextRun,
	parseDuration,
	parseWhen,
	ScheduleError,
	type When,
} from "./when.js";

/** steer: into the running turn; follow_up: queued for the next turn. Either starts a turn when idle. */
export type ScheduleDelivery = "steer" | "follow_up";

export interface ScheduleJob {
	id: string;
	kind: "schedule" | "heartbeat";
	when: When;
	text: string;
	delivery: ScheduleDelivery;
	createdAt: string;
	/** ISO time of the next firing; null once a one-off has fired. */
	nextRunAt: string | null;
	lastFiredAt?: string;
	fired: number;
}

/** What the heartbeat says when no text is given. */
export const DEFAULT_HEARTBEAT_TEXT =
	"Heartbeat: check on the work in progress. Continue it if there is more to do; if it is done or waiting on something, say so in one line.";

export interface SchedulerOptions {
	/** The JSON file the jobs persist in (in the session's artifact folder). */
	file: string;
	/** Hand a firing to the session. */
	deliver(job: ScheduleJob): void;
	now?: () => number;
}

/**
 * The session's heartbeat and schedules. Each firing is written to disk (fired count, next time,
 * a one-off removed) before it is delivered, so a worker or supervisor restart right after a
 * firing never delivers it again; a firing missed while nothing ran is delivered once on start.
 */
export class Scheduler {
	private jobs: ScheduleJob[] = [];
	private timer: NodeJS.Timeout | undefined;
	private readonly now: () => number;
	private stopped = true;
	private readonly listeners = new Set<() => void>();

	constructor(private readonly options: SchedulerOptions) {
		this.now = options.now ?? Date.now;
		this.jobs = loadJobs(options.file);
	}

	/** Start the timers; jobs that fell due while nothing ran fire now, once. */
	start(): void {
		this.stopped = false;
		this.arm();
	}

	stop(): void {
		this.stopped = true;
		if (this.timer) clearTimeout(this.timer);
		this.timer = undefined;
	}

	list(): ScheduleJob[] {
		return this.jobs.map((job) => ({ ...job }));
	}

	get heartbeat(): ScheduleJob | undefined {
		return this.jobs.find((job) => job.kind === "heartbeat");
	}

	get scheduleCount(): number {
		return this.jobs.filter((job) => job.kind === "schedule").length;
	}

	/** Called after every change (a job added, removed or fired). */
	onChange(listener: () => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	/** Add a schedule from a `when` as typed. Throws `ScheduleError` for a bad one. */
	add(whenText: string, text: string, delivery: ScheduleDelivery = "follow_up"): ScheduleJob {
		if (text.trim() === "") throw new ScheduleError("The schedule has no prompt; say what to do when it fires.");
		const now = this.now();
		const when = parseWhen(whenText, now);
		const job = this.makeJob("schedule", when, text.trim(), delivery, now);
		this.jobs.push(job);
		this.changed();
		return job;
	}

	/** Set (or replace) the heartbeat: every `ms` (default 5 minutes, at least 10 s). */
	setHeartbeat(ms: number = DEFAULT_HEARTBEAT_MS, text = DEFAULT_HEARTBEAT_TEXT): ScheduleJob {
		if (!Number.isFinite(ms) || ms < MIN_INTERVAL_MS)
			throw new ScheduleError(
				`A heartbeat of ${formatDuration(ms)} is too frequent: the shortest interval is ${MIN_INTERVAL_MS / 1000}s.`,
			);
		this.jobs = this.jobs.filter((job) => job.kind !== "heartbeat");
		const job = this.makeJob(
			"heartbeat",
			{ kind: "every", ms },
			text.trim() || DEFAULT_HEARTBEAT_TEXT,
			"follow_up",
			this.now(),
		);
		this.jobs.push(job);
		this.changed();
		return job;
	}

	/** Remove a job by id (or id prefix); returns it, or undefined when none matches. */
	remove(id: string): ScheduleJob | undefined {
		const matches = this.jobs.filter((job) => job.id === id || job.id.startsWith(id));
		if (matches.length !== 1) return undefined;
		const [job] = matches as [ScheduleJob];
		this.jobs = this.jobs.filter((other) => other !== job);
		this.changed();
		return job;
	}

	clearHeartbeat(): boolean {
		const before = this.jobs.length;
		this.jobs = this.jobs.filter((job) => job.kind !== "heartbeat");
		if (this.jobs.length === before) return false;
		this.changed();
		return true;
	}

	private makeJob(kind: ScheduleJob["kind"], when: When, text: string, delivery: ScheduleDelivery, now: number) {
		const next = nextRun(when, now, now, false);
		return {
			id: randomBytes(3).toString("hex"),
			kind,
			when,
			text,
			delivery,
			createdAt: new Date(now).toISOString(),
			nextRunAt: next === null ? null : new Date(next).toISOString(),
			fired: 0,
		} satisfies ScheduleJob;
	}

	private changed(): void {
		writePrivateJson(this.options.file, { version: 1, jobs: this.jobs });
		for (const listener of this.listeners) listener();
		this.arm();
	}

	private arm(): void {
		if (this.timer) clearTimeout(this.timer);
		this.timer = undefined;
		if (this.stopped) return;
		const times = this.jobs.filter((job) => job.nextRunAt).map((job) => Date.parse(job.nextRunAt as string));
		if (times.length === 0) return;
		const wait = Math.max(0, Math.min(...times) - this.now());
		// setTimeout holds at most about 24.8 days; a later job is looked at again then.
		this.timer = setTimeout(() => this.fireDue(), Math.min(wait, 2_147_000_000));
		this.timer.unref?.();
	}

	private fireDue(): void {
		const now = this.now();
		const due = this.jobs.filter((job) => job.nextRunAt && Date.parse(job.nextRunAt) <= now);
		for (const job of due) {
			job.fired++;
			job.lastFiredAt = new Date(now).toISOString();
			const next = nextRun(job.when, Date.parse(job.createdAt), now, true);
			job.nextRunAt = next === null ? null : new Date(next).toISOString();
		}
		this.jobs = this.jobs.filter((job) => job.nextRunAt !== null);
		// On disk before delivery: a crash from here on loses a firing rather than repeating it.
		if (due.length > 0) this.changed();
		else this.arm();
		for (const job of due) this.options.deliver(job);
	}
}

/** One line per job for `/schedule list` and `prime-agent schedule list`. */
export function describeJobs(jobs: readonly ScheduleJob[]): string {
	if (jobs.length === 0) return "No heartbeat or schedules.";
	return jobs
		.map((job) => {
			const what = job.kind === "heartbeat" ? "heartbeat" : describeWhen(job.when);
			const next = job.nextRunAt ? `next ${job.nextRunAt}` : "done";
			const text = job.text.length > 80 ? `${job.text.slice(0, 79)}…` : job.text;
			return `${job.id}  ${what}  (${job.delivery.replace("_", "-")}, ${next}, fired ${job.fired}x)  ${text}`;
		})
		.join("\n");
}

/** `/heartbeat` arguments: nothing (show), `on`, `off`, or `<interval> [text]`. */
export function parseHeartbeatArgs(
	args: string,
): { action: "show" } | { action: "off" } | { action: "set"; ms: number; text?: string } {
	const trimmed = args.trim();
	if (trimmed === "") return { action: "show" };
	if (trimmed === "off" || trimmed === "stop") return { action: "off" };
	if (trimmed === "on") return { action: "set", ms: DEFAULT_HEARTBEAT_MS };
	const [first, ...rest] = trimmed.split(/\s+/);
	const ms = parseDuration(first as string);
	if (ms === undefined)
		throw new ScheduleError(
			`"${first}" is not an interval; write /heartbeat 5m [text], /heartbeat on (every 5 minutes) or /heartbeat off.`,
		);
	return { action: "set", ms, text: rest.join(" ") || undefined };
}

/**
 * `/schedule` arguments: `list`, `remove <id>`, or `[--steer|--follow-up] <when> <prompt>` where
 * `when` is `in 30m`, `every 10m`, `at <ISO time>` or a quoted cron expression.
 */
export function parseScheduleArgs(
	args: string,
):
	| { action: "list" }
	| { action: "remove"; id: string }
	| { action: "add"; when: string; text: string; delivery: ScheduleDelivery } {
	let rest = args.trim();
	if (rest === "" || rest === "list") return { action: "list" };
	const remove = /^(remove|rm)\s+(\S+)$/.exec(rest);
	if (remove) return { action: "remove", id: remove[2] as string };
	let delivery: ScheduleDelivery = "follow_up";
	const flag = /^--(steer|follow-up)\s+/.exec(rest);
	if (flag) {
		delivery = flag[1] === "steer" ? "steer" : "follow_up";
		rest = rest.slice(flag[0].length);
	}
	const quoted = /^"([^"]+)"\s+([\s\S]+)$/.exec(rest);
	if (quoted) return { action: "add", when: quoted[1] as string, text: (quoted[2] as string).trim(), delivery };
	const words = rest.split(/\s+/);
	const head = words[0];
	if ((head === "in" || head === "every" || head === "at") && words.length >= 3)
		return { action: "add", when: `${head} ${words[1]}`, text: words.slice(2).join(" "), delivery };
	throw new ScheduleError(
		'Write /schedule in 30m <prompt>, /schedule every 10m <prompt>, /schedule at <ISO time> <prompt>, /schedule "<cron>" <prompt> (--steer to steer the running turn), /schedule list or /schedule remove <id>.',
	);
}

function loadJobs(file: string): ScheduleJob[] {
	if (!existsSync(file)) return [];
	try {
		const data = JSON.parse(readFileSync(file, "utf8")) as { jobs?: ScheduleJob[] };
		return Array.isArray(data.jobs) ? data.jobs : [];
	} catch (error) {
		throw new ScheduleError(
			`The schedules file ${file} does not parse (${(error as Error).message}); fix or remove it.`,
		);
	}
}
