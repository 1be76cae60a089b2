import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import type { TempWorld } from "prime-agent-test-support/temp-home";
import { describe, expect, it } from "vitest";
import { parseArgs, runCli } from "../src/cli/index.js";
import { installPackage, packageScope } from "../src/extensions/index.js";
import { localLink } from "../src/link/index.js";
import { printMode } from "../src/modes/index.js";
import type { StartedSession } from "../src/startup/index.js";
import { projectTrust } from "../src/trust/index.js";
import { memoryIo } from "./cli-io.js";

const sessions = useFauxSessions();
let world: TempWorld;
let started: StartedSession | undefined;

function fileEntries(path: string): Record<string, unknown>[] {
	return readFileSync(path, "utf8")
		.trim()
		.split("\n")
		.map((line) => JSON.parse(line));
}

function textOf(message: unknown): string {
	const content = (message as { content: unknown }).content;
	if (typeof content === "string") return content;
	return (content as { type: string; text?: string }[]).map((part) => part.text ?? "").join("");
}

/** Shrinks tool results over 2,000 characters to a pointer at the complete output; rewrites what is sent. */
const SHRINK_EXTENSION = `
export default function (api) {
	api.on("tool_result", (event) => {
		const text = event.content.map((part) => part.text ?? "").join("");
		if (text.length <= 2000) return undefined;
		return {
			content: [{ type: "text", text: "[shrunk " + text.length + " chars; complete output: " + event.fullOutputPath + "]" }],
			details: { ...event.details, shrunk: true },
		};
	});
	api.on("context", (event) => ({
		messages: event.messages.map((message) =>
			message.role === "user" && Array.isArray(message.content)
				? { ...message, content: message.content.map((part) => part.type === "text" ? { ...part, text: part.text.replace("SECRET-TOKEN", "[redacted]") } : part) }
				: message,
		),
	}));
	api.registerCommand("note", { handler: (args) => { api.appendEntry("note", { text: args }); } });
}
`;

/** Records every turn's tool results in a custom entry, and blocks cells that delete files. */
const PACKAGE_EXTENSION = `
export default function (api) {
	api.on("tool_call", (event) => {
		if (String(event.input.code ?? "").includes("os.remove")) return { block: true, reason: "deleting files is not allowed here" };
		return undefined;
	});
	api.on("turn_end", (event) => {
		if (event.toolResults.length > 0) {
			api.appendEntry("turn_log", { results: event.toolResults.map((result) => ({ id: result.toolCallId, isError: result.isError })) });
		}
	});
}
`;

/** Adds a hint and a system prompt rule, steers once after the first turn, writes the summary itself. */
const COACH_EXTENSION = `
export default function (api) {
	let steered = false;
	api.on("session_start", (event) => { api.appendEntry("started", { reason: event.reason }); });
	api.on("before_agent_start", () => ({
		message: { customType: "hint", content: "HINT: use the table" },
		systemPromptAppend: "EXTRA RULE",
	}));
	api.on("turn_end", () => {
		if (steered) return;
		steered = true;
		api.sendMessage({ customType: "steer", content: "STEER: also check totals" });
	});
	api.on("before_compact", (event) => ({ summary: "EXTENSION SUMMARY of " + event.preparation.messagesToSummarize.length + " messages" }));
	api.on("compact", (event) => { api.appendEntry("compacted", { fromExtension: event.fromExtension }); });
}
`;

/** Appends one line per session event to events.log in the project. */
const LOG_EXTENSION = `
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
export default function (api) {
	const log = (line) => appendFileSync(join(api.cwd, "events.log"), line + "\\n");
	api.on("session_start", (event) => log("session_start " + event.reason));
	api.on("session_fork", (event) => log("session_fork " + event.fromSessionFile + " " + event.atEntryId));
	api.on("session_switch", (event) => log("session_switch " + event.sessionFile));
	api.on("session_tree", (event) => log("session_tree " + event.leafId + " " + event.previousLeafId));
	api.on("session_shutdown", () => log("session_shutdown"));
}
`;

