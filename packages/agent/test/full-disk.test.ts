import { spawn, spawnSync } from "node:child_process";
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCliText } from "prime-agent-test-support/cli-process";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import { type LoopbackServer, openAiCompletionsServer } from "prime-agent-test-support/loopback-servers";
import { cannotMount, mountSmallDisk, type SmallDisk, tempFilesUnder } from "prime-agent-test-support/small-disk";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, describe, expect, it } from "vitest";
import { ExitCode } from "../src/errors.js";
import { DiskWriteError, removeLeftoverTempFiles, writePrivateJson } from "../src/home/index.js";
import { Session } from "../src/session/index.js";
import { answerMessage } from "./agent-scripts.js";

// A real full file system: a 2 MB tmpfs mounted over the folder under test, filled to the last byte.
let disk: SmallDisk | undefined;
let world: TempWorld | undefined;
let server: LoopbackServer | undefined;
let scratch: string | undefined;
afterEach(async () => {
	disk?.unmount();
	disk = undefined;
	await server?.close();
	server = undefined;
	world?.cleanup();
	world = undefined;
	if (scratch) rmSync(scratch, { recursive: true, force: true });
	scratch = undefined;
});

function smallDisk(): SmallDisk {
	scratch = mkdtempSync(join(tmpdir(), "prime-full-disk-"));
	disk = mountSmallDisk(scratch);
	return disk;
}

const answer = (text: string) => answerMessage(text, { api: "openai-completions", provider: "local", model: "coder" });

/** Every line of a session file, parsed (throws on a line that does not parse). */
const records = (path: string) =>
	readFileSync(path, "utf8")
		.split("\n")
		.filter((line) => line !== "")
		.map((line) => JSON.parse(line) as { id?: string; parentId?: string | null; type: string });

