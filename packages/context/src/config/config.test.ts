import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../types.js";
import { configFiles, describeProblem, findRepoRoot, loadConfig } from "./index.js";

let base: string;
let agentDir: string;
let repo: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
	base = await mkdtemp(join(tmpdir(), "pc-config-"));
	agentDir = join(base, "agent");
	repo = join(base, "repo");
	await mkdir(join(repo, ".git"), { recursive: true });
	await mkdir(join(repo, "src", "deep"), { recursive: true });
	await mkdir(agentDir, { recursive: true });
	env = { PRIME_AGENT_DIR: agentDir };
});
afterEach(async () => {
	await rm(base, { recursive: true, force: true });
});

async function writeProject(content: string): Promise<string> {
	await mkdir(join(repo, ".prime", "agent"), { recursive: true });
	const path = join(repo, ".prime", "agent", "prime-context.json");
	await writeFile(path, content);
	return path;
}

describe("configuration files", () => {
	it("uses the defaults when no file exists", async () => {
		const loaded = await loadConfig({ cwd: repo, env });
		expect(loaded.config).toEqual(DEFAULT_CONFIG);
		expect(loaded.problems).toEqual([]);
		expect(loaded.files.map((f) => f.found)).toEqual([false, false]);
	});

	it("finds the repository root from a nested directory, else uses the directory itself", () => {
		expect(findRepoRoot(join(repo, "src", "deep"))).toBe(repo);
		expect(configFiles(join(repo, "src", "deep"), env).project).toBe(
			join(repo, ".prime", "agent", "prime-context.json"),
		);
		expect(findRepoRoot(agentDir)).toBe(agentDir);
	});

	it("lets project values override global values key by key", async () => {
		await writeFile(join(agentDir, "prime-context.json"), JSON.stringify({ minTextBytes: 1000, readMaxBytes: 4096 }));
		await writeProject(JSON.stringify({ minTextBytes: 2000, enabled: false }));
		const loaded = await loadConfig({ cwd: join(repo, "src"), env });
		expect(loaded.config).toEqual({
			enabled: false,
			minTextBytes: 2000,
			capsuleMaxBytes: 6144,
			readMaxBytes: 4096,
			ageing: true,
			ageingWindow: 3,
		});
		expect(loaded.problems).toEqual([]);
	});

	it("ignores invalid values and reports each with file, key, value and rule", async () => {
		await writeFile(join(agentDir, "prime-context.json"), JSON.stringify({ capsuleMaxBytes: 1024 }));
		const path = await writeProject(
			JSON.stringify({ capsuleMaxBytes: 100, enabled: "yes", minTextBytes: 1.5, readMaxBytes: -1, colour: "red" }),
		);
		const loaded = await loadConfig({ cwd: repo, env });
		expect(loaded.config).toEqual({ ...DEFAULT_CONFIG, capsuleMaxBytes: 1024 });
		const byKey = Object.fromEntries(loaded.problems.map((p) => [p.key, p]));
		expect(Object.keys(byKey).sort()).toEqual(["capsuleMaxBytes", "colour", "enabled", "minTextBytes", "readMaxBytes"]);
		expect(byKey.capsuleMaxBytes).toEqual({
			file: path,
			key: "capsuleMaxBytes",
			value: 100,
			rule: "must be an integer of at least 512",
		});
		expect(describeProblem(byKey.enabled)).toBe(
			`${path}: enabled = "yes": must be true or false; the value is ignored`,
		);
		expect(byKey.colour.rule).toMatch(/unknown key; allowed keys: enabled, minTextBytes/);
	});

	it("reports malformed JSON and a non-object file, then carries on with the other layer", async () => {
		await writeFile(join(agentDir, "prime-context.json"), "{ minTextBytes: 5 ");
		await writeProject("[1, 2]");
		const loaded = await loadConfig({ cwd: repo, env });
		expect(loaded.config).toEqual(DEFAULT_CONFIG);
		expect(loaded.problems.map((p) => [p.key, p.rule])).toEqual([
			["(file)", "the file must be valid JSON"],
			["(file)", "the file must hold one JSON object"],
		]);
		expect(describeProblem(loaded.problems[0])).toContain(join(agentDir, "prime-context.json"));
	});

	it("applies caller overrides last, validated like the files", async () => {
		const loaded = await loadConfig({ cwd: repo, env, overrides: { minTextBytes: 10, capsuleMaxBytes: 3 } });
		expect(loaded.config.minTextBytes).toBe(10);
		expect(loaded.config.capsuleMaxBytes).toBe(6144);
		expect(loaded.problems[0]).toMatchObject({ file: "(caller)", key: "capsuleMaxBytes" });
	});
});
