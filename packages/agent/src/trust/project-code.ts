import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { projectRoot } from "../extensions/discover.js";
import { listedPackages, packageScope } from "../extensions/packages.js";
import { parseSkillFile, SKILL_FILE, SKILL_PACKAGE_FILE } from "../skills/skill-file.js";
import { hashFile, hashTree } from "./content-hash.js";

/**
 * What in a project runs code on the user's machine when the agent opens it:
 * - `mcp`: `.prime/mcp.json`, whose stdio servers are started (and whose HTTP servers are sent
 *   the headers it names, secrets from the environment included);
 * - `skill`: a folder of `.prime/skills/` with an `__init__.py`, imported by `skills.load`;
 * - `extensions`: `.prime/agent/extensions/`, imported into the agent when a session starts;
 * - `packages`: the extension packages `.prime/agent/settings.json` lists (their extensions and skills).
 * Context files (AGENTS.md, CLAUDE.md), a SKILL.md's text and `.prime/agent/prime-context.json`
 * are read as data and are not listed.
 */
export type ProjectCodeKind = "mcp" | "skill" | "extensions" | "packages";

/** One file or folder of project code, as it is now. */
export interface ProjectCodeItem {
	kind: ProjectCodeKind;
	/** Its path relative to the project root, `/`-separated: the key its approval is stored under. */
	key: string;
	/** Its absolute path. */
	path: string;
	/** SHA-256 of its content now (a folder: of every file in it); an approval holds for this hash only. */
	hash: string;
	/** What it runs, one line each, for a person to review (as written in the files: never expanded). */
	details: string[];
	/** `mcp`: the servers it configures; `skill`: the skill's name; else empty. */
	names: string[];
}

/** The project a working directory belongs to and the code in it. */
export interface ProjectCode {
	/** The project root's real path (symbolic links resolved): the key of its approvals. */
	root: string;
	items: ProjectCodeItem[];
}

/** `.prime/skills` under a project root. */
export const PROJECT_SKILLS = ".prime/skills";

/** Every item of project code under the project of `cwd`. Reads files only; never runs anything, never throws. */
export function findProjectCode(cwd: string): ProjectCode {
	const root = realRoot(cwd);
	const items: ProjectCodeItem[] = [];
	const mcp = mcpItem(root);
	if (mcp) items.push(mcp);
	items.push(...skillItems(root));
	const extensions = join(root, ".prime", "agent", "extensions");
	const modules = listNames(extensions);
	if (modules.length > 0) items.push(item("extensions", root, extensions, hashTree(extensions), modules, []));
	const packages = packagesItem(root);
	if (packages) items.push(packages);
	return { root, items };
}

/** The hash `item`'s file or folder has now (a skill is checked again when it is loaded). */
export function currentHash(item: Pick<ProjectCodeItem, "kind" | "path">, root: string): string {
	if (item.kind === "mcp") return hashFile(item.path);
	if (item.kind === "packages") return packagesItem(root)?.hash ?? "missing";
	return hashTree(item.path);
}

function realRoot(cwd: string): string {
	const root = projectRoot(cwd);
	try {
		return realpathSync(root);
	} catch {
		return root;
	}
}

function item(
	kind: ProjectCodeKind,
	root: string,
	path: string,
	hash: string,
	details: string[],
	names: string[],
): ProjectCodeItem {
	return { kind, key: relative(root, path).split("\\").join("/"), path, hash, details, names };
}

function mcpItem(root: string): ProjectCodeItem | undefined {
	const file = join(root, ".prime", "mcp.json");
	if (!existsSync(file)) return undefined;
	const servers = mcpServerEntries(file);
	if (servers === undefined) {
		return item("mcp", root, file, hashFile(file), ["(the file does not parse: nothing in it starts)"], []);
	}
	const details = servers.map(([name, server]) => {
		// Runs nothing; it turns the agent home's server of its name off.
		if (server.disabled === true) return `${name}: "disabled": true (turns off the agent home's "${name}")`;
		const target =
			typeof server.url === "string"
				? `${server.url}${named("headers", server.headers)}`
				: [server.command, ...(Array.isArray(server.args) ? server.args : [])].map(String).join(" ");
		return `${name}: ${target}${named("env", server.env)}`;
	});
	return item(
		"mcp",
		root,
		file,
		hashFile(file),
		details,
		servers.filter(([, server]) => server.disabled !== true).map(([name]) => name),
	);
}

