import { readFileSync } from "node:fs";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/index.js";
import { ExitCode } from "../src/errors.js";
import type { SessionEntry } from "../src/session/index.js";
import { type StartedSession, startSession } from "../src/startup/index.js";
import { memoryIo } from "./cli-io.js";
import { type WindowCall, type WindowServer, type WindowServerOptions, windowServer } from "./window-server.js";

/** A 24K window, as a local server is often started (`vllm serve --max-model-len 24576`). */
const WINDOW = 24_576;
/** What a models.json model asks for by default (`DEFAULT_MAX_TOKENS`). */
const MAX_TOKENS = 16_384;
/** The reserve compaction keeps on this window: the default 16,384, at most half the window. */
const RESERVE = WINDOW / 2;

let server: WindowServer | undefined;
let world: TempWorld | undefined;
let started: StartedSession | undefined;
afterEach(async () => {
	await started?.dispose();
	await server?.close();
	world?.cleanup();
	started = undefined;
	server = undefined;
	world = undefined;
});

/**
 * A temp world whose models.json names the loopback server as `local/coder` (with `contextWindow`
 * when given), Prime Context off so compaction sees the raw output.
 */
async function serve(
	options: WindowServerOptions,
	model: { contextWindow?: number } = {},
	settings?: unknown,
): Promise<{ server: WindowServer; world: TempWorld }> {
	server = await windowServer(options);
	world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests(), PRIME_AGENT_AUTO_REFINE: "0" });
	world.writeHome("models.json", {
		providers: {
			local: { baseUrl: server.baseUrl, api: "openai-completions", models: [{ id: "coder", ...model }] },
		},
	});
	world.writeHome("prime-context.json", { enabled: false });
	if (settings) world.writeHome("settings.json", settings);
	return { server, world };
}

/** `cells` cells printing 4,000 characters each (1,000 tokens), then a final answer. */
const blocks = (cells: number) => (n: number) =>
	n < cells ? { code: `print('${n % 10}' * 4000)` } : { text: "All blocks printed." };

async function start(current: TempWorld): Promise<StartedSession> {
	started = await startSession({ cwd: current.project, env: current.env, model: "local/coder" });
	return started;
}

const compactionsOf = (session: StartedSession) =>
	session.session.branch().filter((entry: SessionEntry) => entry.type === "compaction").length;

