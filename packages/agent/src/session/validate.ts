/**
 * The shape of each record of a session file, checked as it is read: a session file is untrusted
 * (hand-edited, copied, written by another program), and the code that shows, resumes or sends a
 * session reads these fields. Only what the agent reads is checked; fields it does not know are kept
 * as they are. Small hand checks rather than a schema library: every command that lists sessions
 * loads this, and must start fast.
 */

/** What is wrong with a value: `path` leads to the field inside it (built only on failure). */
interface Problem {
	path: (string | number)[];
	what: string;
}
/** Undefined when `value` fits. */
type Check = (value: unknown) => Problem | undefined;

const wrong = (what: string): Problem => ({ path: [], what });
const kind =
	(type: "string" | "number" | "boolean"): Check =>
	(value) => {
		if (typeof value === type) return undefined;
		return wrong(value === undefined ? "is missing" : `must be a ${type}`);
	};
const string = kind("string");
const number = kind("number");
const boolean = kind("boolean");
const optional =
	(check: Check): Check =>
	(value) =>
		value === undefined ? undefined : check(value);
const stringOrNull: Check = (value) =>
	value === null || typeof value === "string" ? undefined : wrong("must be a string or null");

const isObject = (value: unknown): value is Record<string, unknown> =>
	typeof value === "object" && value !== null && !Array.isArray(value);
const notObject = (value: unknown) => wrong(value === undefined ? "is missing" : "must be an object");
/** `problem`, found in the field `key`. */
const inside = (key: string | number, problem: Problem): Problem => {
	problem.path.unshift(key);
	return problem;
};

function object(fields: Record<string, Check>): Check {
	const list = Object.entries(fields);
	return (value) => {
		if (!isObject(value)) return notObject(value);
		for (const [key, check] of list) {
			const problem = check(value[key]);
			if (problem) return inside(key, problem);
		}
		return undefined;
	};
}

function arrayOf(item: Check): Check {
	return (value) => {
		if (!Array.isArray(value)) return wrong(value === undefined ? "is missing" : "must be an array");
		for (let index = 0; index < value.length; index++) {
			const problem = item(value[index]);
			if (problem) return inside(index, problem);
		}
		return undefined;
	};
}

/** One of several objects told apart by their `type` field. */
function tagged(variants: Record<string, Record<string, Check>>): Check {
	const checks = new Map(Object.entries(variants).map(([type, fields]) => [type, object(fields)]));
	return (value) => {
		if (!isObject(value)) return notObject(value);
		const check = typeof value.type === "string" ? checks.get(value.type) : undefined;
		if (!check) return inside("type", wrong(`must be one of ${[...checks.keys()].join(", ")}`));
		return check(value);
	};
}

const PARTS = {
	text: { text: string },
	image: { data: string, mimeType: string },
	thinking: { thinking: string },
	toolCall: { id: string, name: string, arguments: object({}) },
};
const userParts = arrayOf(tagged({ text: PARTS.text, image: PARTS.image }));
const userContent: Check = (value) => {
	if (typeof value === "string") return undefined;
	return Array.isArray(value) ? userParts(value) : wrong("must be a string or an array");
};

const MESSAGES = new Map<string, Check>(
	Object.entries({
		user: object({ content: userContent, timestamp: number }),
		assistant: object({
			content: arrayOf(tagged({ text: PARTS.text, thinking: PARTS.thinking, toolCall: PARTS.toolCall })),
			api: string,
			provider: string,
			model: string,
			usage: object({}),
			stopReason: string,
			errorMessage: optional(string),
			timestamp: number,
		}),
		toolResult: object({
			toolCallId: string,
			toolName: string,
			content: userParts,
			isError: boolean,
			timestamp: number,
		}),
	}),
);

const message: Check = (value) => {
	if (!isObject(value)) return notObject(value);
	const check = typeof value.role === "string" ? MESSAGES.get(value.role) : undefined;
	if (!check) return inside("role", wrong(`must be one of ${[...MESSAGES.keys()].join(", ")}`));
	return check(value);
};

const BASE = { id: string, parentId: stringOrNull, timestamp: string };
const ENTRIES = new Map<string, Check>(
	Object.entries({
		message: object({ ...BASE, message }),
		model_change: object({ ...BASE, provider: string, modelId: string }),
		thinking_level_change: object({ ...BASE, thinkingLevel: string }),
		compaction: object({ ...BASE, summary: string, firstKeptEntryId: string, tokensBefore: number }),
		branch_summary: object({ ...BASE, fromId: string, summary: string }),
		custom: object({ ...BASE, customType: string }),
		custom_message: object({ ...BASE, customType: string, content: userContent, display: boolean }),
	}),
);

const HEADER = object({
	version: number,
	id: string,
	timestamp: string,
	cwd: string,
	parentSession: optional(string),
	parentEntryId: optional(stringOrNull),
	rlmChild: optional(object({ id: string, name: string, depth: number })),
});

/** Why a `type: "session"` record is not a whole header, or undefined when it is. */
export function headerProblem(record: unknown): string | undefined {
	return describe(HEADER(record));
}

/** Why a record cannot be an entry, or undefined when it is a well-formed entry. */
export function entryProblem(record: unknown): string | undefined {
	if (!isObject(record)) return "not a JSON object";
	if (record.type === "session") return "a second session header";
	const check = typeof record.type === "string" ? ENTRIES.get(record.type) : undefined;
	if (!check) return `unknown entry type ${JSON.stringify(record.type)}`;
	return describe(check(record));
}

/** `message.content.0.arguments must be an object` */
function describe(problem: Problem | undefined): string | undefined {
	return problem && `${problem.path.join(".")} ${problem.what}`;
}
