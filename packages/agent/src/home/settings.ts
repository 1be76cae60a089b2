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
}

export const SETTINGS_KEYS: readonly (keyof Settings)[] = [
	"defaultModel",
	"thinkingLevel",
	"compaction",
	"packages",
	"rlm",
	"autonomous",
	"harness",
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
	return settings as Settings;
}