describe("requests sized to the window", () => {
	it("on a 24K window served as vLLM serves it, no request asks for more output than the window leaves", {
		timeout: 180_000,
	}, async () => {
		const { server, world } = await serve(
			{ window: WINDOW, enforce: true, reply: blocks(20) },
			{ contextWindow: WINDOW },
		);
		const session = await start(world);
		const outcome = await session.agentSession.prompt("print twenty blocks");
		expect(outcome.status).toBe("ok");
		expect(server.calls.filter((call) => call.refused)).toHaveLength(0);
		const turns = server.calls.filter((call) => !call.summary);
		expect(turns).toHaveLength(21);
		for (const call of server.calls) {
			expect(call.prompt + (call.maxTokens as number)).toBeLessThanOrEqual(WINDOW);
			expect(call.maxTokens).toBeGreaterThanOrEqual(Math.min(RESERVE, Math.floor(MAX_TOKENS * 0.8)));
			expect(call.maxTokens).toBeLessThanOrEqual(MAX_TOKENS);
		}
		// The 16,384 a model asks for by default no longer fits once the prompt passes 8,192 tokens: 12 of
		// the 21 turns asked for less, exactly what the window left (the server counts as the agent estimates).
		const capped = turns.filter((call) => (call.maxTokens as number) < MAX_TOKENS);
		expect(capped).toHaveLength(12);
		expect(turns.filter((call) => call.prompt > WINDOW - MAX_TOKENS)).toEqual(capped);
		for (const call of capped) expect(call.prompt + (call.maxTokens as number)).toBe(WINDOW);
		expect(compactionsOf(session)).toBe(2);
		expect(server.calls.filter((call) => call.summary)).toHaveLength(2);
	});

	it("on a 16K window the summary requests are sized to the window too", { timeout: 180_000 }, async () => {
		const small = 16_384;
		const { server, world } = await serve(
			{ window: small, enforce: true, reply: blocks(20) },
			{ contextWindow: small },
		);
		const session = await start(world);
		const outcome = await session.agentSession.prompt("print twenty blocks");
		expect(outcome.status).toBe("ok");
		expect(server.calls.filter((call) => call.refused)).toHaveLength(0);
		expect(compactionsOf(session)).toBe(5);
		// A summary asks for at most 80% of the reserve (13,107 tokens), which with its ~3,400-token prompt
		// does not fit 16,384: it asks for what the window leaves.
		const summaries = server.calls.filter((call) => call.summary);
		expect(summaries.map((call) => call.maxTokens)).toEqual([13017, 12976, 12928, 12928, 12928]);
		for (const call of server.calls) expect(call.prompt + (call.maxTokens as number)).toBeLessThanOrEqual(small);
	});

	it("a refinement's planning call, its prompt a long trajectory, asks for what the window leaves after it", {
		timeout: 180_000,
	}, async () => {
		// Twenty cells, the answer, then the planning call of /refine: an empty plan.
		const reply = (n: number) => (n <= 20 ? blocks(20)(n) : { text: "[]" });
		const { server, world } = await serve({ window: WINDOW, enforce: true, reply }, { contextWindow: WINDOW });
		const session = await start(world);
		expect((await session.agentSession.prompt("print twenty blocks")).status).toBe("ok");
		const refined = await session.agentSession.prompt("/refine");
		expect(refined.status).toBe("ok");
		expect(server.calls.filter((call) => call.refused)).toHaveLength(0);
		const planning = server.calls.at(-1) as WindowCall;
		expect(systemText(planning.body).startsWith("You maintain an AI coding agent's continual harness")).toBe(true);
		// The newest 80,000 characters of the trajectory and the instructions: over 20,000 tokens of
		// prompt, so the answer gets the few thousand left, not 16,384.
		expect(planning.prompt).toBeGreaterThan(20_000);
		expectFilledWindow(planning);
	});

	it("a skill's drafting call, its prompt a long trajectory, asks for what the window leaves after it", {
		timeout: 180_000,
	}, async () => {
		// Twenty cells, one asking for a skill (the draft is no skill: the cell fails), then the answer.
		const script = (n: number) =>
			n < 20
				? blocks(20)(n)
				: n === 20
					? { code: 'print(await skills.create("blocks", "print blocks", scope="project"))' }
					: n === 21
						? { text: "not a skill" }
						: { text: "The draft did not validate." };
		const { server, world } = await serve({ window: WINDOW, enforce: true, reply: script }, { contextWindow: WINDOW });
		const session = await start(world);
		expect((await session.agentSession.prompt("print twenty blocks, then make a skill")).status).toBe("ok");
		expect(server.calls.filter((call) => call.refused)).toHaveLength(0);
		const drafting = server.calls.filter(
			(call) => systemText(call.body).includes("<trajectory>") || requestText(call.body).includes("<trajectory>"),
		);
		expect(drafting).toHaveLength(1);
		// The newest 60,000 characters of the trajectory: 15,000 tokens and more of prompt.
		expect((drafting[0] as WindowCall).prompt).toBeGreaterThan(15_000);
		expectFilledWindow(drafting[0] as WindowCall);
	});

	it("a server whose window is smaller than the one configured refuses the output size: the error names the window to set, and nothing is compacted", {
		timeout: 120_000,
	}, async () => {
		// models.json says nothing of the window: the agent assumes 128,000 tokens, the server has 24,576.
		const { server, world } = await serve({ window: WINDOW, enforce: true, reply: blocks(12) });
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "print twelve blocks", "--model", "local/coder"], io)).toBe(ExitCode.modelError);
		const refused = server.calls.filter((call) => call.refused);
		expect(refused).toHaveLength(1);
		// The refused request was the last one: no compaction, no retry.
		expect(server.calls.at(-1)).toBe(refused[0]);
		expect(server.calls.filter((call) => call.summary)).toHaveLength(0);
		const { prompt, maxTokens } = refused[0] as { prompt: number; maxTokens: number };
		expect(maxTokens).toBe(MAX_TOKENS);
		const sessionId = /--resume ([0-9a-f-]+)`/.exec(io.err())?.[1];
		// The run's last words on stderr, after the cells' progress lines.
		expect(io.err().trimEnd().split("\n").at(-1)).toBe(
			`The server of local/coder refused the request for the size of the answer it asked for: its context window is 24,576 tokens, and the request asked for 16,384 tokens of answer on top of ${prompt.toLocaleString("en-US")} tokens of prompt. local/coder is set up with a window of 128,000 tokens, larger than the server's: set "contextWindow": 24576 for it in models.json, so that requests are sized to fit, then retry. The session is saved: resume it with \`prime-agent --resume ${sessionId}\`.`,
		);

		// Done as the message says, the same session goes on and every request fits.
		world.writeHome("models.json", {
			providers: {
				local: { baseUrl: server.baseUrl, api: "openai-completions", models: [{ id: "coder", contextWindow: WINDOW }] },
			},
		});
		const again = memoryIo(world.project, world.env);
		const resume = ["--resume", sessionId as string, "-p", "go on", "--model", "local/coder"];
		expect(await runCli(resume, again)).toBe(ExitCode.ok);
		expect(server.calls.filter((call) => call.refused)).toHaveLength(1);
	});
});

