import { createHash } from "node:crypto";
import {
	cpSync,
	existsSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	realpathSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { runCliText } from "prime-agent-test-support/cli-process";
import {
	type LoopbackServer,
	localModelWorld,
	openAiCompletionsServer,
} from "prime-agent-test-support/loopback-servers";
import type { TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, expect, it } from "vitest";

/**
 * A session file is untrusted: one from a shared repository or a download is resumed by path, and a
 * crafted header could point the kernel-state restore (which unpickles, so runs code) anywhere.
 */

let world: TempWorld;
let server: LoopbackServer;
afterEach(async () => {
	await server?.close();
	world?.cleanup();
});

/** The folder holding the agent home and the project, where the attacker's files go too. */
const root = () => dirname(world.home);
/** The file the attacker's pickle creates when it is loaded. */
const pwned = () => join(root(), "pwned");

/** A session file: a header with `id`, then a question and its answer. */
function sessionText(id: string): string {
	const header = { type: "session", version: 1, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: world.project };
	const at = (n: number) => `2026-01-01T00:00:0${n}.000Z`;
	const question = {
		type: "message",
		id: "aaaa0001",
		parentId: null,
		timestamp: at(1),
		message: { role: "user", content: "the earlier question", timestamp: 1 },
	};
	const answer = {
		type: "message",
		id: "aaaa0002",
		parentId: "aaaa0001",
		timestamp: at(2),
		message: {
			role: "assistant",
			content: [{ type: "text", text: "the earlier answer" }],
			api: "openai-completions",
			provider: "local",
			model: "coder",
			usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { total: 0 } },
			stopReason: "stop",
			timestamp: 2,
		},
	};
	return `${[header, question, answer].map((record) => JSON.stringify(record)).join("\n")}\n`;
}

/**
 * A kernel-state snapshot in `dir` whose one variable is a pickle that creates `pwned()` when it is
 * loaded (`open(path, "w")`), with a manifest naming it by its checksum as a real save does.
 */
function plantSnapshot(dir: string): void {
	const pickle = Buffer.from(`cbuiltins\nopen\n(V${pwned()}\nVw\ntR.`, "latin1");
	const digest = createHash("sha256").update(pickle).digest("hex");
	mkdirSync(join(dir, "vars"), { recursive: true });
	writeFileSync(join(dir, "vars", `${digest}.pkl`), pickle);
	const variable = { name: "handle", file: `${digest}.pkl`, bytes: pickle.length, type: "str", definition: false };
	const manifest = { format: 1, saved_at: "2026-01-01T00:00:00Z", total_bytes: pickle.length, variables: [variable] };
	writeFileSync(join(dir, "manifest.json"), JSON.stringify({ ...manifest, imports: {}, unsaveable: [] }));
}

const resume = (ref: string) => runCliText(["--model", "local/coder", "-r", ref, "-p", "go"], world.project, world.env);

it("a header id that walks out of the sessions folder is refused, naming the file, and its pickle never loads", async () => {
	({ world, server } = await localModelWorld([{ code: "print('cell ran')" }, { text: "done" }]));
	const attacker = join(root(), "attacker", "x");
	plantSnapshot(join(attacker, "kernel-state"));
	// `../../../../<tmp>/x` from the file's folder: the artifact folder the header names is the attacker's.
	const folder = realpathSync(world.project);
	const id = `${"../".repeat(folder.split("/").length - 1)}${attacker.slice(1)}`;
	expect(join(folder, id)).toBe(attacker);
	writeFileSync(join(world.project, "crafted.jsonl"), sessionText(id));

	const run = await resume("crafted.jsonl");
	expect(existsSync(pwned())).toBe(false);
	expect(run.code).toBe(2);
	expect(run.stderr).toContain(`Session file ${join(realpathSync(world.project), "crafted.jsonl")} cannot be opened`);
	expect(run.stderr).toContain("is not a session id");
	expect(run.stderr).toContain("Start a new session; the file was left untouched.");
	expect(server.requests.length).toBe(0);
	expect(readFileSync(join(world.project, "crafted.jsonl"), "utf8")).toBe(sessionText(id));
}, 60_000);

