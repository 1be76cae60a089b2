import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openSessionArchive } from "../src/archive/index.js";
import { COMMANDS } from "../src/cli/args.js";
import { CLI, type CliOptions, requireBuild, runCli } from "./cli-process.js";

let base: string;
let home: string;
let work: string;
let options: CliOptions;

beforeAll(() => requireBuild());
beforeEach(async () => {
	base = await mkdtemp(join(tmpdir(), "pc-cli-"));
	home = join(base, "home");
	work = join(base, "work");
	await import("node:fs/promises").then((fs) => fs.mkdir(work, { recursive: true }));
	options = {
		cwd: work,
		env: { PATH: process.env.PATH, HOME: base, PRIME_CONTEXT_HOME: home, PRIME_AGENT_DIR: join(base, "agent") },
	};
});
afterEach(async () => {
	await rm(base, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCli(args, options);
const node = (code: string) => ["run", "--", process.execPath, "-e", code];

/** The archive the CLI wrote for the `--session NAME` session. */
const sessionArchive = (sessionId: string) => openSessionArchive({ root: home, sessionId });

describe("prime-context run", () => {
	it("prints short output unchanged and exits with the command's status", async () => {
		const result = await cli(
			"--session",
			"t",
			...node("process.stdout.write('out\\n'); process.stderr.write('err\\n'); process.exit(3)"),
		);
		expect(result.status).toBe(3);
		expect(result.stdout.toString()).toMatch(/^(out\nerr\n|err\nout\n)$/);
		const [record] = await (await sessionArchive("t")).list();
		expect(record).toMatchObject({ tool: "run", exitCode: 3, isError: true, bytes: 8, lines: 2 });
		expect(record.command).toContain("process.exit(3)");
	});

	it("archives large output exactly and prints a capsule with recovery hints", async () => {
		const code =
			"for (let i = 1; i <= 20000; i++) console.log('row ' + i); console.error('AssertionError: expected 1 to be 2'); process.exit(1)";
		const result = await cli("--session", "t", ...node(code));
		expect(result.status).toBe(1);
		const text = result.stdout.toString();
		expect(text).toMatch(/^<prime_context_output id="obs_000001" tool="run"/);
		expect(text).toContain("AssertionError");
		expect(Buffer.byteLength(text)).toBeLessThan(8192);
		expect(result.stderr).toMatch(
			/see more with: prime-context read obs_000001 \d+:20001 {2}or {2}prime-context search obs_000001 "AssertionError"/,
		);
		const archive = await sessionArchive("t");
		const bytes = await archive.readBytes("obs_000001");
		expect(bytes.toString()).toBe(
			`${Array.from({ length: 20000 }, (_, i) => `row ${i + 1}`).join("\n")}\nAssertionError: expected 1 to be 2\n`,
		);

		const read = await cli("--session", "t", "read", "obs_000001", "19999:20001");
		expect(read.stdout.toString()).toContain(
			"19999: row 19999\n20000: row 20000\n20001: AssertionError: expected 1 to be 2",
		);
		const search = await cli("--session", "t", "search", "all", "assertionerror", "--context", "0");
		expect(search.stdout.toString()).toContain("20001: AssertionError: expected 1 to be 2");
		expect(search.status).toBe(0);
	});

	it("archives empty output and prints nothing", async () => {
		const result = await cli("--session", "t", "run", "--", "true");
		expect(result).toMatchObject({ status: 0, stderr: "" });
		expect(result.stdout.length).toBe(0);
		expect((await (await sessionArchive("t")).list())[0]).toMatchObject({ bytes: 0, lines: 0 });
	});

	it("keeps binary output byte-exact and says the capsule is binary", async () => {
		const code =
			"const b = Buffer.alloc(40000); for (let i = 0; i < b.length; i++) b[i] = (i * 7919) % 256; process.stdout.write(b)";
		const result = await cli("--session", "t", ...node(code));
		expect(result.stdout.toString()).toMatch(/binary/i);
		const expected = Buffer.alloc(40000);
		for (let i = 0; i < expected.length; i++) expected[i] = (i * 7919) % 256;
		const archive = await sessionArchive("t");
		expect((await archive.readBytes("obs_000001")).equals(expected)).toBe(true);
		expect((await archive.get("obs_000001")).binary).toBe(true);
	});

	it("reports a command that cannot start and exits 127", async () => {
		const result = await cli("run", "--", "no-such-command-xyz", "arg");
		expect(result.status).toBe(127);
		expect(result.stderr).toMatch(/cannot start "no-such-command-xyz".*check the name and your PATH/);
	});

	it("passes signals to the command and archives what it printed", async () => {
		const ready = join(base, "ready");
		const code = `process.on('SIGTERM', () => { console.log('got SIGTERM'); process.exit(9) }); console.log('working'); require('fs').writeFileSync(${JSON.stringify(ready)}, ''); setInterval(() => {}, 1000)`;
		let pid = 0;
		const running = runCli(["--session", "t", ...node(code)], { ...options, onSpawn: (p) => (pid = p) });
		// Two node processes start first: seconds on a loaded machine.
		for (const deadline = Date.now() + 60_000; !existsSync(ready) && Date.now() < deadline; )
			await new Promise((r) => setTimeout(r, 50));
		expect(existsSync(ready)).toBe(true);
		process.kill(pid, "SIGTERM");
		const result = await running;
		expect(result.status).toBe(9);
		expect(result.stdout.toString()).toBe("working\ngot SIGTERM\n");
	});

	it("freezes the output when the command exits, ignoring processes it left behind", async () => {
		// The process left behind writes `late` after the command's exit, then leaves a mark (its write
		// may fail on a closed pipe; the mark says it was tried).
		const mark = join(base, "late-written");
		const left = `echo main; (trap '' PIPE; sleep 0.5; echo late; touch ${mark}) & exit 0`;
		const result = await cli("--session", "t", "run", "--", "sh", "-c", left);
		expect(result.stdout.toString()).toBe("main\n");
		for (const deadline = Date.now() + 60_000; !existsSync(mark) && Date.now() < deadline; )
			await new Promise((r) => setTimeout(r, 50));
		expect(existsSync(mark)).toBe(true);
		expect((await (await sessionArchive("t")).readBytes("obs_000001")).toString()).toBe("main\n");
	});

	it("keeps every byte of a command that exits right after writing a lot", async () => {
		const code = "process.stdout.write('a'.repeat(300000) + '\\n'); process.stderr.write('tail\\n'); process.exit(0)";
		await cli("--session", "t", ...node(code));
		const record = (await (await sessionArchive("t")).list())[0];
		expect(record).toMatchObject({ bytes: 300006, lines: 2 });
	});

	it("still prints the original output when the archive cannot be written (a file blocks the storage root, which stops even root)", async () => {
		const blocker = join(base, "not-a-dir");
		await writeFile(blocker, "a file where the archive root should be");
		const code = "for (let i = 1; i <= 5000; i++) console.log('line ' + i + ' ' + 'x'.repeat(20)); process.exit(4)";
		const result = await runCli(["--session", "t", ...node(code)], {
			...options,
			env: { ...options.env, PRIME_CONTEXT_HOME: blocker },
		});
		expect(result.status).toBe(4);
		expect(result.stdout.toString()).toBe(
			`${Array.from({ length: 5000 }, (_, i) => `line ${i + 1} ${"x".repeat(20)}`).join("\n")}\n`,
		);
		expect(result.stderr).toMatch(/not archived/);
	});

	it("still runs the command, unarchived, when there is nowhere to capture its output", async () => {
		const blocker = join(base, "tmp-blocker");
		await writeFile(blocker, "");
		const result = await runCli(["--session", "t", "run", "--", "sh", "-c", "echo direct; exit 6"], {
			...options,
			env: { ...options.env, TMPDIR: blocker },
		});
		expect(result.status).toBe(6);
		expect(result.stdout.toString()).toBe("direct\n");
		expect(result.stderr).toMatch(/cannot capture output .*running the command without archiving/);
	});

	describe("with a full temp disk (a small tmpfs; needs permission to mount one)", () => {
		let disk: string;
		const mounted = (size: string) => {
			disk = join(base, "small-tmp");
			mkdirSync(disk);
			return spawnSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", disk]).status === 0;
		};
		afterEach(() => {
			spawnSync("umount", [disk]);
		});

		it("prints the output and exits with the command's status when the disk is full from the start", async (ctx) => {
			if (!mounted("64k")) return ctx.skip();
			writeFileSync(join(disk, "fill"), Buffer.alloc(64 * 1024));
			const result = await runCli(["--session", "t", "run", "--", "sh", "-c", "echo hello; seq 1 3; exit 3"], {
				...options,
				env: { ...options.env, TMPDIR: disk },
			});
			expect(result.status).toBe(3);
			expect(result.stdout.toString()).toBe("hello\n1\n2\n3\n");
			expect(result.stderr).toMatch(
				/cannot capture output \(only 0 bytes free in .*\); running the command without archiving/,
			);
		});

		it("prints what was captured and exits with the command's status when the disk fills during the run", async (ctx) => {
			if (!mounted("2m")) return ctx.skip();
			const result = await runCli(["--session", "t", "run", "--", "sh", "-c", "seq 1 1000000; exit 3"], {
				...options,
				env: { ...options.env, TMPDIR: disk },
			});
			expect(result.status).toBe(3);
			expect(result.stdout.toString().startsWith("1\n2\n3\n")).toBe(true);
			expect(result.stdout.length).toBeGreaterThan(1024 * 1024);
			expect(result.stderr).toMatch(
				/output not archived \(the temp disk is full\); printed as captured, which may be incomplete/,
			);
		});
	});

	it("stops printing quietly when the reader goes away and keeps the command's status", async () => {
		const blocker = join(base, "not-a-dir");
		await writeFile(blocker, "");
		const child = spawn(process.execPath, [CLI, "run", "--", "sh", "-c", "seq 1 2000000; exit 5"], {
			cwd: work,
			env: { ...options.env, PRIME_CONTEXT_HOME: blocker },
			stdio: ["ignore", "pipe", "pipe"],
		});
		let stderr = "";
		child.stderr.on("data", (chunk) => (stderr += chunk));
		child.stdout.once("data", () => child.stdout.destroy());
		const status = await new Promise((resolve) => child.on("close", resolve));
		expect(status).toBe(5);
		expect(stderr).not.toMatch(/EPIPE/);
	});
});

describe("prime-context capsule", () => {
	it("observes stdin", async () => {
		const result = await runCli(["--session", "t", "capsule"], { ...options, input: "piped text\n" });
		expect(result.status).toBe(0);
		expect(result.stdout.toString()).toBe("piped text\n");
		expect((await (await sessionArchive("t")).list())[0]).toMatchObject({ tool: "capsule", bytes: 11 });
	});

	it("observes a file and archives it exactly, even with invalid UTF-8 and no final newline", async () => {
		const file = join(base, "log.txt");
		const content = Buffer.concat([Buffer.from("caf\xc3\xa9\r\nbad "), Buffer.from([0xc3, 0x28]), Buffer.from(" end")]);
		await writeFile(file, content);
		const result = await cli("--session", "t", "capsule", file);
		expect(result.status).toBe(0);
		const archive = await sessionArchive("t");
		expect((await archive.readBytes("obs_000001")).equals(content)).toBe(true);
		expect((await archive.get("obs_000001")).binary).toBe(true);
	});

	it("handles a single 10 MB line", async () => {
		const file = join(base, "giant.txt");
		await writeFile(file, `head\n${"L".repeat(10 * 1024 * 1024)}\ntail\n`);
		const result = await cli("--session", "t", "capsule", file);
		expect(result.status).toBe(0);
		expect(result.stdout.length).toBeLessThan(16 * 1024);
		const read = await cli("--session", "t", "read", "obs_000001", "3:3");
		expect(read.stdout.toString()).toContain("3: tail");
	});

	it("observes a named pipe, as `capsule <(cmd)` gives one", async () => {
		const fifo = join(base, "pipe");
		execFileSync("mkfifo", [fifo]);
		const running = cli("--session", "t", "capsule", fifo);
		// The writer's open waits for the reader: the command has opened the pipe once it returns.
		await writeFile(fifo, "from a pipe\n");
		const result = await running;
		expect(result.status).toBe(0);
		expect(result.stdout.toString()).toBe("from a pipe\n");
		expect((await (await sessionArchive("t")).list())[0]).toMatchObject({ tool: "capsule", bytes: 12 });
	});

	it("rejects a missing file and a directory, saying what to give instead", async () => {
		const result = await cli("capsule", join(base, "missing.log"));
		expect(result.status).toBe(2);
		expect(result.stderr).toMatch(/cannot read .*missing\.log.*give a readable file, or - for stdin/);
		const folder = await cli("capsule", base);
		expect(folder.status).toBe(2);
		expect(folder.stderr).toContain("is not a regular file or a pipe; give a file, or - for stdin");
	});
});

describe("reading the archive from the command line", () => {
	it("lists newest first and honours a limit", async () => {
		for (const word of ["one", "two", "three"]) await cli("--session", "t", "run", "--", "echo", word);
		const result = await cli("--session", "t", "list", "2");
		const ids = result.stdout.toString().match(/^obs_\d+/gm);
		expect(ids).toEqual(["obs_000003", "obs_000002"]);
	});

	it("rejects path-like and unknown ids, naming them", async () => {
		await cli("--session", "t", "run", "--", "echo", "x");
		const traversal = await cli("--session", "t", "read", "../../x");
		expect(traversal.status).toBe(1);
		expect(traversal.stderr).toMatch(/invalid observation id "\.\.\/\.\.\/x".*prime-context list/);
		const unknown = await cli("--session", "t", "read", "obs_000099");
		expect(unknown.status).toBe(1);
		expect(unknown.stderr).toMatch(/unknown observation id obs_000099/);
	});

	it("names the observation when its compressed output is corrupted or missing", async () => {
		await cli("--session", "t", ...node("for (let i = 0; i < 9000; i++) console.log('data line ' + i)"));
		const archive = await sessionArchive("t");
		const path = join(archive.dir, "obs_000001", "output.gz");
		const bytes = await readFile(path);
		// Inside the chunk that holds line 8000: chunks start on line boundaries, so a read inflates only its own.
		const meta = JSON.parse(await readFile(join(archive.dir, "obs_000001", "meta.json"), "utf8"));
		const chunk = meta.chunks.find(
			(c: { firstLine: number; newlines: number }) => c.firstLine <= 8000 && 8000 < c.firstLine + c.newlines,
		);
		bytes[chunk.offset + Math.floor(chunk.length / 2)] ^= 0x55;
		await writeFile(path, bytes);
		const corrupted = await cli("--session", "t", "read", "obs_000001", "8000:8001");
		expect(corrupted.status).toBe(1);
		expect(corrupted.stderr).toMatch(/obs_000001.*damaged/);
		await rm(path);
		const missing = await cli("--session", "t", "search", "obs_000001", "data");
		expect(missing.stderr).toMatch(/obs_000001.*missing/);
	});

	it("lists, reads, searches, reports and cleans up without failing when the storage root is unusable", async () => {
		const blocker = join(base, "blocked");
		await writeFile(blocker, "");
		const blocked = { ...options, env: { ...options.env, PRIME_CONTEXT_HOME: blocker } };
		for (const args of [["list"], ["status"], ["search", "all", "x"], ["cleanup"]]) {
			const result = await runCli(args, blocked);
			expect(result.status, args.join(" ")).toBe(0);
		}
		const read = await runCli(["read", "obs_000001"], blocked);
		expect(read.stderr).toMatch(/unknown observation id obs_000001/);
		const doctor = await runCli(["doctor"], blocked);
		expect(doctor.status).toBe(1);
		expect(doctor.stdout.toString()).toMatch(/is not writable/);
	});

	it("creates nothing when listing or reading a mistyped session", async () => {
		const listed = await cli("--session", "typo", "list");
		expect(listed.status).toBe(0);
		await cli("--session", "typo", "status");
		await cli("--session", "typo", "search", "all", "x");
		expect(existsSync(join(home, "sessions", "typo"))).toBe(false);
	});

	it("keeps one session per working directory unless --session is given", async () => {
		await cli("run", "--", "echo", "here");
		const list = await cli("list");
		expect(list.stdout.toString()).toMatch(/^Observations in session work-[0-9a-f]{12}/);
		const other = await cli("--session", "elsewhere", "list");
		expect(other.stdout.toString()).toMatch(/No archived observations in session elsewhere/);
	});

	it("reports status, doctor findings and cleans up only this session", async () => {
		await cli("--session", "keep", "run", "--", "echo", "kept");
		await cli("--session", "t", "run", "--", "echo", "dropped");
		const status = await cli("--session", "t", "status");
		expect(status.stdout.toString()).toMatch(/session: t .*\n.*mode: on\narchive: 1 observation/);
		expect(status.stdout.toString()).toContain("broker decisions: pass-through 1");

		await import("node:fs/promises").then((fs) => fs.mkdir(join(base, "agent"), { recursive: true }));
		await writeFile(join(base, "agent", "prime-context.json"), JSON.stringify({ capsuleMaxBytes: 100 }));
		const doctor = await cli("--session", "t", "doctor");
		expect(doctor.status).toBe(1);
		expect(doctor.stdout.toString()).toContain(
			`${join(base, "agent", "prime-context.json")}: capsuleMaxBytes = 100: must be an integer of at least 512`,
		);
		expect(doctor.stdout.toString()).toMatch(/storage root: .* \(writable\)/);

		const cleanup = await cli("--session", "t", "cleanup");
		expect(cleanup.stdout.toString()).toMatch(/Removed session t: 1 observation, \d+ bytes/);
		expect((await cli("--session", "t", "list")).stdout.toString()).toMatch(/No archived observations/);
		expect((await cli("--session", "keep", "list")).stdout.toString()).toContain("obs_000001");
	});
});

describe("task snapshot from the command line", () => {
	it("sets focus, adds and completes items, pins and unpins, and shows them in status", async () => {
		await cli("--session", "t", "run", "--", "echo", "evidence");
		expect((await cli("--session", "t", "focus", "Fix", "the", "parser")).stdout.toString()).toContain("set focus");
		await cli("--session", "t", "add", "Write a failing test");
		await cli("--session", "t", "add", "Make it pass");
		await cli("--session", "t", "done", "item_1");
		await cli("--session", "t", "pin", "obs_000001");
		const status = (await cli("--session", "t", "status")).stdout.toString();
		expect(status).toContain(
			'FOCUS\n"Fix the parser"\n\nOPEN_ITEMS\n- [item_2] Make it pass\n\nPINNED_OUTPUTS\n- obs_000001',
		);
		await cli("--session", "t", "unpin", "obs_000001");
		await cli("--session", "t", "focus", "clear");
		const after = (await cli("--session", "t", "status")).stdout.toString();
		expect(after).not.toContain("FOCUS");
		expect(after).not.toContain("PINNED_OUTPUTS");
	});

	it("explains a bad update and exits 1", async () => {
		const done = await cli("--session", "t", "done", "item_7");
		expect(done.status).toBe(1);
		expect(done.stderr).toMatch(/no open item "item_7"; open items: none/);
		const pin = await cli("--session", "t", "pin", "../../x");
		expect(pin.stderr).toMatch(/invalid observation id/);
		const empty = await cli("--session", "t", "add");
		expect(empty.status).toBe(2);
		expect(empty.stderr).toMatch(/add needs item text/);
	});
});

describe("command-line usage", () => {
	it("explains unknown commands, options and bad session names", async () => {
		const command = await cli("frobnicate");
		expect(command.status).toBe(2);
		expect(command.stderr).toMatch(
			/unknown command "frobnicate"; commands: run, capsule, .* See `prime-context --help`/,
		);
		const flag = await cli("list", "--fast");
		expect(flag.status).toBe(2);
		expect(flag.stderr).toMatch(/unknown option --fast for list; see `prime-context list --help`/);
		const session = await cli("--session", "../evil", "list");
		expect(session.status).toBe(2);
		expect(session.stderr).toMatch(/invalid session id/);
		const run = await cli("run");
		expect(run.stderr).toMatch(/run needs a command: prime-context run -- <command>/);
	});

	it("has --help for every command, and the general help lists each", async () => {
		const general = (await cli("--help")).stdout.toString();
		expect(general).toContain("Commands:");
		// The command line's own table: a command added to it is held to this too.
		const commands = COMMANDS.filter((command) => command !== "help");
		for (const command of commands) {
			const result = await cli(command, "--help");
			expect(result.status, command).toBe(0);
			expect(result.stdout.toString(), command).toContain(`Usage: prime-context ${command}`);
			expect(general, command).toContain(` ${command} `);
		}
		const bare = await cli();
		expect(bare.status).toBe(2);
		expect(bare.stderr).toContain("Commands:");
		const topic = await cli("help", "read");
		expect(topic.stdout.toString()).toContain("Usage: prime-context read");
		const unknown = await cli("help", "bogus");
		expect(unknown.status).toBe(2);
		expect(unknown.stderr).toMatch(/no help for "bogus"; commands: run, capsule/);
	});
});