describe("extensions", () => {
	it("a project extension and an installed package shape results and context; a broken one is left out", async () => {
		world = sessions.newWorld();
		world.writeProject(".prime/agent/extensions/shrink.js", SHRINK_EXTENSION);
		world.writeProject(
			".prime/agent/extensions/broken.js",
			"export default function () { throw new Error('cannot start'); }\n",
		);
		world.writeProject(".prime/agent/extensions/draft.ts", "export default function () {}\n");
		world.writeProject(
			".prime/agent/extensions/throws-on-result.mjs",
			"export default function (api) { api.on('tool_result', () => { throw new Error('handler broke'); }); }\n",
		);
		const pkg = join(world.home, "..", "guard-package");
		mkdirSync(pkg);
		writeFileSync(
			join(pkg, "package.json"),
			JSON.stringify({ name: "guard", type: "module", primeAgent: { extensions: ["./guard.js"] } }),
		);
		writeFileSync(join(pkg, "guard.js"), PACKAGE_EXTENSION);
		installPackage(
			packageScope({ agentHome: world.home, cwd: world.project, local: false }),
			pkg,
			world.project,
			() => {},
		);

		const sent: Context[] = [];
		sessions.faux.setResponses([
			(context) => {
				sent.push(JSON.parse(JSON.stringify(context)));
				return fauxAssistantMessage([
					fauxToolCall("ipython", { code: "big = 'x' * 70000\nprint(big)" }, { id: "call-big" }),
					fauxToolCall("ipython", { code: "import os\nos.remove('keep.txt')" }, { id: "call-rm" }),
				]);
			},
			(context) => {
				sent.push(JSON.parse(JSON.stringify(context)));
				return fauxAssistantMessage("done");
			},
		]);
		world.writeProject("keep.txt", "keep me");
		started = await sessions.start({ trustProject: true });

		// Load problems carry the module's path; the .ts file gets the "compile it" advice.
		const problems = started.extensions.problems;
		expect(problems.find((problem) => problem.path.endsWith("broken.js"))?.message).toContain("cannot start");
		expect(problems.find((problem) => problem.path.endsWith("draft.ts"))?.message).toMatch(/compile it to \.js/);
		expect(started.notices.some((notice) => notice.includes("broken.js"))).toBe(true);
		expect(started.extensions.loaded.map((path) => path.split("/").pop())).toEqual(
			expect.arrayContaining(["shrink.js", "throws-on-result.mjs", "guard.js"]),
		);

		const outcome = await started.agentSession.prompt("print a lot; the key is SECRET-TOKEN");
		expect(outcome.status).toBe("ok");
		expect(readFileSync(join(world.project, "keep.txt"), "utf8")).toBe("keep me");

		// The model saw the shrunk result with the complete-output path, and the redacted prompt.
		const second = sent[1] as Context;
		const [bigResult, rmResult] = second.messages.filter((message) => message.role === "toolResult");
		expect(textOf(bigResult)).toMatch(/^\[shrunk \d+ chars; complete output: \/.+\]$/);
		expect(textOf(bigResult)).not.toContain("undefined");
		expect(textOf(rmResult)).toContain("deleting files is not allowed here");
		expect(textOf(second.messages[0])).toContain("[redacted]");

		// The transcript stores the replacement, keeps the prompt as typed, and the turn log.
		const entries = fileEntries(started.session.path);
		const stored = entries.filter((entry) => (entry.message as { role?: string } | undefined)?.role === "toolResult");
		expect(textOf(stored[0]?.message)).toMatch(/^\[shrunk/);
		expect((stored[0]?.message as { details?: { shrunk?: boolean } } | undefined)?.details?.shrunk).toBe(true);
		const user = entries.find((entry) => (entry.message as { role?: string } | undefined)?.role === "user");
		expect(textOf(user?.message)).toContain("SECRET-TOKEN");
		const log = entries.find((entry) => entry.customType === "turn_log");
		expect(log?.data).toEqual({
			results: [
				{ id: "call-big", isError: false },
				{ id: "call-rm", isError: true },
			],
		});

		// The throwing handler was reported and skipped (the blocked call never ran, so it had no result hook).
		expect(
			problems.filter((problem) => problem.phase === "tool_result" && problem.path.endsWith("throws-on-result.mjs"))
				.length,
		).toBe(1);

		// A slash command runs without a model call and persists its entry on the branch.
		const before = sessions.faux.state.callCount;
		const note = await started.agentSession.prompt("/note remember this");
		expect(note).toMatchObject({ status: "ok", command: { name: "note" } });
		expect(sessions.faux.state.callCount).toBe(before);
		expect(started.session.customEntries("note")[0]?.data).toEqual({ text: "remember this" });
	});

	it("extensions add to the prompt, steer a run, and can supply the compaction summary", async () => {
		world = sessions.newWorld();
		world.writeHome("settings.json", { compaction: { keepRecentTokens: 1 } });
		world.writeProject(".prime/agent/extensions/coach.js", COACH_EXTENSION);
		const sent: Context[] = [];
		sessions.faux.setResponses([
			(context) => {
				sent.push(JSON.parse(JSON.stringify(context)));
				return fauxAssistantMessage(fauxToolCall("ipython", { code: "x = 1" }));
			},
			(context) => {
				sent.push(JSON.parse(JSON.stringify(context)));
				return fauxAssistantMessage("ok");
			},
		]);
		started = await sessions.start({ trustProject: true });
		expect((await started.agentSession.prompt("sum the table")).status).toBe("ok");

		const [first, second] = sent as [Context, Context];
		// Built-in Prime Context loads last, so its policy follows the extension's rule.
		expect(first.systemPrompt).toContain("\n\nEXTRA RULE\n\nPrime Context policy:");
		expect(first.messages.map(textOf)).toEqual(["HINT: use the table", "sum the table"]);
		expect(second.messages.map(textOf)).toContain("STEER: also check totals");
		expect(
			started.session.branch().some((entry) => entry.type === "custom_message" && entry.customType === "steer"),
		).toBe(true);

		const calls = sessions.faux.state.callCount;
		const compacted = await started.agentSession.prompt("/compact");
		expect(compacted.command?.message).toMatch(/^Compacted/);
		expect(sessions.faux.state.callCount).toBe(calls);
		const compaction = started.session.branch().find((entry) => entry.type === "compaction");
		expect(compaction?.type === "compaction" && compaction.summary).toMatch(/^EXTENSION SUMMARY of \d+ messages/);
		expect(started.session.customEntries("compacted")[0]?.data).toEqual({ fromExtension: true });
		expect(started.session.customEntries("started")[0]?.data).toEqual({ reason: "new" });
	});

	it("session events tell extensions about new, forked, resumed and branched sessions and shutdown", async () => {
		world = sessions.newWorld();
		world.writeProject(".prime/agent/extensions/log.js", LOG_EXTENSION);
		const log = join(world.project, "events.log");
		const events = () => readFileSync(log, "utf8").trim().split("\n");
		sessions.faux.setResponses([fauxAssistantMessage("one"), fauxAssistantMessage("two")]);
		const open = (options: { fork?: string; resume?: string; at?: string }) =>
			sessions.start({
				...options,
				trustProject: true,
			});

		started = await open({});
		await started.agentSession.prompt("first");
		await started.agentSession.prompt("second");
		const first = started.session;
		const firstAnswer = first.branch().find((entry) => entry.type === "message" && entry.message.role === "assistant");
		await started.dispose();
		started = await open({ fork: first.id });
		await started.dispose();
		started = await open({ resume: first.id, at: firstAnswer?.id });
		await started.dispose();
		started = undefined;
		expect(events()).toEqual([
			"session_start new",
			"session_shutdown",
			"session_start fork",
			`session_fork ${first.path} ${first.leafId}`,
			"session_shutdown",
			"session_start resume",
			`session_switch ${first.path}`,
			`session_tree ${firstAnswer?.id} ${first.leafId}`,
			"session_shutdown",
		]);
	});

	it("api.compact() from a command while idle finishes before print mode ends, and before the next prompt", async () => {
		world = sessions.newWorld();
		world.writeHome("settings.json", { compaction: { keepRecentTokens: 1 } });
		world.writeProject(
			".prime/agent/extensions/squash.js",
			"export default function (api) { api.registerCommand('squash', { handler() { api.compact({ customInstructions: 'squash it' }); return 'asked'; } }); }\n",
		);
		const summaries: string[] = [];
		const summary = (context: Context) => {
			summaries.push(textOf(context.messages[0]));
			return fauxAssistantMessage(`## Goal\nSquashed ${summaries.length}.`);
		};
		sessions.faux.setResponses([fauxAssistantMessage("one"), fauxAssistantMessage("two"), summary, summary]);
		started = await sessions.start({ trustProject: true });
		await started.agentSession.prompt("first");
		await started.agentSession.prompt("second");
		const out = new PassThrough();
		const err = new PassThrough();
		let shown = "";
		out.on("data", (chunk) => {
			shown += chunk;
		});
		expect(await printMode(localLink(started), "/squash", { out, err })).toBe(0);
		expect(shown).toBe("asked\n");
		const compactions = () =>
			fileEntries(started?.session.path as string).filter((entry) => entry.type === "compaction");
		expect(compactions().length).toBe(1);
		// One summary of the history, one of the split turn's beginning (the kept part starts at "two").
		expect(summaries.length).toBe(2);
		expect(summaries[0]).toContain("Additional instructions: squash it");
	});

	it("api.compact() asked for while idle runs before the next prompt's model call, not alongside it", async () => {
		world = sessions.newWorld();
		world.writeHome("settings.json", { compaction: { keepRecentTokens: 1 } });
		const calls: string[] = [];
		const reply = (text: string) => async (context: Context) => {
			const summary = textOf(context.messages[0]).startsWith("<conversation>");
			calls.push(summary ? "summary asked" : `agent: ${textOf(context.messages[0]).slice(0, 40)}`);
			if (!summary) return fauxAssistantMessage(text);
			// A summariser takes a moment, as a real one does: long enough for a racing prompt to get in.
			await new Promise((resolve) => setTimeout(resolve, 100));
			calls.push("summary answered");
			return fauxAssistantMessage("## Goal\nEarlier.");
		};
		sessions.faux.setResponses([reply("one"), reply("two")]);
		const first = await sessions.start();
		await first.agentSession.prompt("first");
		await first.dispose();
		world.writeProject(
			".prime/agent/extensions/compact-on-resume.js",
			"export default function (api) { api.on('session_start', (event) => { if (event.reason === 'resume') api.compact(); }); }\n",
		);
		sessions.faux.setResponses([reply(""), reply("three")]);
		started = await sessions.start({ resume: first.session.id, trustProject: true });
		expect((await started.agentSession.prompt("third")).status).toBe("ok");
		expect(calls).toEqual([
			"agent: first",
			"summary asked",
			"summary answered",
			"agent: The conversation before this point was c",
		]);
	});

	it("-e loads a module for one run; a missing one is reported and the session starts anyway", async () => {
		world = sessions.newWorld();
		world.writeProject(
			"tools/hello.mjs",
			"export function extension(api) { api.registerCommand('hello', { handler() {} }); }\n",
		);
		started = await sessions.start({
			extensionPaths: ["tools/hello.mjs", "tools/missing.js"],
		});
		expect(started.extensions.commandNames).toEqual(["goal", "harness", "hello", "mcp", "pc", "refine", "skill"]);
		expect(started.extensions.problems).toEqual([
			{ path: join(world.project, "tools/missing.js"), phase: "load", message: "no such file" },
		]);
	});
});

describe("prime-agent package", () => {
	it("parses -e (repeatable), package actions and --local; a missing action or package is a usage error", () => {
		expect(parseArgs(["-e", "a.js", "--extension", "pkg", "-p", "hi"]).extensions).toEqual(["a.js", "pkg"]);
		expect(parseArgs(["package", "install", "npm:@scope/ext@1.2.3", "--local"])).toMatchObject({
			command: "package",
			packageAction: "install",
			packageSource: "npm:@scope/ext@1.2.3",
			local: true,
		});
		expect(() => parseArgs(["package"])).toThrow(/needs install, list or remove/);
		expect(() => parseArgs(["package", "remove"])).toThrow(/needs a package/);
		expect(() => parseArgs(["package", "list", "extra"])).toThrow(/Unexpected argument "extra"/);
	});

	it("installs a folder package globally or locally, lists and removes it, keeping other settings", async () => {
		world = sessions.newWorld();
		world.writeHome("settings.json", { defaultModel: "faux/faux-1" });
		world.writeProject("ext/index.js", "export default function () {}\n");
		// Run from a subfolder of the repository: --local means the repository's .prime/agent.
		world.writeProject("src/.keep", "");
		mkdirSync(join(world.project, ".git"));
		const run = async (...argv: string[]) => {
			const io = memoryIo(join(world.project, "src"), world.env);
			const code = await runCli(argv, io);
			return { code, out: io.out(), err: io.err() };
		};
		expect((await run("package", "install", "../ext")).code).toBe(0);
		expect((await run("package", "list")).out).toBe(`${join(world.project, "ext")}\n`);
		expect(JSON.parse(readFileSync(join(world.home, "settings.json"), "utf8"))).toEqual({
			defaultModel: "faux/faux-1",
			packages: [join(world.project, "ext")],
		});
		expect((await run("package", "list", "--local")).out).toContain("No extension packages for this project");
		expect((await run("package", "install", "../ext", "--local")).code).toBe(0);
		expect(JSON.parse(readFileSync(join(world.project, ".prime/agent/settings.json"), "utf8")).packages).toEqual([
			join(world.project, "ext"),
		]);
		// Installed by the user: the project's packages are approved as installed.
		expect(projectTrust({ cwd: world.project, agentHome: world.home }).allows("packages")).toBe(true);
		expect((await run("package", "remove", "../ext")).out).toContain("Removed");
		expect((await run("package", "list")).out).toContain("No extension packages");
		const missing = await run("package", "install", "nowhere");
		expect(missing.code).toBe(2);
		expect(missing.err).toContain("No folder at");
		const noEntry = await run("package", "remove", "../ext");
		expect(noEntry.err).toContain("package list");
	});
});
