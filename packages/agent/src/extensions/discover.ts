import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** Where extensions come from; kept for messages. */
export interface ExtensionSource {
	/** Absolute path of the module to import. */
	path: string;
	/** `project`, `user`, `package <spec>` or `command line`. */
	origin: string;
}

/** A module we cannot import, with the reason. */
export interface ExtensionSourceProblem {
	path: string;
	message: string;
}

const MODULE_EXTENSIONS = [".js", ".mjs"];
const TYPESCRIPT_EXTENSIONS = [".ts", ".mts", ".cts"];

/**
 * The project a working directory belongs to: the nearest folder at or above it holding `.git`,
 * else the working directory itself. Project extensions and local packages live in its `.prime/agent`.
 */
export function projectRoot(cwd: string): string {
	for (let dir = resolve(cwd); ; dir = dirname(dir)) {
		if (existsSync(join(dir, ".git"))) return dir;
		if (dirname(dir) === dir) return resolve(cwd);
	}
}

export function projectExtensionsDir(cwd: string): string {
	return join(projectRoot(cwd), ".prime", "agent", "extensions");
}

export function userExtensionsDir(agentHome: string): string {
	return join(agentHome, "extensions");
}

/**
 * Modules in an extensions folder: each `.js`/`.mjs` file, and each subfolder that is a package
 * (see `packageEntryPoints`) or holds an `index.js`. TypeScript files are reported, not loaded.
 */
export function extensionsInDir(
	dir: string,
	origin: string,
): { sources: ExtensionSource[]; problems: ExtensionSourceProblem[] } {
	const sources: ExtensionSource[] = [];
	const problems: ExtensionSourceProblem[] = [];
	if (!existsSync(dir)) return { sources, problems };
	for (const name of readdirSync(dir).sort()) {
		if (name.startsWith(".")) continue;
		const path = join(dir, name);
		if (statSync(path).isDirectory()) {
			const found = packageEntryPoints(path);
			if (found.length > 0) sources.push(...found.map((entry) => ({ path: entry, origin })));
			else problems.push({ path, message: "the folder has no package.json entry point and no index.js" });
		} else if (MODULE_EXTENSIONS.some((ext) => name.endsWith(ext))) {
			sources.push({ path, origin });
		} else if (TYPESCRIPT_EXTENSIONS.some((ext) => name.endsWith(ext)) && !name.endsWith(".d.ts")) {
			problems.push({ path, message: typescriptMessage() });
		}
	}
	return { sources, problems };
}

/**
 * Entry modules of an extension package folder: `primeAgent.extensions` in package.json (paths
 * relative to the folder), else its `main`, else `index.js`.
 */
export function packageEntryPoints(dir: string): string[] {
	const manifest = join(dir, "package.json");
	if (existsSync(manifest)) {
		let json: { main?: unknown; primeAgent?: { extensions?: unknown } };
		try {
			json = JSON.parse(readFileSync(manifest, "utf8"));
		} catch {
			return [];
		}
		const listed = json.primeAgent?.extensions;
		if (Array.isArray(listed))
			return listed.filter((item) => typeof item === "string").map((item) => resolve(dir, item));
		if (typeof json.main === "string") return [resolve(dir, json.main)];
	}
	const index = ["index.js", "index.mjs"].map((name) => join(dir, name)).find((path) => existsSync(path));
	return index ? [index] : [];
}

export function isTypeScript(path: string): boolean {
	return TYPESCRIPT_EXTENSIONS.some((ext) => path.endsWith(ext)) && !path.endsWith(".d.ts");
}

export function typescriptMessage(): string {
	return "Node cannot import TypeScript directly; compile it to .js (e.g. `npx tsc`) and point to the .js file";
}
