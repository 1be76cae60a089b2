import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Skill } from "./discover.js";
import { readSkill } from "./discover.js";
import { checkSkillName, parseSkillFile, SKILL_FILE, SKILL_PACKAGE_FILE, skillModule } from "./skill-file.js";
import { checkSkillImports, placeSkillFolder } from "./skill-folder.js";

/** The newest characters of the trajectory the drafting call sees. */
export const CREATOR_TRAJECTORY_CHARS = 60_000;
/** Limits of a drafted skill. */
export const MAX_SKILL_FILES = 20;
export const MAX_SKILL_BYTES = 256 * 1024;

export const CREATOR_SYSTEM_PROMPT =
	"You package a recurring workflow from a coding agent's session as a reusable skill: a Python package plus a SKILL.md. Answer only with the file blocks asked for, nothing else.";

export interface SkillCreateOptions {
	name: string;
	/** What the skill should do, in the asker's words; default: the workflow of the session that recurs. */
	request?: string;
	/** The session as text, oldest first (the newest `CREATOR_TRAJECTORY_CHARS` are sent). */
	trajectory: string;
	/** The skills folder to write into. */
	root: string;
	/** `source` of the new skill in listings (`user` or `project`). */
	source: string;
	/** The kernel's interpreter, for the import check. */
	python: string;
	/** The import check's environment: the kernel's (no keys), as the drafted code is the model's. */
	env: Record<string, string>;
	/**
	 * Skills already found (usable, hidden and collided ones): a new skill never takes an existing
	 * name, nor one that imports as the same module (`csv_sum` beside `csv-sum`).
	 */
	existing: readonly Skill[];
	/** One model call: system prompt and user text in, the answer's text out (throws on failure). */
	ask(systemPrompt: string, text: string): Promise<string>;
}

export type SkillCreateResult =
	| { status: "created"; skill: Skill; files: string[]; report: string }
	| { status: "invalid"; problems: string[]; report: string };

/**
 * Draft a skill with the model from the session's trajectory, validate it (SKILL.md front matter
 * with this name and a description, safe file paths, within the limits, and the package imports
 * cleanly in a fresh Python process), then write it in one rename. Nothing is written unless
 * every check passed. A bad name, a taken one or one whose module is taken throws before the
 * model is asked.
 */
export async function createSkill(options: SkillCreateOptions): Promise<SkillCreateResult> {
	const nameProblem = checkSkillName(options.name);
	if (nameProblem) throw new Error(`the skill name "${options.name}" ${nameProblem}.`);
	const taken = options.existing.find((skill) => skill.name === options.name);
	if (taken) {
		throw new Error(
			`a skill named "${options.name}" already exists (${taken.source}, ${taken.dir}); pick another name or remove it with \`prime-agent skill remove ${options.name}\`.`,
		);
	}
	const module = skillModule(options.name);
	const rival = options.existing.find((skill) => skill.module === module);
	if (rival) {
		throw new Error(
			`the skill name "${options.name}" would import as prime_skills.${module}, as the skill "${rival.name}" (${rival.source}, ${rival.dir}) does (names that differ only in "-" and "_" are one module); pick a name that differs in more than that.`,
		);
	}
	const target = join(options.root, options.name);
	if (existsSync(target)) {
		throw new Error(
			`the folder ${target} is already there and is not a usable skill "${options.name}" (\`prime-agent skill list\` says what is wrong with it); pick another name, or fix or delete that folder.`,
		);
	}
	const answer = await options.ask(CREATOR_SYSTEM_PROMPT, draftRequest(options));
	const files = parseFileBlocks(answer);
	const problems = checkDraft(options.name, files);
	if (problems.length > 0) return invalid(options.name, problems);
	const staging = mkdtempSync(join(tmpdir(), "prime-agent-skill-draft-"));
	try {
		const folder = join(staging, options.name);
		for (const [path, text] of files) {
			mkdirSync(dirname(join(folder, path)), { recursive: true });
			writeFileSync(join(folder, path), text);
		}
		const importProblem = await checkSkillImports(folder, module, options.python, options.env);
		if (importProblem) return invalid(options.name, [`the package does not import cleanly: ${importProblem}`]);
		const dir = placeSkillFolder(folder, options.root, options.name, false);
		const skill = readSkill(dir, options.source, []) as Skill;
		const names = [...files.keys()].sort();
		return {
			status: "created",
			skill,
			files: names,
			report: `Created the skill "${skill.name}" in ${dir} (${names.join(", ")}): ${skill.description}\nLoad it with skills.load("${skill.name}"); it is listed in the system prompt from the next prompt on.`,
		};
	} finally {
		rmSync(staging, { recursive: true, force: true });
	}
}