it("a header id that is not the file's name is refused, saying to rename it back", async () => {
	({ world, server } = await localModelWorld([{ text: "unused" }]));
	const sessions = join(world.home, "sessions");
	mkdirSync(sessions, { recursive: true });
	// The header names another session of the home: its folder (and kernel state) is not this file's.
	writeFileSync(join(sessions, "renamed.jsonl"), sessionText("0b5e55ed-0000-4000-8000-000000000001"));

	const run = await resume(join(sessions, "renamed.jsonl"));
	expect(run.code).toBe(2);
	expect(run.stderr).toContain(
		`Session file ${join(sessions, "renamed.jsonl")} cannot be opened: its header names session 0b5e55ed-0000-4000-8000-000000000001, not renamed.`,
	);
	expect(run.stderr).toContain("rename it back to 0b5e55ed-0000-4000-8000-000000000001.jsonl");
	expect(server.requests.length).toBe(0);
});

it("a session from elsewhere resumes its conversation in an empty kernel: the snapshot beside it never loads, and the user is told", async () => {
	({ world, server } = await localModelWorld([{ code: "print('handle' in dir())" }, { text: "done" }]));
	// A shared repository holding a whole session: its file, and its folder with a snapshot.
	const id = "5e55104e-0000-4000-8000-000000000002";
	const shared = join(world.project, "shared");
	mkdirSync(shared);
	writeFileSync(join(shared, `${id}.jsonl`), sessionText(id));
	plantSnapshot(join(shared, id, "kernel-state"));

	const run = await resume(`shared/${id}.jsonl`);
	expect(run.code, run.stderr).toBe(0);
	expect(existsSync(pwned())).toBe(false);
	expect(run.stderr).toContain(
		`The kernel state saved for ${join(realpathSync(world.project), "shared", `${id}.jsonl`)} was not loaded: that session file is not in this agent home's sessions folder`,
	);
	// The conversation came back, the model is not promised a restore, and the cell sees no restored name.
	const sent = JSON.stringify(server.requests[0]?.messages);
	expect(sent).toContain("the earlier question");
	expect(sent).toContain("the earlier answer");
	expect(sent).not.toContain("restored when it starts");
	expect(JSON.stringify(server.requests[1]?.messages)).toContain("False");
}, 60_000);

it("a session copied into the home's sessions folder keeps its conversation, but its unsealed snapshot never loads", async () => {
	({ world, server } = await localModelWorld([{ code: "print('handle' in dir())" }, { text: "done" }]));
	const id = "5e55104e-0000-4000-8000-000000000003";
	const sessions = join(world.home, "sessions");
	mkdirSync(sessions, { recursive: true, mode: 0o700 });
	writeFileSync(join(sessions, `${id}.jsonl`), sessionText(id));
	plantSnapshot(join(sessions, id, "kernel-state"));

	const run = await resume(id);
	expect(run.code, run.stderr).toBe(0);
	expect(existsSync(pwned())).toBe(false);
	// The first line of the run, before the model is called.
	expect(run.stderr.split("\n")[0]).toBe(
		`The kernel state in ${join(realpathSync(sessions), id, "kernel-state")} was not loaded: it carries no seal of this agent home (it was saved elsewhere or by an older prime-agent, or changed since), and loading saved state runs the code it holds. The conversation continues in an empty kernel.`,
	);
	expect(JSON.stringify(server.requests[0]?.messages)).toContain("the earlier question");
	expect(JSON.stringify(server.requests[1]?.messages)).toContain("False");
}, 60_000);

it("a snapshot sealed by another agent home is not loaded, and JSON mode says so in the session line's notices", async () => {
	({ world, server } = await localModelWorld([{ code: "kept = 41" }, { text: "set" }]));
	const first = await runCliText(["--model", "local/coder", "-p", "define"], world.project, world.env);
	expect(first.code, first.stderr).toBe(0);
	const sessions = join(world.home, "sessions");
	const id = (readdirSync(sessions).find((name) => name.endsWith(".jsonl")) as string).replace(/\.jsonl$/, "");
	// Another home's key: the same files, sealed by a secret this home does not hold.
	writeFileSync(join(world.home, "kernel-state.key"), "ab".repeat(32), { mode: 0o600 });

	await useModel([{ code: "print('kept' in dir())" }, { text: "done" }]);
	const run = await runCliText(
		["--model", "local/coder", "-r", id, "--mode", "json", "-p", "go"],
		world.project,
		world.env,
	);
	expect(run.code, run.stderr).toBe(0);
	const session = JSON.parse(run.stdout.split("\n")[0] as string);
	expect(session.type).toBe("session");
	expect(session.notices).toEqual([
		`The kernel state in ${join(realpathSync(sessions), id, "kernel-state")} was not loaded: it carries no seal of this agent home (it was saved elsewhere or by an older prime-agent, or changed since), and loading saved state runs the code it holds. The conversation continues in an empty kernel.`,
	]);
	expect(JSON.stringify(server.requests[1]?.messages)).toContain("False");
}, 120_000);

