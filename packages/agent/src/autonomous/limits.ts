import { UserError } from "../errors.js";

/** What bounds an autonomous run. Tokens are input + output (cached tokens are not counted). */
export interface AutonomousLimits {
	/** Times the host goes on after the model would stop (a failing gate, an open goal). */
	continuations: number;
	/** Model answers in the run. */
	turns: number;
	tokens: number;
	timeMs: number;
}

export const DEFAULT_AUTONOMOUS_LIMITS: AutonomousLimits = {
	continuations: 3,
	turns: 12,
	tokens: 80_000,
	timeMs: 30 * 60_000,
};

export interface AutonomousConfig {
	gates: string[];
	/** Where the gates were set, as a user would edit it: `--gate` or `"autonomous.gates" in <settings.json>`. */
	gatesFrom: string;
	limits: AutonomousLimits;
}

/** `--autonomous` and its flags, as given on the command line (each optional). */
export interface AutonomousFlags {
	gates?: string[];
	maxContinuations?: string;
	maxTurns?: string;
	maxTokens?: string;
	maxMinutes?: string;
}

/** settings.json `"autonomous"`: `{gates, maxContinuations, maxTurns, maxTokens, maxMinutes}`. */
const SETTING_KEYS = ["gates", "maxContinuations", "maxTurns", "maxTokens", "maxMinutes"];

/**
 * The gates and limits of a run: flags over settings over the defaults. `--gate` flags replace the
 * settings' gates. Bad values are a `UserError` naming the flag or the settings file.
 */
export function resolveAutonomousConfig(
	settings: unknown,
	flags: AutonomousFlags,
	settingsPath: string,
): AutonomousConfig {
	const fromSettings = (settings ?? {}) as Record<string, unknown>;
	if (typeof fromSettings !== "object" || Array.isArray(fromSettings)) {
		throw new UserError(
			`"autonomous" in ${settingsPath} must be an object.`,
			'Write it as {"autonomous": {"gates": ["npm test"], "maxTurns": 12}}.',
		);
	}
	const unknown = Object.keys(fromSettings).filter((key) => !SETTING_KEYS.includes(key));
	if (unknown.length > 0) {
		throw new UserError(
			`Unknown key "${unknown[0]}" in "autonomous" of ${settingsPath}.`,
			`The keys are ${SETTING_KEYS.join(", ")}.`,
		);
	}
	let gates: string[] = [];
	let gatesFrom = `"autonomous.gates" in ${settingsPath}`;
	if (fromSettings.gates !== undefined) {
		if (
			!Array.isArray(fromSettings.gates) ||
			fromSettings.gates.some((gate) => typeof gate !== "string" || !gate.trim())
		)
			throw new UserError(
				`"autonomous.gates" in ${settingsPath} must be a list of shell commands.`,
				'Write it as "gates": ["npm test", "npm run lint"].',
			);
		gates = fromSettings.gates as string[];
	}
	if (flags.gates && flags.gates.length > 0) {
		gates = flags.gates;
		gatesFrom = "--gate on the command line";
	}
	for (const gate of gates) {
		if (!gate.trim()) throw new UserError("--gate needs a shell command.", 'Write it as --gate "npm test".');
	}
	const pick = (flag: string | undefined, flagName: string, key: string, fallback: number, scale = 1): number => {
		if (flag !== undefined) return positive(flag, flagName, "", scale);
		if (fromSettings[key] !== undefined)
			return positive(fromSettings[key], `"autonomous.${key}"`, ` in ${settingsPath}`, scale);
		return fallback;
	};
	const defaults = DEFAULT_AUTONOMOUS_LIMITS;
	return {
		gates,
		gatesFrom,
		limits: {
			continuations: pick(flags.maxContinuations, "--max-continuations", "maxContinuations", defaults.continuations),
			turns: pick(flags.maxTurns, "--max-turns", "maxTurns", defaults.turns),
			tokens: pick(flags.maxTokens, "--max-tokens", "maxTokens", defaults.tokens),
			timeMs: pick(flags.maxMinutes, "--max-minutes", "maxMinutes", defaults.timeMs, 60_000),
		},
	};
}

/** A whole number (minutes may be fractional) of at least 1 (continuations may be 0). */
function positive(value: unknown, name: string, where: string, scale: number): number {
	const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
	const minutes = scale !== 1;
	const continuations = name.toLowerCase().includes("continuations");
	const valid =
		typeof number === "number" &&
		Number.isFinite(number) &&
		(minutes ? number > 0 : Number.isInteger(number) && number >= (continuations ? 0 : 1));
	if (!valid) {
		throw new UserError(
			`${name}${where} must be ${minutes ? "a positive number of minutes" : continuations ? "a whole number of 0 or more" : "a whole number of 1 or more"}, not ${JSON.stringify(value)}.`,
			"Fix the value and retry.",
		);
	}
	return Math.round((number as number) * scale);
}

/** A time limit in words: `1 minute`, `0.05 minutes`, `90 minutes`. */
export function minutesText(ms: number): string {
	const minutes = ms / 60_000;
	return `${minutes} minute${minutes === 1 ? "" : "s"}`;
}
