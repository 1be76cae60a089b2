import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { RUNTIME_PYTHON_DIR } from "../tools/index.js";
import { SKILL_PACKAGE_FILE } from "./skill-file.js";

/** How long the import check of a skill may take. */
export const IMPORT_CHECK_TIMEOUT_MS = 30_000;

/**
 * Import the package in `dir` as `prime_skills.<module>` in a fresh Python process (the kernel's
 * interpreter, the same code `skills.load` runs) started with `env` (the kernel's, without keys:
 * the package is the model's code). Resolves with the failure's last lines, or undefined when it
 * imported cleanly.
 */
export function checkSkillImports(
	dir: string,
	module: string,
	python: string,
	env: Record<string, string>,
): Promise<string | undefined> {
	if (!existsSync(join(dir, SKILL_PACKAGE_FILE))) return Promise.resolve(`it has no ${SKILL_PACKAGE_FILE}`);
	return new Promise((resolve) => {
		execFile(
			python,
			["-m", "prime_agent_runtime.skills", dir, module],
			{
				cwd: dir,
				timeout: IMPORT_CHECK_TIMEOUT_MS,
				env: { ...env, PYTHONPATH: RUNTIME_PYTHON_DIR, PYTHONDONTWRITEBYTECODE: "1" },
			},
			(error, _stdout, stderr) => {
				if (!error) return resolve(undefined);
				if ((error as { killed?: boolean }).killed) {
					return resolve(`importing it did not finish within ${IMPORT_CHECK_TIMEOUT_MS / 1000} s`);
				}
				const lines = String(stderr).trim().split("\n");
				resolve(`importing it failed: ${lines.slice(-3).join(" | ") || error.message}`);
			},
		);
	});
}

/**
 * Put the folder `staged` at `<root>/<name>` in one rename (a skill of that name is replaced only
 * when `replace` is set). The copy is made inside `root` first, so the rename never crosses file
 * systems and a reader sees either no skill or the whole skill.
 */
export function placeSkillFolder(staged: string, root: string, name: string, replace: boolean): string {
	const target = join(root, name);
	if (existsSync(target) && !replace) throw new Error(`a skill folder already exists at ${target}`);
	mkdirSync(root, { recursive: true, mode: 0o700 });
	const suffix = `${process.pid}-${Date.now().toString(36)}`;
	const temp = join(root, `.incoming-${name}-${suffix}`);
	cpSync(staged, temp, { recursive: true, filter: (source) => !source.includes("__pycache__") });
	const old = join(root, `.replaced-${name}-${suffix}`);
	try {
		if (existsSync(target)) renameSync(target, old);
		renameSync(temp, target);
	} catch (error) {
		rmSync(temp, { recursive: true, force: true });
		if (existsSync(old) && !existsSync(target)) renameSync(old, target);
		throw error;
	}
	rmSync(old, { recursive: true, force: true });
	return target;
}
