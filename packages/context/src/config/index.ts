import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { resolveAgentDir } from "../archive/paths.js";
import { type ContextConfig, DEFAULT_CONFIG } from "../types.js";

export const CONFIG_FILE_NAME = "prime-context.json";

/** One rejected setting. Never fatal: the setting is ignored and the next layer's value applies. */
export interface ConfigProblem {
	file: string;
	/** The offending key, or `(file)` when the file as a whole is unusable. */
	key: string;
	/** The bad value as written (or the parse error for malformed JSON). */
	value: unknown;
	/** What would have been accepted. */
	rule: string;
}

export interface LoadedConfig {
	config: ContextConfig;
	problems: ConfigProblem[];
	/** The files consulted, lowest precedence first, and whether each exists. */
	files: { path: string; scope: "global" | "project"; found: boolean }[];
}

type Rule = { describe: string; accepts: (value: unknown) => boolean };

const positiveInteger = (min: number): Rule => ({
	describe: `an integer of at least ${min}`,
	accepts: (value) => typeof value === "number" && Number.isSafeInteger(value) && value >= min,
});

/** Every key the file may hold, with its rule. */
export const CONFIG_RULES: Record<keyof ContextConfig, Rule> = {
	enabled: { describe: "true or false", accepts: (value) => typeof value === "boolean" },
	minTextBytes: positiveInteger(1),
	// Below 512 bytes a capsule cannot keep its recovery boundary.
	capsuleMaxBytes: positiveInteger(512),
	readMaxBytes: positiveInteger(1024),
	ageing: { describe: "true or false", accepts: (value) => typeof value === "boolean" },
	ageingWindow: positiveInteger(1),
};

/** The nearest ancestor of `cwd` holding `.git` (directory or worktree file), else `cwd` itself. */
export function findRepoRoot(cwd: string): string {
	const start = resolve(cwd);
	for (let dir = start; ; dir = dirname(dir)) {
		if (existsSync(join(dir, ".git"))) return dir;
		if (dirname(dir) === dir) return start;
	}
}

/** The global file (under PRIME_AGENT_DIR or ~/.prime/agent) and the project file (under the repo root). */
export function configFiles(cwd: string, env: NodeJS.ProcessEnv = process.env): { global: string; project: string } {
	return {
		global: join(resolveAgentDir(env), CONFIG_FILE_NAME),
		project: join(findRepoRoot(cwd), ".prime", "agent", CONFIG_FILE_NAME),
	};
}

/**
 * Checks one parsed file. Unknown keys and invalid values become problems; valid values are kept.
 * Pure, so hosts can validate settings from anywhere.
 */
export function validateConfig(
	raw: unknown,
	file: string,
): { values: Partial<ContextConfig>; problems: ConfigProblem[] } {
	const values: Partial<ContextConfig> = {};
	const problems: ConfigProblem[] = [];
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
		problems.push({ file, key: "(file)", value: raw, rule: "the file must hold one JSON object" });
		return { values, problems };
	}
	for (const [key, value] of Object.entries(raw)) {
		const rule = CONFIG_RULES[key as keyof ContextConfig];
		if (!rule) {
			problems.push({ file, key, value, rule: `unknown key; allowed keys: ${Object.keys(CONFIG_RULES).join(", ")}` });
		} else if (!rule.accepts(value)) {
			problems.push({ file, key, value, rule: `must be ${rule.describe}` });
		} else {
			(values as Record<string, unknown>)[key] = value;
		}
	}
	return { values, problems };
}

/** One line a person can act on: file, key, bad value, rule, and what happens instead. */
export function describeProblem(problem: ConfigProblem): string {
	const shown = problem.key === "(file)" ? String(problem.value) : JSON.stringify(problem.value);
	const fallback = problem.key === "(file)" ? "the file is ignored" : "the value is ignored";
	return `${problem.file}: ${problem.key} = ${shown}: ${problem.rule}; ${fallback}`;
}

/**
 * Reads the global file, then the project file over it. Never throws for bad content: malformed JSON,
 * wrong types and out-of-range values fall back (project over global over default) and come back as problems.
 */
export async function loadConfig(
	options: { cwd?: string; env?: NodeJS.ProcessEnv; overrides?: Partial<ContextConfig> } = {},
): Promise<LoadedConfig> {
	const paths = configFiles(options.cwd ?? process.cwd(), options.env ?? process.env);
	const config: ContextConfig = { ...DEFAULT_CONFIG };
	const problems: ConfigProblem[] = [];
	const files: LoadedConfig["files"] = [];
	const layers: ["global" | "project", string][] = [["global", paths.global]];
	if (paths.project !== paths.global) layers.push(["project", paths.project]);
	for (const [scope, path] of layers) {
		let text: string;
		try {
			text = await readFile(path, "utf8");
		} catch (error) {
			const code = (error as NodeJS.ErrnoException).code;
			files.push({ path, scope, found: false });
			if (code !== "ENOENT" && code !== "ENOTDIR") {
				problems.push({
					file: path,
					key: "(file)",
					value: (error as Error).message,
					rule: "the file must be readable",
				});
			}
			continue;
		}
		files.push({ path, scope, found: true });
		let raw: unknown;
		try {
			raw = JSON.parse(text);
		} catch (error) {
			problems.push({
				file: path,
				key: "(file)",
				value: (error as Error).message,
				rule: "the file must be valid JSON",
			});
			continue;
		}
		const checked = validateConfig(raw, path);
		Object.assign(config, checked.values);
		problems.push(...checked.problems);
	}
	if (options.overrides) {
		const checked = validateConfig(options.overrides, "(caller)");
		Object.assign(config, checked.values);
		problems.push(...checked.problems);
	}
	return { config, problems, files };
}