describe.skipIf(cannotMount !== undefined)(`a full disk${cannotMount ? ` (skipped: ${cannotMount})` : ""}`, () => {
	it("an atomic JSON write the disk refuses names the disk, its free space and the file, and leaves no temp file", () => {
		const { dir, fill } = smallDisk();
		const path = join(dir, "settings.json");
		writePrivateJson(path, { before: true });
		fill();
		let thrown: unknown;
		try {
			writePrivateJson(path, { after: "x".repeat(10_000) });
		} catch (error) {
			thrown = error;
		}
		expect(thrown).toBeInstanceOf(DiskWriteError);
		expect((thrown as DiskWriteError).message).toBe(
			`No space left on ${dir} (tmpfs, 0 bytes free): ${path} could not be written.`,
		);
		expect((thrown as DiskWriteError).hint).toBe(`Free space on ${dir}, then try again.`);
		expect((thrown as DiskWriteError).exitCode).toBe(ExitCode.disk);
		expect(tempFilesUnder(dir)).toEqual([]);
		// The file in place is the old one, whole.
		expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ before: true });
	});

	it("a read-only disk is said as such, with the path", () => {
		const { dir } = smallDisk();
		const path = join(dir, "auth.json");
		spawnSyncOk("mount", ["-o", "remount,ro", dir]);
		expect(() => writePrivateJson(path, {})).toThrow(
			`The file system is read-only: ${path} could not be written (on ${dir} (tmpfs, `,
		);
	});

	it("an append cut short by the full disk is cut back off the session file: every line parses, and the next append after space returns hangs under the last written entry", () => {
		const { dir, fill, free } = smallDisk();
		const session = Session.create({ dir: join(dir, "sessions"), cwd: dir });
		session.appendMessage({ role: "user", content: "first", timestamp: Date.now() });
		const kept = session.appendMessage(answer("first answer"));
		const before = readFileSync(session.path, "utf8");
		expect(before.length % 4096).toBeGreaterThan(0);
		fill();
		let thrown: unknown;
		try {
			// Larger than what is left of the file's last page: part of it is written before ENOSPC.
			session.appendMessage(answer("y".repeat(20_000)));
		} catch (error) {
			thrown = error;
		}
		expect((thrown as DiskWriteError).message).toBe(
			`No space left on ${dir} (tmpfs, 0 bytes free): ${session.path} could not be written.`,
		);
		expect((thrown as DiskWriteError).hint).toBe(
			`Free space on ${dir}, then resume it with \`prime-agent -r ${session.id}\`.`,
		);
		expect(readFileSync(session.path, "utf8")).toBe(before);
		expect(records(session.path).length).toBe(3);
		// The refused entry is not in the tree either.
		expect(session.leafId).toBe(kept);
		expect(session.entries.length).toBe(2);

		free();
		const next = session.appendMessage({ role: "user", content: "after space returned", timestamp: Date.now() });
		const reread = Session.open(session.path);
		expect(reread.entries.length).toBe(3);
		expect(reread.entry(next)?.parentId).toBe(kept);
		expect(records(session.path).length).toBe(4);
	});

	it("a linear file whose rewrite as a tree the disk refuses is left byte for byte, with no backup or temp file; after space returns the append rewrites it and keeps the original", () => {
		const { dir, fill, free } = smallDisk();
		const id = "0a1d0000-0000-4000-8000-00000000d15c";
		const path = join(dir, "sessions", `${id}.jsonl`);
		mkdirSync(join(dir, "sessions"));
		const linear = [
			{ type: "session", id, timestamp: "2026-01-01T00:00:00.000Z", cwd: dir },
			{ type: "message", timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: "q", timestamp: 1 } },
			{ type: "message", timestamp: "2026-01-01T00:00:00.000Z", message: answer("a".repeat(30_000)) },
		];
		const text = `${linear.map((record) => JSON.stringify(record)).join("\n")}\n`;
		writeFileSync(path, text);
		const session = Session.open(path);
		expect(session.linearBackup).toBe(`${path}.linear`);
		fill();
		expect(() => session.appendMessage({ role: "user", content: "next", timestamp: 2 })).toThrow(
			`No space left on ${dir} (tmpfs, 0 bytes free): ${path} could not be written.`,
		);
		expect(readFileSync(path, "utf8")).toBe(text);
		expect(existsSync(`${path}.linear`)).toBe(false);
		expect(tempFilesUnder(dir)).toEqual([]);
		expect(session.entries.length).toBe(2);

		free();
		const next = session.appendMessage({ role: "user", content: "next", timestamp: 2 });
		expect(readFileSync(`${path}.linear`, "utf8")).toBe(text);
		expect(records(path).map((record) => [record.id, record.parentId])).toEqual([
			[id, undefined],
			["line-2", null],
			["line-3", "line-2"],
			[next, "line-3"],
		]);
	});

	it("a session's first write refused leaves no file; no temp file either", () => {
		const { dir, fill } = smallDisk();
		const session = Session.create({ dir: join(dir, "sessions"), cwd: dir });
		session.appendMessage({ role: "user", content: "x".repeat(50_000), timestamp: Date.now() });
		mkdirSync(join(dir, "sessions"));
		fill();
		expect(() => session.appendMessage(answer("an answer"))).toThrow(
			`No space left on ${dir} (tmpfs, 0 bytes free): ${session.path} could not be written.`,
		);
		expect(existsSync(session.path)).toBe(false);
		expect(session.persisted).toBe(false);
		expect(tempFilesUnder(dir)).toEqual([]);
	});

	it("-p with the agent home on a full disk says the disk and the session file, not the model; resuming after space returns goes on", {
		timeout: 120_000,
	}, async () => {
		server = await openAiCompletionsServer([{ text: "first answer" }, { text: "third answer" }]);
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
		const home = world.home;
		disk = mountSmallDisk(home);
		world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "coder" }] } } });
		const cli = (args: string[]) =>
			runCliText([...args, "--model", "local/coder"], world?.project ?? "", world?.env ?? {});

		const first = await cli(["-p", "first"]);
		expect(first.stderr).toBe("");
		expect(first.code).toBe(0);
		const [file] = readdirSync(join(home, "sessions")).filter((name) => name.endsWith(".jsonl"));
		const path = join(home, "sessions", String(file));
		const id = String(file).replace(/\.jsonl$/, "");

		disk.fill();
		// Longer than the slack in the file's last page, which a full tmpfs still lets a write use.
		const refused = await cli(["-r", id, "-p", `second ${"x".repeat(8000)}`]);
		expect(refused.code).toBe(ExitCode.disk);
		// Refused at the start: taking the session for this run (its lock beside the file) is its first write.
		expect(refused.stderr).toBe(
			`Error: No space left on ${home} (tmpfs, 0 bytes free): ${path} could not be written.\nFree space on ${home}, then resume it with \`prime-agent -r ${id}\`.\n`,
		);
		expect(refused.stderr).not.toContain("Check the model id");
		// The prompt the file did not take was not sent either.
		expect(server.requests.length).toBe(1);
		expect(records(path).every((record) => typeof record.type === "string")).toBe(true);
		expect(tempFilesUnder(home)).toEqual([]);

		disk.free();
		const third = await cli(["-r", id, "-p", "third"]);
		expect(third.stderr).toBe("");
		expect(third.code).toBe(0);
		expect(third.stdout).toBe("third answer\n");
		const texts = readFileSync(path, "utf8");
		expect(texts).toContain('"third"');
		expect(records(path).filter((record) => record.type === "message").length).toBe(4);
	});

	it("-p on a full disk with no session yet says nothing was saved, and leaves no session file", {
		timeout: 120_000,
	}, async () => {
		server = await openAiCompletionsServer([{ text: "an answer" }]);
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
		const home = world.home;
		disk = mountSmallDisk(home);
		world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "coder" }] } } });
		disk.fill();
		const run = await runCliText(["-p", "hi", "--model", "local/coder"], world.project, world.env);
		expect(run.code).toBe(ExitCode.disk);
		const line = run.stderr.split("\n").find((text) => text.startsWith("No space left")) ?? "";
		expect(line).toMatch(
			new RegExp(
				`^No space left on ${home} \\(tmpfs, 0 bytes free\\): ${home}/sessions/[0-9a-f-]{36}\\.jsonl could not be written\\. Free space on ${home}, then send the request again \\(nothing of this session was saved\\)\\.$`,
			),
		);
		expect(run.stderr).not.toContain("Check the model id");
		expect(readdirSync(join(home, "sessions")).filter((name) => name.endsWith(".jsonl"))).toEqual([]);
		expect(tempFilesUnder(home)).toEqual([]);
	});
});

