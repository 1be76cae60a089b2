import { parse } from "yaml";

/** The file that makes a folder a skill. */
export const SKILL_FILE = "SKILL.md";
/** The Python package of a skill is its folder: this file makes it importable. */
export const SKILL_PACKAGE_FILE = "__init__.py";
export const MAX_NAME_CHARS = 64;
export const MAX_DESCRIPTION_CHARS = 1024;

/** What the front matter of a SKILL.md says, and the instructions after it. */
export interface SkillFile {
	name: string;
	description: string;
	/** The text after the front matter: when and how to use the skill. */
	body: string;
}

/** A SKILL.md that cannot be used; the message names the file and what is wrong. */
export class SkillFileError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "SkillFileError";
	}
}

/** Lower-case letters and digits in words joined by `-` or `_`, at most 64 characters. */
export function checkSkillName(name: string): string | undefined {
	if (name.length === 0) return "is empty";
	if (name.length > MAX_NAME_CHARS) return `is longer than ${MAX_NAME_CHARS} characters`;
	if (!/^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$/.test(name)) {
		return "must be lower-case letters and digits in words joined by - or _ (starting with a letter), e.g. pdf-tables";
	}
	return undefined;
}

/** The Python module a skill imports as (`prime_skills.<module>`): its name with `-` as `_`. */
export function skillModule(name: string): string {
	return name.replace(/-/g, "_");
}

/**
 * Parse a SKILL.md: YAML front matter between `---` lines with `name` and `description`, then the
 * instructions. `path` is only used in messages.
 */
export function parseSkillFile(text: string, path: string): SkillFile {
	const match = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/.exec(text.replace(/^\uFEFF/, ""));
	if (!match) {
		throw new SkillFileError(
			`${path} has no front matter: start it with a "---" line, then "name: ..." and "description: ...", then "---".`,
		);
	}
	let front: unknown;
	try {
		front = parse(match[1] as string);
	} catch (error) {
		throw new SkillFileError(`${path}: the front matter is not valid YAML (${yamlProblem(error as Error)}).`);
	}
	if (typeof front !== "object" || front === null || Array.isArray(front)) {
		throw new SkillFileError(`${path}: the front matter must be "key: value" lines with name and description.`);
	}
	const fields = front as Record<string, unknown>;
	if (typeof fields.name !== "string")
		throw new SkillFileError(`${path}: "name" in the front matter must be a string.`);
	const nameProblem = checkSkillName(fields.name);
	if (nameProblem) throw new SkillFileError(`${path}: "name" ${nameProblem}.`);
	const description = typeof fields.description === "string" ? fields.description.trim() : "";
	if (description === "") {
		throw new SkillFileError(
			`${path}: "description" in the front matter is missing or empty; say what the skill does.`,
		);
	}
	if (description.length > MAX_DESCRIPTION_CHARS) {
		throw new SkillFileError(`${path}: "description" is longer than ${MAX_DESCRIPTION_CHARS} characters.`);
	}
	return { name: fields.name, description, body: (match[2] as string).trim() };
}

/** The YAML parser's first line, its line number counted in the file (the front matter starts on line 2). */
function yamlProblem(error: Error): string {
	const first = (error.message.split("\n")[0] ?? "").replace(/:\s*$/, "");
	return first.replace(/ at line (\d+), column (\d+)$/, (_, line: string, column: string) => {
		return ` at line ${Number(line) + 1}, column ${column}`;
	});
}