describe("compaction over a long run", () => {
	it("makes one summariser call per compaction, each updating the previous summary", { timeout: 240_000 }, async () => {
		const { server, world } = await serve(
			{ window: WINDOW, enforce: false, reply: blocks(40) },
			{ contextWindow: WINDOW },
		);
		const session = await start(world);
		const outcome = await session.agentSession.prompt("print forty blocks");
		expect(outcome.status).toBe("ok");
		const summaries = server.calls.filter((call) => call.summary).map((call) => requestText(call.body));
		expect(compactionsOf(session)).toBe(6);
		expect(summaries).toHaveLength(6);
		expect(summaries.filter((text) => text.includes("This is the first part of a turn"))).toHaveLength(0);
		expect(summaries.filter((text) => text.includes("<previous-summary>"))).toHaveLength(5);
		// Every request stayed under the window the whole way.
		for (const call of server.calls) expect(call.prompt + (call.maxTokens as number)).toBeLessThanOrEqual(WINDOW);
	});
});

/** A real pytest run (21 KB): 17 tests fail, their tracebacks fill the middle, the verdict is the last line. */
const PYTEST_LOG = readFileSync(
	new URL("../../../fixtures/outputs/010-markupsafe-pytest-escape-order/output.txt", import.meta.url),
	"utf8",
);

describe("what the summariser is shown of a long result", () => {
	it("a long test run reaches the summary request with its verdict, failing tests, exceptions and locations", {
		timeout: 120_000,
	}, async () => {
		const script = [
			{ code: "print(open('pytest.log').read(), end='')" },
			{ code: "print('next')" },
			{ text: "17 tests fail: escaping doubles the ampersand." },
		];
		const { server, world } = await serve(
			{ window: 200_000, enforce: true, reply: (n) => script[n] ?? { text: "(no more)" } },
			{ contextWindow: 200_000 },
			{ compaction: { keepRecentTokens: 1000 } },
		);
		world.writeProject("pytest.log", PYTEST_LOG);
		const session = await start(world);
		expect((await session.agentSession.prompt("run the tests")).status).toBe("ok");
		expect((await session.agentSession.prompt("/compact")).command?.message).toMatch(/^Compacted: /);
		const summaries = server.calls.filter((call) => call.summary).map((call) => requestText(call.body));
		expect(summaries).toHaveLength(1);
		const request = summaries[0] as string;
		for (const line of [
			// The verdict, the last failing ids, the last exception and its location.
			"================== 17 failed, 22 passed, 41 skipped in 0.77s ===================",
			"FAILED tests/test_markupsafe.py::test_escape_silent[markupsafe._native] - Ass...",
			"E       AssertionError: assert Markup('&lt;foo&amp;gt;') == Markup('&lt;foo&gt;')",
			"tests/test_markupsafe.py:180: AssertionError",
			// From the middle: another test file's failure.
			"E       AssertionError: assert Markup('<em>&...amp;gt;</em>') == '<em>&lt;awesome&gt;</em>'",
			"tests/test_markupsafe.py:109: AssertionError",
		])
			expect(request).toContain(`\n${line}\n`);
		// The run's first lines are there too; of its 484 lines, the 350 between the decisive ones are
		// counted in 52 gaps, not shown.
		expect(request).toContain("\n============================= test session starts ==============================\n");
		const gaps = [...request.matchAll(/\n\[\.\.\. ([\d,]+) lines? not shown\]\n/g)].map((gap) => Number(gap[1]));
		expect(gaps).toHaveLength(52);
		expect(gaps.reduce((sum, lines) => sum + lines, 0)).toBe(350);
	});
});

/**
 * A request whose answer was given what the window left after its prompt, no more (the agent
 * estimates the prompt as the server counts it, to a token or two of rounding) and not 16,384.
 */
function expectFilledWindow(call: WindowCall): void {
	const asked = call.maxTokens as number;
	expect(asked).toBeLessThan(MAX_TOKENS);
	expect(call.prompt + asked).toBeLessThanOrEqual(WINDOW);
	expect(call.prompt + asked).toBeGreaterThan(WINDOW - 4);
}

/** The system prompt a request was sent with. */
function systemText(body: Record<string, unknown>): string {
	const system = (body.messages as { role: string; content: unknown }[]).find((message) => message.role === "system");
	return typeof system?.content === "string" ? system.content : "";
}

/** The user message of a summary request (the conversation and the instructions). */
function requestText(body: Record<string, unknown>): string {
	const user = (body.messages as { role: string; content: unknown }[]).find((message) => message.role === "user");
	const content = user?.content;
	if (typeof content === "string") return content;
	return (content as { text?: string }[]).map((part) => part.text ?? "").join("");
}
