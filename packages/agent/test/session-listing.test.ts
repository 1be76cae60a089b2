import { appendFileSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { runCliText } from "prime-agent-test-support/cli-process";
import { type LoopbackServer, localModelWorld } from "prime-agent-test-support/loopback-servers";
import type { TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, expect, it } from "vitest";

// The built command line in real processes: the line chat writes the session file, `sessions` lists it.

let world: TempWorld;
let server: LoopbackServer;
afterEach(async () => {
	await server?.close();
	world?.cleanup();
});

/** The listing's time column for a session file. */
const when = (path: string) => statSync(path).mtime.toISOString().replace("T", " ").slice(0, 16);

it("`prime-agent sessions` shows a session holding only goals by its first goal and counts its goals, not as empty", async () => {
	({ world, server } = await localModelWorld([{ text: "Hello." }]));
	const chat = await runCliText(
		["--model", "local/coder"],
		world.project,
		world.env,
		"/goal Ship the   parser rewrite\n/goal pause\n/goal Write the release notes\n/exit\n",
	);
	expect(chat.code, chat.stderr).toBe(0);
	const sessions = join(world.home, "sessions");
	const [name] = readdirSync(sessions).filter((file) => file.endsWith(".jsonl"));
	const path = join(sessions, name as string);
	const id = (name as string).replace(/\.jsonl$/, "");
	const lines = readFileSync(path, "utf8").trim().split("\n");
	// Three goal entries (set, paused, another set) of two goals; no message.
	expect(lines.map((line) => JSON.parse(line).customType ?? JSON.parse(line).type)).toEqual([
		"session",
		"goal",
		"goal",
		"goal",
	]);
	// A goal entry the file's author broke (no objective) is not counted, and the listing still reads.
	const last = JSON.parse(lines.at(-1) as string) as { id: string; timestamp: string };
	appendFileSync(
		path,
		`${JSON.stringify({ type: "custom", customType: "goal", data: { id: "goal-x", objective: 42 }, id: "b0b0b0b0", parentId: last.id, timestamp: last.timestamp })}\n`,
	);

	const listed = await runCliText(["sessions"], world.project, world.env);
	expect(listed.code, listed.stderr).toBe(0);
	expect(listed.stdout).toBe(
		`${id}  ${when(path)}     0 msgs, 2 goals  goal: Ship the parser rewrite\n` +
			"Resume one with `prime-agent --resume <id>` (a unique prefix is enough).\n",
	);
	const json = JSON.parse((await runCliText(["sessions", "--json"], world.project, world.env)).stdout);
	expect(json).toMatchObject([{ id, messageCount: 0, goalCount: 2, firstMessage: "goal: Ship the parser rewrite" }]);

	// A session with messages and no goal reads as before: its count and first message.
	const asked = await runCliText(["-p", "say   hello\nplease", "--model", "local/coder"], world.project, world.env);
	expect(asked.stdout).toBe("Hello.\n");
	const other = (await runCliText(["sessions", "--json"], world.project, world.env)).stdout;
	const [newest] = JSON.parse(other) as { id: string; path: string }[];
	const again = await runCliText(["sessions"], world.project, world.env);
	expect(again.stdout.split("\n")[0]).toBe(
		`${newest?.id}  ${when(newest?.path as string)}     2 msgs  say hello please`,
	);
});