function invalid(name: string, problems: string[]): SkillCreateResult {
	return {
		status: "invalid",
		problems,
		report: `The draft of the skill "${name}" did not validate, so nothing was written:\n${problems.map((problem) => `- ${problem}`).join("\n")}\nTry again with a more precise request.`,
	};
}

function draftRequest(options: SkillCreateOptions): string {
	const trajectory =
		options.trajectory.length <= CREATOR_TRAJECTORY_CHARS
			? options.trajectory
			: options.trajectory.slice(options.trajectory.length - CREATOR_TRAJECTORY_CHARS);
	const what = options.request?.trim() || "the workflow of this session most worth repeating";
	return `Create the skill "${options.name}". It should do: ${what}

Write each file as <file path="PATH">CONTENT</file>:
- ${SKILL_FILE}: YAML front matter between two "---" lines with \`name: ${options.name}\` and \`description: \` one sentence saying what it does and when to use it; then when and how to use it: the functions to call, with a short example starting \`mod = skills.load("${options.name}")\`.
- ${SKILL_PACKAGE_FILE}: the package, with functions (docstrings included) that do the workflow. Use the standard library and packages the session already used; importing it must run nothing but definitions.
- Further .py modules only when needed (import them relatively).

The session, oldest first (the newest part matters most):
<trajectory>
${trajectory}
</trajectory>`;
}

/** `<file path="...">...</file>` blocks of the answer, by path (a later block of a path wins). */
export function parseFileBlocks(answer: string): Map<string, string> {
	const files = new Map<string, string>();
	for (const match of answer.matchAll(/<file path="([^"]*)">\r?\n?([\s\S]*?)<\/file>/g)) {
		files.set(match[1] as string, (match[2] as string).replace(/\r?\n?$/, "\n"));
	}
	return files;
}

/** Everything wrong with a draft before anything is written (an empty list: nothing). */
function checkDraft(name: string, files: Map<string, string>): string[] {
	if (files.size === 0) return ['the answer held no <file path="..."> blocks'];
	const problems: string[] = [];
	for (const path of files.keys()) {
		if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]*(\/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$/.test(path) || path.includes("..")) {
			problems.push(`"${path}" is not a relative path inside the skill folder`);
		}
	}
	if (files.size > MAX_SKILL_FILES) problems.push(`it has ${files.size} files; at most ${MAX_SKILL_FILES}`);
	const bytes = [...files.values()].reduce((sum, text) => sum + Buffer.byteLength(text), 0);
	if (bytes > MAX_SKILL_BYTES) problems.push(`it holds ${bytes} bytes; at most ${MAX_SKILL_BYTES}`);
	if (!files.has(SKILL_PACKAGE_FILE)) problems.push(`it has no ${SKILL_PACKAGE_FILE}`);
	const skillMd = files.get(SKILL_FILE);
	if (skillMd === undefined) problems.push(`it has no ${SKILL_FILE}`);
	else {
		try {
			const parsed = parseSkillFile(skillMd, SKILL_FILE);
			if (parsed.name !== name) problems.push(`${SKILL_FILE} names the skill "${parsed.name}", not "${name}"`);
		} catch (error) {
			problems.push((error as Error).message);
		}
	}
	return problems;
}
