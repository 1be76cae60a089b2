import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { installedPackages, packageScope, projectRoot } from "../extensions/index.js";
import { parseSkillFile, SKILL_FILE, SKILL_PACKAGE_FILE, skillModule } from "./skill-file.js";

/** A skill found on disk. */
export interface Skill {
	name: string;
	description: string;
	/** The skill's folder (its Python package). */
	dir: string;
	/** Its module name under `prime_skills`. */
	module: string;
	/** Whether the folder has an `__init__.py` (a skill may be instructions only). */
	hasPackage: boolean;
	/** `project`, `user`, or `package <spec>`. */
	source: string;
}

/** A folder where skills are looked for, with what to call it in listings. */
export interface SkillRoot {
	dir: string;
	source: string;
	/** Skills here are managed by `prime-agent skill install|remove` and the skill creator. */
	writable: boolean;
}

export interface SkillDiscovery {
	/** Usable skills, sorted by name; for a name found twice, the first root wins. */
	skills: Skill[];
	/** Skills hidden by one of the same name in an earlier root. */
	shadowed: Skill[];
	/**
	 * Skills of different names that import as one module (`csv-sum` and `csv_sum` are both
	 * `prime_skills.csv_sum`), sorted by name: none of them is usable, wherever each was found (a
	 * project's skill may hide the home's of the same name, never one of another name), and a
	 * problem names them all.
	 */
	collided: Skill[];
	/** Folders that look like skills but cannot be used, with why. */
	problems: { path: string; message: string }[];
}

/** `<project>/.prime/skills`. */
export function projectSkillsDir(cwd: string): string {
	return join(projectRoot(cwd), ".prime", "skills");
}

/** `<agent home>/skills`. */
export function userSkillsDir(agentHome: string): string {
	return join(agentHome, "skills");
}

/**
 * Where skills come from, in the order they win: the project's `.prime/skills/`, the agent
 * home's `skills/`, then the skills shipped by installed extension packages (their package.json
 * `primeAgent.skills` folders, else their `skills/` folder).
 */
export function skillRoots(options: { agentHome: string; cwd: string }): SkillRoot[] {
	const roots: SkillRoot[] = [
		{ dir: projectSkillsDir(options.cwd), source: "project", writable: true },
		{ dir: userSkillsDir(options.agentHome), source: "user", writable: true },
	];
	for (const local of [true, false]) {
		let packages: ReturnType<typeof installedPackages> = [];
		try {
			packages = installedPackages(packageScope({ agentHome: options.agentHome, cwd: options.cwd, local }));
		} catch {
			continue; // a broken settings file is reported where packages are loaded
		}
		for (const pkg of packages) {
			for (const dir of packageSkillDirs(pkg.dir)) roots.push({ dir, source: `package ${pkg.spec}`, writable: false });
		}
	}
	return roots;
}

/** The skill folders a package ships: `primeAgent.skills` in its package.json, else `skills/`, else itself. */
export function packageSkillDirs(dir: string): string[] {
	if (existsSync(join(dir, SKILL_FILE))) return [dir];
	try {
		const json = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { primeAgent?: { skills?: unknown } };
		const listed = json.primeAgent?.skills;
		if (Array.isArray(listed))
			return listed.filter((item): item is string => typeof item === "string").map((item) => resolve(dir, item));
	} catch {
		// no manifest, or not JSON: only the conventional folder
	}
	return existsSync(join(dir, "skills")) ? [join(dir, "skills")] : [];
}

/** A listing's line for a folder that looks like a skill but cannot be used (the message names its SKILL.md). */
export function skillProblemLine(problem: SkillDiscovery["problems"][number]): string {
	return `Left out: ${problem.message}`;
}

/** Every skill under `roots` (a root may itself be one skill's folder). Never throws. */
export function discoverSkills(roots: readonly SkillRoot[]): SkillDiscovery {
	const found: SkillDiscovery = { skills: [], shadowed: [], collided: [], problems: [] };
	const byName = new Map<string, Skill>();
	for (const root of roots) {
		for (const dir of skillFolders(root.dir)) {
			const skill = readSkill(dir, root.source, found.problems);
			if (!skill) continue;
			if (byName.has(skill.name)) found.shadowed.push(skill);
			else byName.set(skill.name, skill);
		}
	}
	const byModule = new Map<string, Skill[]>();
	for (const skill of [...byName.values()].sort(byNameOrder)) {
		byModule.set(skill.module, [...(byModule.get(skill.module) ?? []), skill]);
	}
	for (const group of byModule.values()) {
		if (group.length === 1) {
			found.skills.push(group[0] as Skill);
			continue;
		}
		found.collided.push(...group);
		found.problems.push({ path: join((group[0] as Skill).dir, SKILL_FILE), message: moduleCollision(group) });
	}
	return found;
}

/**
 * Why skills of different names that import as one module are left out: names them all, with
 * their folders, and what to do.
 */
export function moduleCollision(group: readonly Skill[]): string {
	const named = group.map((skill) => `"${skill.name}" (${skill.dir})`);
	const list = `${named.slice(0, -1).join(", ")} and ${named.at(-1)}`;
	const module = `prime_skills.${(group[0] as Skill).module} (names that differ only in "-" and "_" are one module)`;
	return group.length === 2
		? `the skills ${list} both import as ${module}, so neither is loaded; rename one of them (the "name" in its SKILL.md) or remove it.`
		: `the skills ${list} all import as ${module}, so none of them is loaded; rename all but one (the "name" in its SKILL.md) or remove them.`;
}

/** Every skill found, usable or not: what a new skill's name and module must not repeat. */
export function existingSkills(found: SkillDiscovery): Skill[] {
	return [...found.skills, ...found.shadowed, ...found.collided];
}

function byNameOrder(a: Skill, b: Skill): number {
	return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Skill folders in a root: the root itself when it holds a SKILL.md, else its sub-folders that do. */
function skillFolders(root: string): string[] {
	if (!existsSync(root)) return [];
	if (existsSync(join(root, SKILL_FILE))) return [root];
	let names: string[];
	try {
		names = readdirSync(root).sort();
	} catch {
		return [];
	}
	return names
		.filter((name) => !name.startsWith("."))
		.map((name) => join(root, name))
		.filter((dir) => isDirectory(dir) && existsSync(join(dir, SKILL_FILE)));
}

export function readSkill(dir: string, source: string, problems: SkillDiscovery["problems"]): Skill | undefined {
	const file = join(dir, SKILL_FILE);
	try {
		const parsed = parseSkillFile(readFileSync(file, "utf8"), file);
		return {
			name: parsed.name,
			description: parsed.description,
			dir,
			module: skillModule(parsed.name),
			hasPackage: existsSync(join(dir, SKILL_PACKAGE_FILE)),
			source,
		};
	} catch (error) {
		problems.push({ path: file, message: (error as Error).message });
		return undefined;
	}
}

function isDirectory(path: string): boolean {
	try {
		return statSync(path).isDirectory();
	} catch {
		return false;
	}
}
