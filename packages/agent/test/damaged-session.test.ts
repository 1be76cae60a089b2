import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnCliText } from "prime-agent-test-support/cli-process";
import { type LoopbackServer, localModelWorld } from "prime-agent-test-support/loopback-servers";
import type { TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, expect, it } from "vitest";
import { runCli } from "../src/cli/index.js";
import { memoryIo } from "./cli-io.js";

/**
 * A session file is untrusted: a hand edit or another program can leave a parent cycle, a field of
 * the wrong type or a second header in it. Each is damage at its line, said at once: never a walk
 * that does not end, never a crash.
 */

let world: TempWorld;
let server: LoopbackServer;
afterEach(async () => {
	await server?.close();
	world?.cleanup();
});

const ID = "da3a6ed0-0000-4000-8000-000000000001";
const at = "2026-01-01T00:00:00.000Z";
const header = { type: "session", version: 1, id: ID, timestamp: at, cwd: "/" };
const user = (id: string, parentId: string | null, text: string) => ({
	type: "message",
	id,
	parentId,
	timestamp: at,
	message: { role: "user", content: text, timestamp: 1 },
});

/** Writes the session `ID` into the home's sessions folder, one record a line (header first); its path. */
function writeSession(records: unknown[]): string {
	const dir = join(world.home, "sessions");
	mkdirSync(dir, { recursive: true, mode: 0o700 });
	const path = join(dir, `${ID}.jsonl`);
	writeFileSync(path, `${records.map((record) => JSON.stringify(record)).join("\n")}\n`);
	return path;
}

/**
 * Run the built command line; a run still going after `limitMs` is killed (a walk that never ends
 * grows without bound) and reported as such. Exit code, output and how long it took.
 */
async function runBounded(args: string[], limitMs = 15_000) {
	const started = performance.now();
	const cli = spawnCliText(args, world.project, world.env);
	cli.child.stdin?.end();
	let timer: NodeJS.Timeout | undefined;
	const limit = new Promise<"hung">((resolve) => {
		timer = setTimeout(() => resolve("hung"), limitMs);
	});
	try {
		const code = await Promise.race([cli.exitCode(), limit]);
		return { code, stdout: cli.stdout(), stderr: cli.stderr(), ms: performance.now() - started };
	} finally {
		clearTimeout(timer);
		if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill("SIGKILL");
	}
}

it("a parent cycle is damage at its line: `sessions FILE`, the listing and a resume say so at once", async () => {
	({ world, server } = await localModelWorld([{ text: "unused" }]));
	// Line 2 hangs under line 3, which hangs under line 2.
	const path = writeSession([header, user("aaaa0001", "aaaa0002", "first"), user("aaaa0002", "aaaa0001", "second")]);

	const shown = await runBounded(["sessions", path]);
	expect(shown.code, shown.stderr).toBe(0);
	expect(shown.stdout).toContain(
		"The file is damaged at line 2 (the parent aaaa0002 of entry aaaa0001 is not on an earlier line). The entry after it (line 3) is not read. No entry comes before line 2",
	);
	// Far below the limit even on a loaded machine: reading stops at the line.
	expect(shown.ms).toBeLessThan(15_000);

	const listed = await runBounded(["sessions", "--all"]);
	expect(listed.code, listed.stderr).toBe(0);
	expect(listed.stdout).toContain(`${ID}  `);
	expect(listed.stdout).toContain("[damaged at line 2: nothing before it to fork]");

	const resumed = await runBounded(["--model", "local/coder", "-r", ID, "-p", "go"]);
	expect(resumed.code).toBe(2);
	expect(resumed.stderr).toContain(
		`Session file ${path} is damaged at line 2 (the parent aaaa0002 of entry aaaa0001 is not on an earlier line).`,
	);
	expect(server.requests.length).toBe(0);
}, 180_000);

it("an entry that is its own parent is damage at its line", async () => {
	({ world, server } = await localModelWorld([{ text: "unused" }]));
	const path = writeSession([header, user("aaaa0001", null, "first"), user("aaaa0002", "aaaa0002", "itself")]);
	const resumed = await runBounded(["--model", "local/coder", "-r", ID, "-p", "go"]);
	expect(resumed.code).toBe(2);
	expect(resumed.stderr).toContain(`Session file ${path} is damaged at line 3 (the entry aaaa0002 is its own parent).`);
	expect(resumed.stderr).toContain(`prime-agent --fork ${ID}`);
	const shown = await runBounded(["sessions", ID]);
	expect(shown.code, shown.stderr).toBe(0);
	expect(shown.stdout).toContain("aaaa0001  user       first");
	expect(shown.stdout).toContain("The file is damaged at line 3 (the entry aaaa0002 is its own parent)");
	expect(server.requests.length).toBe(0);
}, 180_000);

