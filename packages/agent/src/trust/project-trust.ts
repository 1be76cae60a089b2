import { realpathSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { projectRoot } from "../extensions/discover.js";
import {
	currentHash,
	findProjectCode,
	PROJECT_SKILLS,
	type ProjectCodeItem,
	type ProjectCodeKind,
} from "./project-code.js";
import { readApprovals } from "./store.js";

/** How a person approves project code, said after everything held back. */
export const HOW_TO_APPROVE = "run prime-agent in this folder to review them, or pass --trust-project";

/**
 * What of a project's code may run in this session. Decided once when the session starts, from
 * the approvals in the agent home; a skill is checked again against its content when it is loaded.
 * The agent home's own configuration is the user's and is not judged here.
 */
export interface ProjectTrust {
	/** The project root (real path). */
	readonly root: string;
	/** `--trust-project`: everything in the project runs, and nothing is recorded. */
	readonly everything: boolean;
	/** The project's code as it was when the session started. */
	readonly items: readonly ProjectCodeItem[];
	/** Items that do not run: never approved, or changed since they were approved. */
	readonly held: readonly ProjectCodeItem[];
	/** Whether the project's item of this kind may run (true when the project has none). Not for skills: see `skillRefusal`. */
	allows(kind: Exclude<ProjectCodeKind, "skill">): boolean;
	/**
	 * Undefined when the skill in `dir` may run now; else why not and how to approve it. Skills of
	 * the agent home and of the home's packages always may.
	 */
	skillRefusal(dir: string, name: string): string | undefined;
	/** Why a held item does not run: `not approved`, or `changed since it was approved`. */
	heldState(item: ProjectCodeItem): string;
	/** One line per kind of code held back: what did not run and how to approve it. */
	notices(): string[];
}

/** The trust of the project `cwd` belongs to, read from `agentHome`'s approvals. */
export function projectTrust(options: { cwd: string; agentHome: string; everything?: boolean }): ProjectTrust {
	const { root, items } = findProjectCode(options.cwd);
	const everything = options.everything === true;
	const read = readApprovals(options.agentHome, root);
	const approved = (item: ProjectCodeItem, hash = item.hash) => read.approvals[item.key]?.sha256 === hash;
	const held = everything ? [] : items.filter((item) => !approved(item));
	const allows = (kind: ProjectCodeKind) => !held.some((item) => item.kind === kind);
	const changed = (item: ProjectCodeItem) => read.approvals[item.key] !== undefined;
	const packageDirs = items
		.find((item) => item.kind === "packages")
		?.details.map((spec) => (spec.startsWith("npm:") ? join(root, ".prime", "agent", "packages") : spec));
	return {
		root,
		everything,
		items,
		held,
		allows,
		heldState: (item) => (changed(item) ? "changed since it was approved" : "not approved"),
		skillRefusal(dir, name) {
			if (everything) return undefined;
			// Judged by where the skill was found and where it really is: a link in .prime/skills to
			// a folder elsewhere is still the project's.
			const paths = [resolve(dir), realPath(dir)];
			const under = (base: string) => paths.find((path) => inside(path, base) || inside(path, realPath(base)));
			if (!allows("packages") && packageDirs?.some((packageDir) => under(packageDir))) {
				return `the skill "${name}" comes from an extension package of .prime/agent/settings.json, which is not approved, so its code is not run: ${HOW_TO_APPROVE}.`;
			}
			const bases = [join(projectRoot(options.cwd), PROJECT_SKILLS), join(root, PROJECT_SKILLS)];
			const base = bases.find((candidate) => paths.some((path) => inside(path, candidate)));
			if (!base) return undefined;
			const within = paths.find((path) => inside(path, base)) as string;
			const key = [PROJECT_SKILLS, ...relative(base, within).split(sep).filter(Boolean)].join("/");
			// Approvals are read again: one given in another window since this session started counts.
			const approval = readApprovals(options.agentHome, root).approvals[key];
			const now = currentHash({ kind: "skill", path: join(root, key) }, root);
			if (approval && approval.sha256 === now) return undefined;
			const state = approval ? "changed since it was approved" : "not approved";
			return `the project skill "${name}" (${key}) is ${state}, so its code is not run: run prime-agent in this folder to review it, or pass --trust-project.`;
		},
		notices() {
			const lines: string[] = [];
			if (read.problem)
				lines.push(`Project approvals could not be read (${read.problem}); nothing of the project runs.`);
			const of = (kind: ProjectCodeKind) => held.filter((item) => item.kind === kind);
			const state = (found: ProjectCodeItem[]) =>
				found.every(changed) ? "changed since they were approved" : "not approved";
			const mcp = of("mcp");
			if (mcp.length > 0)
				lines.push(`Project MCP servers in .prime/mcp.json are ${state(mcp)}, not started: ${HOW_TO_APPROVE}.`);
			const skills = of("skill");
			if (skills.length > 0) {
				const names = skills.flatMap((item) => item.names).join(", ");
				lines.push(
					`Project skills in .prime/skills (${names}) are ${state(skills)}: their code does not run; ${HOW_TO_APPROVE}.`,
				);
			}
			const extensions = of("extensions");
			if (extensions.length > 0)
				lines.push(
					`Project extensions in .prime/agent/extensions are ${state(extensions)}, not loaded: ${HOW_TO_APPROVE}.`,
				);
			const packages = of("packages");
			if (packages.length > 0)
				lines.push(
					`Extension packages of .prime/agent/settings.json are ${state(packages)}, not loaded: ${HOW_TO_APPROVE}.`,
				);
			return lines;
		},
	};
}

function realPath(path: string): string {
	try {
		return realpathSync(path);
	} catch {
		return path;
	}
}

function inside(path: string, dir: string): boolean {
	return path === dir || path.startsWith(`${dir}${sep}`);
}