/**
 * ` (env: A, TOKEN=${GITHUB_TOKEN}, B=${B:-x})`: the names of a server's variables or headers, with a value
 * only where it takes one from the user's environment (what the review must show: which of the
 * user's secrets the server gets). Other values stay unshown.
 */
function named(label: string, map: unknown): string {
	if (!isObject(map) || Object.keys(map).length === 0) return "";
	const shown = Object.entries(map).map(([key, value]) =>
		typeof value === "string" && /\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}/.test(value) ? `${key}=${value}` : key,
	);
	return ` (${label}: ${shown.join(", ")})`;
}

/** The servers of an mcp.json, as written, sorted by name; undefined when it does not parse. */
function mcpServerEntries(file: string): [string, Record<string, unknown>][] | undefined {
	try {
		const raw = JSON.parse(readFileSync(file, "utf8")) as { mcpServers?: unknown };
		if (!isObject(raw)) return undefined;
		if (!isObject(raw.mcpServers)) return [];
		return Object.entries(raw.mcpServers)
			.filter((entry): entry is [string, Record<string, unknown>] => isObject(entry[1]))
			.sort(([a], [b]) => a.localeCompare(b));
	} catch {
		return undefined;
	}
}

/** Skill folders of `.prime/skills` with a Python package (a skill of instructions only runs nothing). */
function skillItems(root: string): ProjectCodeItem[] {
	const skills = join(root, PROJECT_SKILLS);
	const folders = existsSync(join(skills, SKILL_FILE))
		? [skills]
		: listNames(skills)
				.map((name) => join(skills, name))
				.filter((dir) => existsSync(join(dir, SKILL_FILE)));
	return folders
		.filter((dir) => existsSync(join(dir, SKILL_PACKAGE_FILE)))
		.flatMap((dir) => {
			try {
				const parsed = parseSkillFile(readFileSync(join(dir, SKILL_FILE), "utf8"), join(dir, SKILL_FILE));
				const detail = `${parsed.name}: ${parsed.description.replace(/\s+/g, " ")}`;
				return [item("skill", root, dir, hashTree(dir), [detail], [parsed.name])];
			} catch {
				return []; // a broken SKILL.md is not a skill: nothing loads it
			}
		});
}

/**
 * The project's extension packages: one item for `.prime/agent/settings.json`, hashed over the
 * file, every listed folder package and the npm packages' folder (their dependencies too).
 */
function packagesItem(root: string): ProjectCodeItem | undefined {
	const scope = packageScope({ agentHome: root, cwd: root, local: true });
	let specs: string[];
	try {
		specs = listedPackages(scope);
	} catch {
		return undefined; // a broken settings file loads no package (the session says why)
	}
	if (specs.length === 0) return undefined;
	const settings = join(scope.root, "settings.json");
	const hash = createHash("sha256").update(hashFile(settings));
	if (specs.some((spec) => spec.startsWith("npm:"))) hash.update(hashTree(join(scope.root, "packages")));
	for (const spec of specs.filter((spec) => !spec.startsWith("npm:"))) hash.update(`${spec}\0${hashTree(spec)}`);
	return item("packages", root, settings, hash.digest("hex"), specs, []);
}

/** Names in a folder, sorted, without hidden ones; none when it is not a folder. */
function listNames(dir: string): string[] {
	try {
		if (!statSync(dir).isDirectory()) return [];
		return readdirSync(dir)
			.filter((name) => !name.startsWith("."))
			.sort();
	} catch {
		return [];
	}
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}
