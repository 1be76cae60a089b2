import type { RecoveryLimits, RecoveryRequest } from "./types.js";

/** Bad arguments; the message says what is allowed. */
export class RecoveryArgumentError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "RecoveryArgumentError";
	}
}

const ACTIONS = ["list", "read", "search", "status", "update"] as const;

const KEYS: Record<(typeof ACTIONS)[number], string[]> = {
	list: ["limit"],
	read: ["id", "startLine", "endLine"],
	search: ["id", "query", "contextLines", "matchOffset", "maxMatches", "limit"],
	status: [],
	update: ["focus", "add", "complete", "pin", "unpin"],
};

export function usageOf(action: (typeof ACTIONS)[number], limits: RecoveryLimits): string {
	switch (action) {
		case "list":
			return `action=list [limit=1..${limits.listMax}]`;
		case "read":
			// A person's read has no line cap (only a byte budget), so there is no count to promise.
			return limits.readMaxLines === Number.MAX_SAFE_INTEGER
				? "action=read id=obs_... [startLine>=1] [endLine>=startLine]"
				: `action=read id=obs_... [startLine>=1] [endLine>=startLine] (at most ${limits.readMaxLines} lines per read)`;
		case "search":
			return `action=search query="fixed text" [id=obs_...] [contextLines=0..${limits.contextLinesMax}] [matchOffset>=0] [maxMatches=1..${limits.searchMaxMatches}] [limit=1..${limits.listMax} observations when no id]`;
		case "status":
			return "action=status";
		case "update":
			return 'action=update [focus="text" | focus=null] [add=["item text", ...]] [complete=["item_1", ...]] [pin=["obs_...", ...]] [unpin=["obs_...", ...]]';
	}
}

/**
 * Turns loose arguments (as a model or a command line sends them: numbers may arrive as strings,
 * lists as single strings) into a checked request, or throws saying what is allowed.
 */
export function parseRecoveryRequest(raw: unknown, limits: RecoveryLimits): RecoveryRequest {
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
		throw new RecoveryArgumentError(`arguments must be an object with an action; actions: ${ACTIONS.join(", ")}`);
	}
	const args = raw as Record<string, unknown>;
	const action = args.action;
	if (typeof action !== "string" || !(ACTIONS as readonly string[]).includes(action)) {
		throw new RecoveryArgumentError(`unknown action ${JSON.stringify(action)}; allowed actions: ${ACTIONS.join(", ")}`);
	}
	const known = ACTIONS.find((a) => a === action) as (typeof ACTIONS)[number];
	const usage = usageOf(known, limits);
	const unknown = Object.keys(args).filter(
		(key) => key !== "action" && !KEYS[known].includes(key) && args[key] !== undefined,
	);
	if (unknown.length > 0) {
		throw new RecoveryArgumentError(`unknown argument ${unknown.join(", ")} for ${known}; usage: ${usage}`);
	}
	const int = (key: string, min: number, max: number): number | undefined => {
		const value = args[key];
		if (value === undefined || value === null || value === "") return undefined;
		const number = typeof value === "string" && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
		if (typeof number !== "number" || !Number.isSafeInteger(number) || number < min || number > max) {
			const range = max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`;
			throw new RecoveryArgumentError(`${key} must be ${range}, got ${JSON.stringify(value)}; usage: ${usage}`);
		}
		return number;
	};
	const text = (key: string, required: boolean): string | undefined => {
		const value = args[key];
		if (value === undefined || value === null) {
			if (required) throw new RecoveryArgumentError(`${key} is required; usage: ${usage}`);
			return undefined;
		}
		if (typeof value !== "string" || (required && value === "")) {
			throw new RecoveryArgumentError(`${key} must be a non-empty string; usage: ${usage}`);
		}
		return value;
	};
	const list = (key: string): string[] | undefined => {
		const value = args[key];
		if (value === undefined || value === null) return undefined;
		const values = typeof value === "string" ? [value] : value;
		if (!Array.isArray(values) || !values.every((item) => typeof item === "string")) {
			throw new RecoveryArgumentError(`${key} must be a string or a list of strings; usage: ${usage}`);
		}
		return values as string[];
	};
	const any = Number.MAX_SAFE_INTEGER;
	switch (known) {
		case "list":
			return { action: "list", limit: int("limit", 1, limits.listMax) };
		case "read": {
			const startLine = int("startLine", 1, any);
			const endLine = int("endLine", 1, any);
			if (startLine !== undefined && endLine !== undefined && endLine < startLine) {
				throw new RecoveryArgumentError(
					`endLine (${endLine}) must not be before startLine (${startLine}); usage: ${usage}`,
				);
			}
			return { action: "read", id: text("id", true) as string, startLine, endLine };
		}
		case "search": {
			const id = text("id", false);
			return {
				action: "search",
				query: text("query", true) as string,
				id: id === "" || id === "all" ? undefined : id,
				contextLines: int("contextLines", 0, limits.contextLinesMax),
				matchOffset: int("matchOffset", 0, any),
				maxMatches: int("maxMatches", 1, limits.searchMaxMatches),
				limit: int("limit", 1, limits.listMax),
			};
		}
		case "status":
			return { action: "status" };
		case "update": {
			const focus = args.focus;
			if (focus !== undefined && focus !== null && typeof focus !== "string") {
				throw new RecoveryArgumentError(`focus must be a string, or null to clear it; usage: ${usage}`);
			}
			const request = {
				action: "update" as const,
				focus: focus as string | null | undefined,
				add: list("add"),
				complete: list("complete"),
				pin: list("pin"),
				unpin: list("unpin"),
			};
			if (Object.values(request).every((value) => value === undefined || value === "update")) {
				throw new RecoveryArgumentError(`update needs at least one change; usage: ${usage}`);
			}
			return request;
		}
	}
}
