import type { ThinkingLevel } from "@mariozechner/pi-agent-core";
import { ExitCode, UserError } from "../errors.js";
import { THINKING_LEVELS } from "../home/index.js";

/** The options `rlm(task, ...)` accepts; any other fails. */
export const SPAWN_OPTIONS = ["name", "model", "thinking", "spec", "kernel"] as const;
export const MAX_NAME_LENGTH = 64;
export const DEFAULT_MAX_DEPTH = 1;

/** Raised for a request the host refuses; its message goes back to the kernel as the error. */
export class SpawnRefused extends Error {}

export interface SpawnRequest {
	task: string;
	name?: string;
	model?: string;
	thinking?: ThinkingLevel;
	/** A sub-agent spec of the continual harness: its text tells the child its role. */
	spec?: string;
	/** `"local"`: the child's kernel runs on this machine, even when the parent's runs on a Jupyter Server. */
	kernel?: "local";
}

/** Check the kernel's payload `{task, options}`: a non-empty task, only known options, valid values. */
export function parseSpawnRequest(payload: Record<string, unknown>): SpawnRequest {
	const task = payload.task;
	if (typeof task !== "string" || task.trim() === "") {
		throw new SpawnRefused(
			'rlm(task): the task must be a non-empty string, e.g. await rlm("summarise src/parser.py").',
		);
	}
	const options = (payload.options ?? {}) as Record<string, unknown>;
	if (typeof options !== "object" || options === null || Array.isArray(options)) {
		throw new SpawnRefused(
			"rlm(): options must be keyword arguments (name=..., model=..., thinking=..., spec=..., kernel=...).",
		);
	}
	const unknown = Object.keys(options).filter((key) => !(SPAWN_OPTIONS as readonly string[]).includes(key));
	if (unknown.length > 0) {
		throw new SpawnRefused(
			`rlm(): unknown option${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}; only ${SPAWN_OPTIONS.join(", ")} are accepted. Remove ${unknown.length > 1 ? "them" : "it"} and call again.`,
		);
	}
	const request: SpawnRequest = { task };
	if (options.name !== undefined && options.name !== null) request.name = checkName(options.name);
	if (options.model !== undefined && options.model !== null) {
		if (typeof options.model !== "string" || options.model.trim() === "") {
			throw new SpawnRefused(
				'rlm(model=...): the model must be a string "provider/id"; see await rlm.find_models("query").',
			);
		}
		request.model = options.model.trim();
	}
	if (options.thinking !== undefined && options.thinking !== null) {
		if (!THINKING_LEVELS.includes(options.thinking as ThinkingLevel)) {
			throw new SpawnRefused(`rlm(thinking=...): must be one of ${THINKING_LEVELS.join(", ")}.`);
		}
		request.thinking = options.thinking as ThinkingLevel;
	}
	if (options.spec !== undefined && options.spec !== null) request.spec = checkName(options.spec, "rlm(spec=...)");
	if (options.kernel !== undefined && options.kernel !== null) {
		if (options.kernel !== "local") {
			throw new SpawnRefused(
				`rlm(kernel=${JSON.stringify(options.kernel)}): only "local" is accepted (a kernel on the user's machine); leave it out for a kernel where yours runs.`,
			);
		}
		request.kernel = "local";
	}
	return request;
}

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A valid sub-agent name, or a refusal naming the call it was given to (`call`). */
export function checkName(name: unknown, call = "rlm(name=...)"): string {
	if (typeof name !== "string" || !NAME_PATTERN.test(name)) {
		throw new SpawnRefused(
			`${call}: ${JSON.stringify(name)} is not a valid name; use letters, digits, ".", "_" and "-", starting with a letter or digit.`,
		);
	}
	if (name.length > MAX_NAME_LENGTH) {
		throw new SpawnRefused(
			`${call}: the name has ${name.length} characters; at most ${MAX_NAME_LENGTH} are allowed. Pick a shorter one.`,
		);
	}
	return name;
}

/** A readable default name from the task's first words (`fix-the-parser`), unique among `taken`. */
export function defaultName(task: string, taken: ReadonlySet<string>): string {
	const words = task
		.toLowerCase()
		.replace(/[^a-z0-9]+/g, " ")
		.trim()
		.split(" ")
		.filter(Boolean)
		.slice(0, 4);
	let base = words.join("-").slice(0, 40).replace(/-+$/, "") || "child";
	if (!/^[a-z0-9]/.test(base)) base = `child-${base}`;
	if (!taken.has(base)) return base;
	for (let n = 2; ; n++) {
		const candidate = `${base}-${n}`;
		if (!taken.has(candidate)) return candidate;
	}
}

/**
 * The deepest level a child may have: `RLM_MAX_DEPTH` in the environment, else `rlm.maxDepth` in
 * settings.json, else 1 (the root may spawn, children may not). A value that is not a whole number
 * of 0 or more is a `UserError` saying where it came from.
 */
export function resolveMaxDepth(env: NodeJS.ProcessEnv, setting: unknown, settingsPath = "settings.json"): number {
	const fromEnv = env.RLM_MAX_DEPTH;
	if (fromEnv !== undefined && fromEnv !== "") {
		if (!/^\d+$/.test(fromEnv.trim())) {
			throw new UserError(
				`RLM_MAX_DEPTH is ${JSON.stringify(fromEnv)}, not a whole number of 0 or more.`,
				"Set it to 0 (no sub-agents), 1 (the default: the root may spawn) or more, or unset it.",
				ExitCode.usage,
			);
		}
		return Number(fromEnv.trim());
	}
	if (setting === undefined) return DEFAULT_MAX_DEPTH;
	if (typeof setting !== "number" || !Number.isInteger(setting) || setting < 0) {
		throw new UserError(
			`"rlm": {"maxDepth": ...} in ${settingsPath} must be a whole number of 0 or more.`,
			'Write it like "rlm": {"maxDepth": 1}, or remove it for the default (1).',
			ExitCode.usage,
		);
	}
	return setting;
}