describe("a file size limit (ulimit -f), no root needed", () => {
	it("-p under `ulimit -f` says the limit and the session file, not the model, and leaves no file", {
		timeout: 120_000,
	}, async () => {
		server = await openAiCompletionsServer([{ text: "an answer" }]);
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
		world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "coder" }] } } });
		// A prompt longer than the limit (1 KB): the session file's first write exceeds it.
		const run = await limitedCli(1, ["-p", `hi ${"x".repeat(4000)}`, "--model", "local/coder"], world);
		expect(run.code).toBe(ExitCode.disk);
		const home = world.home;
		const line = run.stderr.split("\n").find((text) => text.startsWith("The file size limit")) ?? run.stderr;
		expect(line).toMatch(
			new RegExp(
				`^The file size limit \\(ulimit -f\\) was reached: ${home}/sessions/[0-9a-f-]{36}\\.jsonl could not be written \\(on /\\S* \\(\\w+, [\\d.]+ (bytes|KB|MB|GB|TB) free\\)\\)\\. Raise the file size limit \\(\`ulimit -f\`\\), then send the request again \\(nothing of this session was saved\\)\\.$`,
			),
		);
		expect(run.stderr).not.toContain("Check the model id");
		expect(readdirSync(join(home, "sessions")).filter((name) => name.endsWith(".jsonl"))).toEqual([]);
	});
});

/** The built command line in a shell whose file size limit is `kb` KB (bash's `ulimit -f` unit). */
async function limitedCli(kb: number, args: string[], w: TempWorld) {
	const cli = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
	const child = spawn("bash", ["-c", `ulimit -f ${kb}; exec "$0" "$@"`, process.execPath, cli, ...args], {
		cwd: w.project,
		env: w.env,
		stdio: ["ignore", "pipe", "pipe"],
	});
	let stdout = "";
	let stderr = "";
	child.stdout.on("data", (chunk) => {
		stdout += chunk;
	});
	child.stderr.on("data", (chunk) => {
		stderr += chunk;
	});
	const code = await new Promise<number | null>((resolve) => child.once("exit", (exit) => resolve(exit)));
	return { code, stdout, stderr };
}

describe("leftover temp files", () => {
	it("only those of a process that is gone are removed", async () => {
		scratch = mkdtempSync(join(tmpdir(), "prime-temps-"));
		const dead = spawn(process.execPath, ["-e", ""]);
		const deadPid = await new Promise<number>((resolve) => dead.once("exit", () => resolve(dead.pid as number)));
		mkdirSync(join(scratch, "workers", "ab"), { recursive: true });
		const gone = [`settings.json.${deadPid}.tmp`, `workers/ab/worker.json.${deadPid}.tmp`];
		const kept = [`auth.json.${process.pid}.tmp`, "notes.tmp", `workers/ab/worker.json.${deadPid}.tmp.keep`];
		for (const name of [...gone, ...kept]) writeFileSync(join(scratch, name), "half");
		expect(removeLeftoverTempFiles(scratch, 2)).toBe(2);
		for (const name of gone) expect(existsSync(join(scratch, name))).toBe(false);
		for (const name of kept) expect(statSync(join(scratch, name)).size).toBe(4);
	});
});

function spawnSyncOk(command: string, args: string[]): void {
	const result = spawnSync(command, args, { encoding: "utf8" });
	if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${result.stderr}`);
}
