import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const AGENT_DIST = fileURLToPath(new URL("../../agent/dist/", import.meta.url));
const TUI_DIST = fileURLToPath(new URL("../dist/index.js", import.meta.url));

/** What a view must not load before its first frame: the worker holds the model library, the kernel client and the session's code. */
const HEAVY = [
	"/@mariozechner/pi-ai/",
	"/typebox/",
	"/prime-agent-kernel/",
	"/kernel/dist/",
	"/context/dist/",
	"/agent/dist/startup/",
];

let dir: string | undefined;
afterEach(() => {
	if (dir) rmSync(dir, { recursive: true, force: true });
	dir = undefined;
});

/** Every module URL a fresh Node process resolves while it imports `files` (built modules). */
function modulesLoadedBy(files: string[]): string[] {
	for (const file of files)
		if (!existsSync(file))
			throw new Error(`This test loads the build; build it first with \`npx tsc -b\` (${file} is missing).`);
	dir = mkdtempSync(join(tmpdir(), "prime-light-load-"));
	const log = join(dir, "resolved.txt");
	const hooks = join(dir, "hooks.mjs");
	writeFileSync(
		hooks,
		`import { appendFileSync } from "node:fs";\nexport async function resolve(specifier, context, next) {\n\tconst resolved = await next(specifier, context);\n\tappendFileSync(${JSON.stringify(log)}, resolved.url + "\\n");\n\treturn resolved;\n}\n`,
	);
	const register = join(dir, "register.mjs");
	writeFileSync(
		register,
		`import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
	);
	const imports = files.map((file) => `await import(${JSON.stringify(pathToFileURL(file).href)});`).join("\n");
	execFileSync(process.execPath, ["--import", pathToFileURL(register).href, "--input-type=module", "-e", imports], {
		stdio: "ignore",
	});
	return readFileSync(log, "utf8").trim().split("\n");
}

describe("a view loads light: its first frame waits for no model library, kernel client or session code", () => {
	it("the terminal UI package, and what the command line loads to show a worker's session in it", () => {
		const loaded = modulesLoadedBy([
			TUI_DIST,
			join(AGENT_DIST, "cli/run-cli.js"),
			join(AGENT_DIST, "modes/interactive.js"),
			join(AGENT_DIST, "daemon/commands.js"),
		]);
		expect(loaded.some((url) => url.endsWith("/tui/dist/app.js"))).toBe(true);
		expect(loaded.filter((url) => HEAVY.some((heavy) => url.includes(heavy)))).toEqual([]);
	});

	it("the check sees them when they load (the agent's full API, which `/model` loads later)", () => {
		const loaded = modulesLoadedBy([join(AGENT_DIST, "index.js")]);
		expect(loaded.some((url) => url.includes("/@mariozechner/pi-ai/"))).toBe(true);
		expect(loaded.some((url) => url.includes("/agent/dist/startup/"))).toBe(true);
	});
});
