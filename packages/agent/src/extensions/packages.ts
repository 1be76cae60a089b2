import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { ExitCode, UserError } from "../errors.js";
import { ensurePrivateDir, jsonProblem, PRIVATE_FILE_MODE, writeFileAtomically } from "../home/index.js";
import { packageEntryPoints, projectRoot } from "./discover.js";

/** Where a package list lives: the agent home (global) or `<project root>/.prime/agent` (local). */
export interface PackageScope {
	/** The folder holding settings.json and, for npm packages, `packages/node_modules`. */
	root: string;
	local: boolean;
}

export function packageScope(options: { agentHome: string; cwd: string; local: boolean }): PackageScope {
	return options.local
		? { root: join(projectRoot(options.cwd), ".prime", "agent"), local: true }
		: { root: options.agentHome, local: false };
}

/** A package as listed in settings.json `packages`: an absolute folder path or `npm:name[@version]`. */
export interface InstalledPackage {
	spec: string;
	/** The package folder (for npm packages: inside the scope's `packages/node_modules`). */
	dir: string;
}

function settingsPath(scope: PackageScope): string {
	return join(scope.root, "settings.json");
}

function readSettingsObject(path: string): Record<string, unknown> {
	if (!existsSync(path)) return {};
	let raw: unknown;
	const text = readFileSync(path, "utf8");
	try {
		raw = JSON.parse(text);
	} catch (error) {
		throw new UserError(
			`${path} is not valid JSON (${jsonProblem(text, error as Error)}).`,
			"Fix the file, then retry.",
		);
	}
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
		throw new UserError(`${path} must hold a JSON object.`, "Fix the file, then retry.");
	}
	return raw as Record<string, unknown>;
}

/** The `packages` list of a scope's settings.json, validated. */
export function listedPackages(scope: PackageScope): string[] {
	const path = settingsPath(scope);
	const value = readSettingsObject(path).packages;
	if (value === undefined) return [];
	if (!Array.isArray(value) || value.some((item) => typeof item !== "string")) {
		throw new UserError(
			`"packages" in ${path} must be a list of strings (folder paths or npm:name@version).`,
			"Fix the value, or manage it with `prime-agent package install|remove`.",
		);
	}
	return value as string[];
}

/** Rewrite only `packages`, keeping every other key; written to a temp file, then renamed. */
function writePackages(scope: PackageScope, packages: string[]): void {
	const path = settingsPath(scope);
	const settings = readSettingsObject(path);
	settings.packages = packages;
	if (scope.local) ensurePrivateDir(dirname(path));
	else ensurePrivateDir(scope.root);
	writeFileAtomically(path, `${JSON.stringify(settings, null, 2)}\n`, PRIVATE_FILE_MODE);
}

function npmName(spec: string): string {
	const body = spec.slice("npm:".length);
	const at = body.indexOf("@", body.startsWith("@") ? 1 : 0);
	return at > 0 ? body.slice(0, at) : body;
}

export function packageDir(scope: PackageScope, spec: string): string {
	return spec.startsWith("npm:") ? join(scope.root, "packages", "node_modules", npmName(spec)) : spec;
}

export function installedPackages(scope: PackageScope): InstalledPackage[] {
	return listedPackages(scope).map((spec) => ({ spec, dir: packageDir(scope, spec) }));
}

/**
 * Install a package: a folder is recorded by its absolute path (and must have an entry point);
 * `npm:name[@version]` is installed with npm into the scope's `packages` folder, then recorded.
 * Installing what is already listed replaces the old entry of the same package.
 */
export function installPackage(scope: PackageScope, source: string, cwd: string, log: (line: string) => void): string {
	let spec: string;
	if (source.startsWith("npm:")) {
		if (npmName(source) === "")
			throw new UserError(`"${source}" names no package.`, "Write npm:name or npm:name@1.2.3.");
		const prefix = join(scope.root, "packages");
		ensurePrivateDir(prefix);
		log(`Installing ${source.slice(4)} with npm into ${prefix} ...`);
		try {
			execFileSync("npm", ["install", "--prefix", prefix, "--no-audit", "--no-fund", source.slice(4)], {
				stdio: ["ignore", "ignore", "pipe"],
			});
		} catch (error) {
			const stderr = String((error as { stderr?: unknown }).stderr ?? "").trim();
			throw new UserError(
				`npm could not install ${source.slice(4)}: ${stderr.split("\n").slice(-3).join(" ") || (error as Error).message}`,
				"Check the name and version (and your network or registry settings), then retry.",
			);
		}
		spec = source;
	} else {
		const dir = isAbsolute(source) ? source : resolve(cwd, source);
		if (!existsSync(dir)) {
			throw new UserError(`No folder at ${dir}.`, "Pass the path of an extension package folder or npm:name@version.");
		}
		spec = dir;
	}
	const entries = packageEntryPoints(packageDir(scope, spec));
	if (entries.length === 0) {
		throw new UserError(
			`${packageDir(scope, spec)} has no extension entry point.`,
			'Give its package.json "primeAgent": {"extensions": ["./index.js"]} or a "main", or add an index.js.',
		);
	}
	const same = (listed: string) =>
		listed === spec || (spec.startsWith("npm:") && listed.startsWith("npm:") && npmName(listed) === npmName(spec));
	writePackages(scope, [...listedPackages(scope).filter((listed) => !same(listed)), spec]);
	return spec;
}

/**
 * Remove a package from the list, by its exact spec, its npm name, or its folder path. Files of
 * a folder package are left alone; an npm package stays in `packages/node_modules` until npm prunes it.
 */
export function removePackage(scope: PackageScope, which: string, cwd: string): string {
	const listed = listedPackages(scope);
	const asPath = isAbsolute(which) ? which : resolve(cwd, which);
	const name = npmName(which.startsWith("npm:") ? which : `npm:${which}`);
	const match = listed.find(
		(spec) => spec === which || spec === asPath || (spec.startsWith("npm:") && npmName(spec) === name),
	);
	if (!match) {
		throw new UserError(
			`No package "${which}" in ${settingsPath(scope)}.`,
			`List them with \`prime-agent package list${scope.local ? " --local" : ""}\`.`,
			ExitCode.usage,
		);
	}
	writePackages(
		scope,
		listed.filter((spec) => spec !== match),
	);
	return match;
}
