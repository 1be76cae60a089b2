import { type TSchema, Type } from "typebox";
import { Compile } from "typebox/compile";

/**
 * The shape of each record of a session file, checked as it is read: a session file is untrusted
 * (hand-edited, copied, written by another program), and the code that shows, resumes or sends a
 * session dereferences these fields. Only what the agent reads is checked; fields it does not know
 * are kept as they are.
 */

const Text = Type.Object({ type: Type.Literal("text"), text: Type.String() });
const Image = Type.Object({ type: Type.Literal("image"), data: Type.String(), mimeType: Type.String() });
const Thinking = Type.Object({ type: Type.Literal("thinking"), thinking: Type.String() });
const ToolCall = Type.Object({
	type: Type.Literal("toolCall"),
	id: Type.String(),
	name: Type.String(),
	arguments: Type.Record(Type.String(), Type.Unknown()),
});
const UserContent = Type.Union([Type.String(), Type.Array(Type.Union([Text, Image]))]);
const Count = Type.Optional(Type.Number());

const MESSAGES: Record<string, TSchema> = {
	user: Type.Object({ role: Type.Literal("user"), content: UserContent, timestamp: Type.Number() }),
	assistant: Type.Object({
		role: Type.Literal("assistant"),
		content: Type.Array(Type.Union([Text, Thinking, ToolCall])),
		api: Type.String(),
		provider: Type.String(),
		model: Type.String(),
		usage: Type.Object({
			input: Count,
			output: Count,
			cacheRead: Count,
			cacheWrite: Count,
			totalTokens: Count,
			cost: Type.Optional(Type.Object({ total: Count })),
		}),
		stopReason: Type.String(),
		errorMessage: Type.Optional(Type.String()),
		timestamp: Type.Number(),
	}),
	toolResult: Type.Object({
		role: Type.Literal("toolResult"),
		toolCallId: Type.String(),
		toolName: Type.String(),
		content: Type.Array(Type.Union([Text, Image])),
		isError: Type.Boolean(),
		timestamp: Type.Number(),
	}),
};

const base = {
	id: Type.String({ minLength: 1 }),
	parentId: Type.Union([Type.String(), Type.Null()]),
	timestamp: Type.String(),
};

/** Each entry type; a `message` entry's message is checked by its role. */
const ENTRIES: Record<string, TSchema> = {
	message: Type.Object({ ...base, type: Type.Literal("message"), message: Type.Object({ role: Type.String() }) }),
	model_change: Type.Object({
		...base,
		type: Type.Literal("model_change"),
		provider: Type.String(),
		modelId: Type.String(),
	}),
	thinking_level_change: Type.Object({
		...base,
		type: Type.Literal("thinking_level_change"),
		thinkingLevel: Type.String(),
	}),
	compaction: Type.Object({
		...base,
		type: Type.Literal("compaction"),
		summary: Type.String(),
		firstKeptEntryId: Type.String(),
		tokensBefore: Type.Number(),
	}),
	branch_summary: Type.Object({
		...base,
		type: Type.Literal("branch_summary"),
		fromId: Type.String(),
		summary: Type.String(),
	}),
	custom: Type.Object({ ...base, type: Type.Literal("custom"), customType: Type.String() }),
	custom_message: Type.Object({
		...base,
		type: Type.Literal("custom_message"),
		customType: Type.String(),
		content: UserContent,
		display: Type.Boolean(),
	}),
};

const HEADER = Type.Object({
	type: Type.Literal("session"),
	version: Type.Number(),
	id: Type.String(),
	timestamp: Type.String(),
	cwd: Type.String(),
	parentSession: Type.Optional(Type.String()),
	parentEntryId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
	rlmChild: Type.Optional(Type.Object({ id: Type.String(), name: Type.String(), depth: Type.Number() })),
});

type Validator = ReturnType<typeof Compile<TSchema>>;
const compiled = (schemas: Record<string, TSchema>): Map<string, Validator> =>
	new Map(Object.entries(schemas).map(([name, schema]) => [name, Compile(schema)]));
const messageValidators = compiled(MESSAGES);
const entryValidators = compiled(ENTRIES);
const headerValidator = Compile(HEADER);

/** Why a header record is malformed, or undefined when it is a whole header. */
export function headerProblem(record: unknown): string | undefined {
	return problem(headerValidator, record, "the header");
}

/** Why a record cannot be an entry, or undefined when it is a well-formed entry. */
export function entryProblem(record: unknown): string | undefined {
	if (typeof record !== "object" || record === null || Array.isArray(record)) return "not a JSON object";
	const type = (record as { type?: unknown }).type;
	if (type === "session") return "a second session header";
	const validator = typeof type === "string" ? entryValidators.get(type) : undefined;
	if (!validator) return `unknown entry type ${JSON.stringify(type)}`;
	const found = problem(validator, record, "the entry");
	if (found || type !== "message") return found;
	const message = (record as { message: { role: unknown } }).message;
	const role = messageValidators.get(String(message.role));
	if (!role) return `unknown message role ${JSON.stringify(message.role)}`;
	return problem(role, message, "the message", "/message");
}

/** The most specific error (the deepest field): a union's own "must match" says less than its branches. */
function problem(validator: Validator, value: unknown, what: string, prefix = ""): string | undefined {
	if (validator.Check(value)) return undefined;
	let deepest: { instancePath: string; message: string } | undefined;
	for (const error of validator.Errors(value)) {
		if (!deepest || error.instancePath.length > deepest.instancePath.length) deepest = error;
	}
	if (!deepest) return `${what} is malformed`;
	const field = `${prefix}${deepest.instancePath}`;
	return field ? `${field.slice(1).replaceAll("/", ".")} ${deepest.message}` : `${what} ${deepest.message}`;
}
