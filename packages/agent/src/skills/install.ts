import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { ExitCode, UserError } from "../errors.js";
import {
	discoverSkills,
	existingSkills,
	packageSkillDirs,
	projectSkillsDir,
	type Skill,
	type SkillDiscovery,
	skillRoots,
	userSkillsDir,
} from "./discover.js";
import { checkSkillImports, placeSkillFolder } from "./skill-folder.js";

export interface SkillScope {
	agentHome: string;
	cwd: string;
	/** The project's `.prime/skills` instead of the agent home's `skills`. */
	local: boolean;
}

/** How `installSkills` checks and places what it installs. */
export interface SkillInstallOptions {
	/** Replace a skill folder of the same name already in the scope (without it, nothing is installed). */
	force: boolean;
	/** The kernel's interpreter, for the import check (asked for only when a skill has a package). */
	python(): string;
	/** The import check's environment: without keys, as the package is someone else's code. */
	env: Record<string, string>;
	log(line: string): void;
}

export function scopeDir(scope: SkillScope): string {
	return scope.local ? projectSkillsDir(scope.cwd) : userSkillsDir(scope.agentHome);
}

/**
 * Install skills from a folder (one skill, a folder of skill folders, or a package holding several) or from npm
 * (`npm:name[@version]`, installed into a temporary folder and copied out). Nothing is installed
 * unless every skill passes: its SKILL.md parses, no two share a name or a module (`csv-sum` and
 * `csv_sum`, here or among the skills already found), its folder is not in the scope yet (unless
 * `force`), and its package imports in a separate Python process. Returns the skills installed.
 */
export async function installSkills(source: string, scope: SkillScope, options: SkillInstallOptions): Promise<Skill[]> {
	let temp: string | undefined;
	let dir: string;
	if (source.startsWith("npm:")) {
		const spec = source.slice("npm:".length);
		if (spec === "") throw new UserError(`"${source}" names no package.`, "Write npm:name or npm:name@1.2.3.");
		temp = mkdtempSync(join(tmpdir(), "prime-agent-skill-"));
		options.log(`Installing ${spec} with npm ...`);
		try {
			execFileSync("npm", ["install", "--prefix", temp, "--no-audit", "--no-fund", "--ignore-scripts", spec], {
				stdio: ["ignore", "ignore", "pipe"],
			});
		} catch (error) {
			rmSync(temp, { recursive: true, force: true });
			const stderr = String((error as { stderr?: unknown }).stderr ?? "").trim();
			throw new UserError(
				`npm could not install ${spec}: ${stderr.split("\n").slice(-3).join(" ") || (error as Error).message}`,
				"Check the name and version (and your network or registry settings), then retry.",
			);
		}
		dir = installedPackageDir(temp);
	} else {
		dir = isAbsolute(source) ? source : resolve(scope.cwd, source);
		if (!existsSync(dir)) {
			throw new UserError(`No folder at ${dir}.`, "Pass a skill folder (holding SKILL.md), or npm:name@version.");
		}
	}
	try {
		// A package's skill folders, else the folder itself: one skill, or a folder of skill folders.
		const sourceRoots = packageSkillDirs(dir);
		if (sourceRoots.length === 0) sourceRoots.push(dir);
		const found = discoverSkills(sourceRoots.map((root) => ({ dir: root, source, writable: false })));
		if (found.problems.length > 0) {
			const problem = found.problems[0] as SkillDiscovery["problems"][number];
			throw new UserError(`Nothing was installed: ${problem.message}`, "Fix the SKILL.md, then install again.");
		}
		const twin = found.shadowed[0];
		if (twin) {
			const first = found.skills.find((skill) => skill.name === twin.name) as Skill;
			throw new UserError(
				`Nothing was installed: ${first.dir} and ${twin.dir} both hold the skill "${twin.name}".`,
				'Rename one of them (the "name" in its SKILL.md), then install again.',
			);
		}
		if (found.skills.length === 0) {
			throw new UserError(
				`${dir} holds no skill.`,
				'A skill is a folder with SKILL.md (front matter "name" and "description") and an __init__.py.',
			);
		}
		const root = scopeDir(scope);
		const present = existingSkills(discoverSkills(skillRoots(scope)));
		for (const skill of found.skills) {
			refuseModuleRival(skill, present);
			const target = join(root, skill.name);
			if (existsSync(target) && !options.force) {
				const remove = `\`prime-agent skill remove ${skill.name}${scope.local ? " --local" : ""}\``;
				throw new UserError(
					`Nothing was installed: ${target} is already there (the skill "${skill.name}").`,
					`Add --force to replace it, or remove it first with ${remove}.`,
				);
			}
		}
		for (const skill of found.skills) {
			if (!skill.hasPackage) continue;
			const problem = await checkSkillImports(skill.dir, skill.module, options.python(), options.env);
			if (problem) {
				throw new UserError(
					`Nothing was installed: the skill "${skill.name}" (${skill.dir}) does not import cleanly: ${problem}`,
					"Fix its package so that it imports (skills.load would fail the same way), then install again.",
				);
			}
		}
		const installed = found.skills.map((skill) => ({
			...skill,
			dir: placeSkillFolder(skill.dir, root, skill.name, options.force),
			source: scope.local ? "project" : "user",
		}));
		const winners = discoverSkills(skillRoots(scope)).skills;
		for (const skill of installed) {
			const winner = winners.find((entry) => entry.name === skill.name);
			if (!winner || winner.dir === skill.dir) continue;
			const remove =
				winner.source === "project"
					? `; remove that one with \`prime-agent skill remove ${skill.name} --local\` to use this one here`
					: "";
			options.log(`In this project the skill "${skill.name}" of ${winner.dir} (${winner.source}) hides it${remove}.`);
		}
		return installed;
	} finally {
		if (temp) rmSync(temp, { recursive: true, force: true });
	}
}

