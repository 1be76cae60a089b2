import { Cron } from "croner";

/** A bad `when`, interval or command: the message says what to write instead. */
export class ScheduleError extends Error {}

/** When a schedule fires: once after a delay, repeatedly, once at a time, or by a cron expression. */
export type When =
	| { kind: "in"; ms: number }
	| { kind: "every"; ms: number }
	| { kind: "at"; time: string }
	| { kind: "cron"; expression: string };

/** The shortest interval of a heartbeat or an `every` schedule. */
export const MIN_INTERVAL_MS = 10_000;
/** A heartbeat's interval when none is given. */
export const DEFAULT_HEARTBEAT_MS = 5 * 60_000;

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const WHEN_FORMS = '"in 30m", "every 10m", "at 2026-12-01T18:00:00Z" or a cron expression such as "*/15 * * * *"';

/** `90s`, `30m`, `2h`, `1d`, `1h30m` → milliseconds; undefined when it is not a duration. */
export function parseDuration(text: string): number | undefined {
	const trimmed = text.trim().toLowerCase();
	if (!/^(\d+(\.\d+)?\s*[smhd]\s*)+$/.test(trimmed)) return undefined;
	let total = 0;
	for (const match of trimmed.matchAll(/(\d+(?:\.\d+)?)\s*([smhd])/g))
		total += Number(match[1]) * (UNITS[match[2] as string] as number);
	return Math.round(total);
}

/** `90000` → `1m30s`. */
export function formatDuration(ms: number): string {
	const parts: string[] = [];
	let rest = Math.round(ms / 1000);
	for (const [unit, seconds] of [
		["d", 86_400],
		["h", 3600],
		["m", 60],
		["s", 1],
	] as const) {
		const count = Math.floor(rest / seconds);
		if (count > 0) parts.push(`${count}${unit}`);
		rest -= count * seconds;
	}
	return parts.join("") || "0s";
}

/** Parse a `when` as typed; `now` decides whether an `at` time has passed. */
export function parseWhen(text: string, now: number): When {
	const trimmed = text.trim();
	const [head, ...restWords] = trimmed.split(/\s+/);
	const rest = restWords.join(" ");
	if (head === "in" || head === "every") {
		const ms = parseDuration(rest);
		if (ms === undefined || ms <= 0)
			throw new ScheduleError(`"${trimmed}" has no duration after "${head}"; write it as "${head} 30m" (s, m, h, d).`);
		if (head === "every" && ms < MIN_INTERVAL_MS)
			throw new ScheduleError(
				`"${trimmed}" repeats more often than every ${MIN_INTERVAL_MS / 1000}s, the shortest interval.`,
			);
		return { kind: head, ms };
	}
	if (head === "at") {
		const time = Date.parse(rest);
		if (Number.isNaN(time))
			throw new ScheduleError(`"${rest}" is not a time; write an ISO time such as "at 2026-12-01T18:00:00Z".`);
		if (time <= now) throw new ScheduleError(`${new Date(time).toISOString()} has already passed; pick a later time.`);
		return { kind: "at", time: new Date(time).toISOString() };
	}
	const fields = trimmed.split(/\s+/).length;
	if (fields >= 5 && fields <= 7) {
		try {
			const cron = new Cron(trimmed, { paused: true });
			if (cron.nextRun() === null) throw new ScheduleError(`The cron expression "${trimmed}" never fires.`);
			return { kind: "cron", expression: trimmed };
		} catch (error) {
			if (error instanceof ScheduleError) throw error;
			throw new ScheduleError(`"${trimmed}" is not a valid cron expression (${(error as Error).message}).`);
		}
	}
	throw new ScheduleError(`"${trimmed}" is not a time to run at; write ${WHEN_FORMS}.`);
}

/**
 * The next time after `after` (ms) that `when` fires, given when the schedule was made; null when
 * a one-off has had its turn.
 */
export function nextRun(when: When, createdAt: number, after: number, firedBefore: boolean): number | null {
	switch (when.kind) {
		case "in":
			return firedBefore ? null : createdAt + when.ms;
		case "at":
			return firedBefore ? null : Date.parse(when.time);
		case "every":
			return after + when.ms;
		case "cron": {
			const next = new Cron(when.expression, { paused: true }).nextRun(new Date(after));
			return next ? next.getTime() : null;
		}
	}
}

/** `every 10m`, `at …`, as the user would write it. */
export function describeWhen(when: When): string {
	switch (when.kind) {
		case "in":
			return `in ${formatDuration(when.ms)}`;
		case "every":
			return `every ${formatDuration(when.ms)}`;
		case "at":
			return `at ${when.time}`;
		case "cron":
			return `cron ${when.expression}`;
	}
}
