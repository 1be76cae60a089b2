import { existsSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
	type ExtensionSource,
	extensionsInDir,
	isTypeScript,
	packageEntryPoints,
	projectExtensionsDir,
	typescriptMessage,
	userExtensionsDir,
} from "./discover.js";
import { installedPackages, packageScope } from "./packages.js";
import { ExtensionRunner } from "./runner.js";
import type { ExtensionFactory } from "./types.js";

export interface LoadExtensionsOptions {
	cwd: string;
	/** The agent home (`~/.prime/agent`): its `extensions/` folder and the packages in its settings. */
	agentHome: string;
	/** `-e <path>` for this run only (files or package folders). */
	extraPaths?: string[];
	/** The session's environment, given to extensions (default: `process.env`). */
	env?: NodeJS.ProcessEnv;
	/** `env` without its keys, given to extensions (default: `env` through `childEnvironment`). */
	childEnv?: Record<string, string>;
	/**
	 * Factories that ship with the agent, loaded after every discovered extension (so what they see
	 * is final), keyed by a display name (`builtin:<name>`).
	 */
	builtins?: Record<string, ExtensionFactory>;
	/**
	 * Which of the project's code may be imported: its `.prime/agent/extensions/` and the packages
	 * of its `.prime/agent/settings.json` (see `ProjectTrust`). What may not is left out silently:
	 * the session's notices say so.
	 */
	project: { extensions: boolean; packages: boolean };
}

/**
 * Find and load every extension: `<project>/.prime/agent/extensions/`, `<home>/extensions/`,
 * packages listed in both settings files (the project's only as `project` allows), then `-e`
 * paths. Nothing here throws: each module that cannot be found, imported or run is reported on
 * the runner (with its path) and left out.
 */
export async function loadExtensions(options: LoadExtensionsOptions): Promise<ExtensionRunner> {
	const runner = new ExtensionRunner(options.cwd, {
		agentHome: options.agentHome,
		env: options.env,
		childEnv: options.childEnv,
	});
	const sources: ExtensionSource[] = [];
	const fromDir = (dir: string, origin: string) => {
		const found = extensionsInDir(dir, origin);
		sources.push(...found.sources);
		for (const problem of found.problems)
			runner.report({ path: problem.path, phase: "load", message: problem.message });
	};
	if (options.project.extensions) fromDir(projectExtensionsDir(options.cwd), "project");
	fromDir(userExtensionsDir(options.agentHome), "user");
	for (const local of options.project.packages ? [true, false] : [false]) {
		const scope = packageScope({ agentHome: options.agentHome, cwd: options.cwd, local });
		let packages: ReturnType<typeof installedPackages>;
		try {
			packages = installedPackages(scope);
		} catch (error) {
			runner.report({ path: scope.root, phase: "load", message: (error as Error).message });
			continue;
		}
		for (const pkg of packages) {
			const entries = existsSync(pkg.dir) ? packageEntryPoints(pkg.dir) : [];
			if (entries.length === 0) {
				runner.report({
					path: pkg.dir,
					phase: "load",
					message: `package ${pkg.spec} is missing or has no entry point; reinstall it with \`prime-agent package install\``,
				});
			}
			sources.push(...entries.map((path) => ({ path, origin: `package ${pkg.spec}` })));
		}
	}
	for (const raw of options.extraPaths ?? []) {
		const path = isAbsolute(raw) ? raw : resolve(options.cwd, raw);
		if (existsSync(path) && statSync(path).isDirectory()) {
			const entries = packageEntryPoints(path);
			if (entries.length === 0)
				runner.report({ path, phase: "load", message: "the folder has no extension entry point" });
			sources.push(...entries.map((entry) => ({ path: entry, origin: "command line" })));
		} else {
			sources.push({ path, origin: "command line" });
		}
	}
	const seen = new Set<string>();
	for (const source of sources) {
		if (seen.has(source.path)) continue;
		seen.add(source.path);
		const factory = await importFactory(source.path).catch((error: Error) => {
			runner.report({ path: source.path, phase: "load", message: error.message });
			return undefined;
		});
		if (factory) await runner.load(source.path, factory);
	}
	for (const [name, factory] of Object.entries(options.builtins ?? {})) await runner.load(name, factory);
	return runner;
}

/** Import a module and find its factory: the default export, else an export named `extension`. */
async function importFactory(path: string): Promise<ExtensionFactory> {
	if (!existsSync(path)) throw new Error("no such file");
	if (isTypeScript(path)) throw new Error(typescriptMessage());
	const module = (await import(pathToFileURL(path).href)) as { default?: unknown; extension?: unknown };
	const factory = typeof module.default === "function" ? module.default : module.extension;
	if (typeof factory !== "function") {
		throw new Error("the module exports no factory; export a function `default (api) => { ... }`");
	}
	return factory as ExtensionFactory;
}