/** A skill of another name already found that imports as the same module makes the install a refusal. */
function refuseModuleRival(skill: Skill, present: readonly Skill[]): void {
	const rival = present.find((other) => other.module === skill.module && other.name !== skill.name);
	if (!rival) return;
	const remove = rival.source.startsWith("package")
		? "remove its package with `prime-agent package remove`"
		: `remove it with \`prime-agent skill remove ${rival.name}${rival.source === "project" ? " --local" : ""}\``;
	throw new UserError(
		`Nothing was installed: the skill "${skill.name}" (${skill.dir}) would import as prime_skills.${skill.module}, as the skill "${rival.name}" (${rival.source}, ${rival.dir}) does; names that differ only in "-" and "_" are one module.`,
		`Rename it (the "name" in its SKILL.md), or ${remove}; then install again.`,
	);
}

/** Remove a skill the scope holds (a package's skills go with `prime-agent package remove`). */
export function removeSkill(name: string, scope: SkillScope): string {
	const root = scopeDir(scope);
	const found = discoverSkills([{ dir: root, source: "", writable: true }]).skills.find((skill) => skill.name === name);
	if (!found) {
		const elsewhere = discoverSkills(skillRoots(scope)).skills.find((skill) => skill.name === name);
		throw new UserError(
			`No skill "${name}" in ${root}.`,
			elsewhere
				? `It comes from ${elsewhere.source} (${elsewhere.dir})${elsewhere.source.startsWith("package") ? "; remove the package with `prime-agent package remove`" : scope.local ? "; drop --local to remove it from the agent home" : "; add --local to remove it from this project"}.`
				: "List skills with `prime-agent skill list`.",
			ExitCode.usage,
		);
	}
	rmSync(found.dir, { recursive: true, force: true });
	return found.dir;
}

/** The one package npm installed into an empty prefix. */
function installedPackageDir(prefix: string): string {
	const manifest = JSON.parse(readFileSync(join(prefix, "package.json"), "utf8")) as {
		dependencies?: Record<string, string>;
	};
	const name = Object.keys(manifest.dependencies ?? {})[0];
	if (!name) throw new UserError("npm installed no package.", "Check the package name and retry.");
	return join(prefix, "node_modules", name);
}
