import type { ThinkingLevel } from "@mariozechner/pi-agent-core";
import { UserError } from "../errors.js";
import { readJsonFile } from "./files.js";

/** settings.json: every key is optional. */
export interface Settings {
	/** Model used when `--model` is not given, written `provider/id`. */
	defaultModel?: string;
	/** Reasoning effort for models that support it. Default `off`. */
	thinkingLevel?: ThinkingLevel;
	/** `{enabled, reserveTokens, keepRecentTokens}`; validated by the compaction module. */
	compaction?: unknown;
	/** Extension packages: folder paths or `npm:name@version` (managed by `prime-agent package`). */
	packages?: string[];
	/** Sub-agents: `{maxDepth}` (default 1; `RLM_MAX_DEPTH` overrides it). */
	rlm?: { maxDepth?: number };
	/** `--autonomous`: `{gates, maxContinuations, maxTurns, maxTokens, maxMinutes}`; validated by the autonomous module. */
	autonomous?: unknown;
	/** The continual harness: `{autoRefine}` (default true); validated by the harness module. */
	harness?: unknown;
	/**
	 * The kernel. `env.keep` names variables passed through although they look like keys (the
	 * kernel, gates and `%%bash` start without provider keys and `*_TOKEN`-like names). `url` runs
	 * the kernels on that Jupyter Server (`--kernel-url` and `PRIME_AGENT_KERNEL_URL` win over it),
	 * with the token from `JUPYTER_TOKEN` or the variable `tokenEnv` names, the kernelspec
	 * `kernelName` (default `python3`) and the working folder `cwd` (relative to the server's root).
	 */
	kernel?: { env?: { keep?: string[] }; url?: string; tokenEnv?: string; kernelName?: string; cwd?: string };
}

export const SETTINGS_KEYS: readonly (keyof Settings)[] = [
	"defaultModel",
	"thinkingLevel",
	"compaction",
	"packages",
	"rlm",
	"autonomous",
	"harness",
	"kernel",
];
/** Every thinking level, in order (for `--thinking` and `thinkingLevel`). */
export const THINKING_LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];

/** Load and validate settings.json; unknown keys are reported by `doctor`, not rejected here. */
export function loadSettings(path: string): Settings {
	const raw = readJsonFile(path);
	if (raw === undefined) return {};
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
		throw new UserError(
			`${path} must hold a JSON object.`,
			`Write it as {"defaultModel": "anthropic/claude-sonnet-4-5"}.`,
		);
	}
	const settings = raw as Record<string, unknown>;
	if (settings.defaultModel !== undefined && typeof settings.defaultModel !== "string") {
		throw new UserError(`"defaultModel" in ${path} must be a string like "openai/gpt-5".`, "Fix the value and retry.");
	}
	if (settings.thinkingLevel !== undefined && !THINKING_LEVELS.includes(settings.thinkingLevel as ThinkingLevel)) {
		throw new UserError(
			`"thinkingLevel" in ${path} must be one of ${THINKING_LEVELS.join(", ")}.`,
			"Fix the value and retry.",
		);
	}
	checkKernelSettings(settings.kernel, path);
	return settings as Settings;
}

/** The variables `kernel.env.keep` passes through to the kernel (none when unset). */
export function kernelEnvKeep(settings: Settings): string[] {
	return settings.kernel?.env?.keep ?? [];
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function checkKernelSettings(kernel: unknown, path: string): void {
	if (kernel === undefined) return;
	const example = 'Write it as "kernel": {"env": {"keep": ["GITHUB_TOKEN"]}}.';
	const serverExample =
		'Write it as "kernel": {"url": "http://gpu-box:8888", "tokenEnv": "JUPYTER_TOKEN", "kernelName": "python3", "cwd": "work"}.';
	const isObject = (value: unknown) => typeof value === "object" && value !== null && !Array.isArray(value);
	if (!isObject(kernel)) throw new UserError(`"kernel" in ${path} must be an object.`, example);
	const { env, url, tokenEnv, kernelName, cwd, ...others } = kernel as Record<string, unknown>;
	const other = Object.keys(others)[0];
	if (other !== undefined) throw new UserError(`"kernel.${other}" in ${path} is not a known key.`, example);
	for (const [key, value] of Object.entries({ url, kernelName, cwd })) {
		if (value !== undefined && (typeof value !== "string" || value.trim() === ""))
			throw new UserError(`"kernel.${key}" in ${path} must be a non-empty string.`, serverExample);
	}
	if (tokenEnv !== undefined && (typeof tokenEnv !== "string" || !ENV_NAME.test(tokenEnv)))
		throw new UserError(
			`"kernel.tokenEnv" in ${path} must name an environment variable (letters, digits and _), not hold the token.`,
			serverExample,
		);
	if (env === undefined) return;
	if (!isObject(env)) throw new UserError(`"kernel.env" in ${path} must be an object.`, example);
	const { keep, ...rest } = env as Record<string, unknown>;
	const extra = Object.keys(rest)[0];
	if (extra !== undefined) throw new UserError(`"kernel.env.${extra}" in ${path} is not a known key.`, example);
	if (keep === undefined) return;
	const bad = Array.isArray(keep) ? keep.find((name) => typeof name !== "string" || !ENV_NAME.test(name)) : keep;
	if (!Array.isArray(keep) || bad !== undefined) {
		throw new UserError(
			`"kernel.env.keep" in ${path} must be a list of environment variable names${Array.isArray(keep) ? `; ${JSON.stringify(bad)} is not one` : ""}.`,
			example,
		);
	}
}