it("a snapshot whose manifest cannot be read is not loaded, and the user is told why (not only the model)", async () => {
	({ world, server } = await localModelWorld([{ code: "print('handle' in dir())" }, { text: "done" }]));
	const id = "5e55104e-0000-4000-8000-000000000004";
	const sessions = join(world.home, "sessions");
	mkdirSync(sessions, { recursive: true, mode: 0o700 });
	writeFileSync(join(sessions, `${id}.jsonl`), sessionText(id));
	const stateDir = join(sessions, id, "kernel-state");
	plantSnapshot(stateDir);
	writeFileSync(join(stateDir, "manifest.json"), "{ not json");

	const run = await resume(id);
	expect(run.code, run.stderr).toBe(0);
	expect(existsSync(pwned())).toBe(false);
	const manifest = join(realpathSync(sessions), id, "kernel-state", "manifest.json");
	expect(run.stderr.split("\n")[0]).toMatch(
		new RegExp(
			`^The kernel state saved for ${literal(join(realpathSync(sessions), `${id}.jsonl`))} could not be read, so it was not loaded \\(The state manifest ${literal(manifest)} is not valid JSON \\(.+\\)\\)\\. The conversation continues in an empty kernel\\.$`,
		),
	);
	expect(JSON.stringify(server.requests[0]?.messages)).toContain("the earlier question");
	expect(JSON.stringify(server.requests[1]?.messages)).toContain("False");
}, 60_000);

/** `text` as a literal in a regular expression. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

it("a sealed snapshot loads only from the home's sessions folder: a copy of the session moved elsewhere resumes empty", async () => {
	({ world, server } = await localModelWorld([{ code: "kept = 41" }, { text: "set" }]));
	const first = await runCliText(["--model", "local/coder", "-p", "define"], world.project, world.env);
	expect(first.code, first.stderr).toBe(0);
	const sessions = join(world.home, "sessions");
	const id = (readdirSync(sessions).find((name) => name.endsWith(".jsonl")) as string).replace(/\.jsonl$/, "");
	expect(existsSync(join(sessions, id, "kernel-state", "manifest.seal"))).toBe(true);
	expect(statSync(join(world.home, "kernel-state.key")).mode & 0o777).toBe(0o600);

	// A copy of the whole session outside the sessions folder: its snapshot is sealed, yet not loaded from there.
	const away = join(world.project, "away");
	cpSync(join(sessions, `${id}.jsonl`), join(away, `${id}.jsonl`));
	cpSync(join(sessions, id), join(away, id), { recursive: true });
	await useModel([{ code: "print('kept' in dir())" }, { text: "done" }]);
	const moved = await resume(`away/${id}.jsonl`);
	expect(moved.code, moved.stderr).toBe(0);
	expect(moved.stderr).toContain("was not loaded: that session file is not in this agent home's sessions folder");
	expect(JSON.stringify(server.requests[1]?.messages)).toContain("False");

	// The same snapshot in its own folder loads (so the refusal above is the rule, not a broken snapshot).
	await useModel([{ code: "print(kept + 1)" }, { text: "done" }]);
	const home = await resume(id);
	expect(home.code, home.stderr).toBe(0);
	expect(home.stderr).not.toContain("was not loaded");
	expect(JSON.stringify(server.requests[1]?.messages)).toMatch(/came back from the saved state: kept[\s\S]*42/);
}, 120_000);

/** A new loopback model playing `script`, replacing the current one in models.json. */
async function useModel(script: Parameters<typeof openAiCompletionsServer>[0]): Promise<void> {
	await server.close();
	server = await openAiCompletionsServer(script);
	world.writeHome("models.json", {
		providers: { local: { baseUrl: server.baseUrl, api: "openai-completions", models: [{ id: "coder" }] } },
	});
}