it("an entry with a field of the wrong type, or a second header, is damage at its line, not a crash", async () => {
	({ world, server } = await localModelWorld([{ text: "unused" }]));
	const wrongMessage = { ...user("aaaa0002", "aaaa0001", ""), message: 42 };
	writeSession([header, user("aaaa0001", null, "first"), wrongMessage]);
	const listed = await runBounded(["sessions", "--all"]);
	expect(listed.code, listed.stderr).toBe(0);
	expect(listed.stderr).not.toContain("Please report this");
	expect(listed.stdout).toContain("[damaged at line 3: fork it]");
	const shown = await runBounded(["sessions", ID]);
	expect(shown.code, shown.stderr).toBe(0);
	expect(shown.stdout).toContain("The file is damaged at line 3 (message must be an object)");

	writeSession([
		header,
		user("aaaa0001", null, "first"),
		{ ...header, id: "another" },
		user("aaaa0002", "aaaa0001", "x"),
	]);
	const second = await runBounded(["sessions", ID]);
	expect(second.code, second.stderr).toBe(0);
	expect(second.stdout).toContain("The file is damaged at line 3 (a second session header)");
	expect(second.stdout).not.toContain("aaaa0002");
}, 180_000);

it("a damaged file given by a path outside the home is named by that path in the advice, and the advice works", async () => {
	({ world, server } = await localModelWorld([{ text: "continued" }]));
	const shared = join(world.project, "shared");
	mkdirSync(shared);
	const typed = `shared/${ID}.jsonl`;
	const records = [header, user("aaaa0001", null, "first"), user("aaaa0002", "aaaa0002", "itself")];
	writeFileSync(join(world.project, typed), `${records.map((record) => JSON.stringify(record)).join("\n")}\n`);

	const resumed = memoryIo(world.project, world.env);
	expect(await runCli(["--model", "local/coder", "-r", typed, "-p", "go"], resumed)).toBe(2);
	expect(resumed.err()).toBe(
		`Error: Session file ${join(realpathSync(world.project), typed)} is damaged at line 3 (the entry aaaa0002 is its own parent).\n` +
			`Continue from its last good entry in a new file with \`prime-agent --fork ${typed}\`; this file was left untouched.\n`,
	);
	const shown = memoryIo(world.project, world.env);
	expect(await runCli(["sessions", typed], shown)).toBe(0);
	expect(shown.out()).toContain(`Continue from them with \`prime-agent --fork ${typed} --at <entry>\`.\n`);

	// The advice, as given, continues the conversation.
	const forked = memoryIo(world.project, world.env);
	expect(await runCli(["--model", "local/coder", "--fork", typed, "-p", "go"], forked)).toBe(0);
	expect(forked.out()).toBe("continued\n");
	expect(JSON.stringify(server.requests[0]?.messages)).toContain("first");
	expect(server.requests.length).toBe(1);
}, 180_000);

it("a file damaged at line 2 offers no entries to continue from: it says to repair the line or start anew", async () => {
	({ world, server } = await localModelWorld([{ text: "unused" }]));
	const path = writeSession([header, user("aaaa0001", "aaaa0001", "itself"), user("aaaa0002", "aaaa0001", "x")]);
	const advice =
		"No entry comes before line 2, so there is nothing to continue from: repair that line by hand (line 1 is the header), or start a new session";

	const resumed = memoryIo(world.project, world.env);
	expect(await runCli(["--model", "local/coder", "-r", ID, "-p", "go"], resumed)).toBe(2);
	expect(resumed.err()).toBe(
		`Error: Session file ${path} is damaged at line 2 (the entry aaaa0001 is its own parent). The entry after it (line 3) is not read.\n${advice}; this file was left untouched.\n`,
	);
	const shown = memoryIo(world.project, world.env);
	expect(await runCli(["sessions", ID], shown)).toBe(0);
	expect(shown.out()).toContain(
		`The file is damaged at line 2 (the entry aaaa0001 is its own parent). The entry after it (line 3) is not read. ${advice}.\n`,
	);
	expect(shown.out()).not.toContain("--fork");
	const listed = memoryIo(world.project, world.env);
	expect(await runCli(["sessions", "--all"], listed)).toBe(0);
	expect(listed.out()).toContain("[damaged at line 2: nothing before it to fork]");
	expect(listed.out()).not.toContain("fork it");
	expect(server.requests.length).toBe(0);
}, 180_000);
