import { readFileSync } from "node:fs";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { type CliProcess, spawnCli, spawnCliText } from "prime-agent-test-support/cli-process";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import { type LoopbackServer, openAiCompletionsServer } from "prime-agent-test-support/loopback-servers";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, describe, expect, it } from "vitest";
import { ExitCode } from "../src/errors.js";
import { localLink } from "../src/link/index.js";
import { type InterruptAction, oneShotInterrupts } from "../src/modes/index.js";
import type { StartedSession } from "../src/startup/index.js";

const LONG_CELL = "import time\nprint('working', flush=True)\ntime.sleep(120)";

let world: TempWorld;
afterEach(() => world?.cleanup());

describe("Ctrl-C in a session", () => {
	const sessions = useFauxSessions();

	async function startWithCellRunning(): Promise<{ started: StartedSession; run: Promise<unknown> }> {
		const started = await sessions.start();
		const printed = new Promise<void>((resolve) =>
			started.agentSession.subscribe((event) => {
				if (event.type === "tool_execution_update") resolve();
			}),
		);
		const run = started.agentSession.prompt("run the long job");
		await printed;
		return { started, run };
	}

	it("the first press interrupts only the running cell; the kernel keeps its state and the model carries on", async () => {
		const seen: Context[] = [];
		sessions.faux.setResponses([
			fauxAssistantMessage(fauxToolCall("ipython", { code: `kept = 'yes'\n${LONG_CELL}` })),
			(context) => {
				seen.push(JSON.parse(JSON.stringify(context)));
				return fauxAssistantMessage(fauxToolCall("ipython", { code: "print(kept)" }));
			},
			fauxAssistantMessage("Stopped the long job."),
		]);
		const { started, run } = await startWithCellRunning();
		const actions: InterruptAction[] = [];
		const interrupts = oneShotInterrupts(localLink(started), (action) => actions.push(action));
		expect(await interrupts.press()).toBe("cell");
		const outcome = await run;
		interrupts.dispose();
		expect(outcome).toMatchObject({ status: "ok" });
		expect(actions).toEqual(["cell"]);
		const results = started.session.context().messages.filter((message) => message.role === "toolResult");
		expect(results[0]).toMatchObject({ isError: true, details: { status: "aborted" } });
		expect(JSON.stringify(seen[0]?.messages.at(-1))).toContain("KeyboardInterrupt");
		expect(results[1]).toMatchObject({ isError: false, content: [{ type: "text", text: "yes" }] });
	});

	it("a second press stops the run", async () => {
		sessions.faux.setResponses([
			fauxAssistantMessage(fauxToolCall("ipython", { code: LONG_CELL })),
			fauxAssistantMessage(fauxToolCall("ipython", { code: LONG_CELL })),
		]);
		const { started, run } = await startWithCellRunning();
		const interrupts = oneShotInterrupts(localLink(started), () => {});
		expect(await interrupts.press()).toBe("cell");
		expect(await interrupts.press()).toBe("exit");
		const outcome = await run;
		interrupts.dispose();
		expect(outcome).toMatchObject({ status: "aborted" });
	});
});

describe("Ctrl-C sent to the command line", () => {
	let server: LoopbackServer;
	let cli: CliProcess | undefined;
	afterEach(async () => {
		cli?.child.kill("SIGKILL");
		await server?.close();
	});

	it("the first SIGINT interrupts only the running cell: the kernel keeps its state and the run finishes", async () => {
		server = await openAiCompletionsServer([
			{ code: `kept = 'yes'\n${LONG_CELL}` },
			{ code: "print(kept)" },
			{ text: "The job was interrupted." },
		]);
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
		world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "coder" }] } } });
		cli = spawnCli(["--mode", "json", "-p", "run the long job", "--model", "local/coder"], world.project, world.env);
		await cli.waitForEvent((event) => event.type === "tool_execution_update");
		cli.child.kill("SIGINT");
		expect(await cli.exitCode()).toBe(ExitCode.ok);
		const ends = cli.events.filter((event) => event.type === "tool_execution_end") as {
			isError: boolean;
			result: { content: { text: string }[]; details: { status: string } };
		}[];
		expect(ends[0]?.result.details.status).toBe("aborted");
		expect(ends[0]?.result.content[0]?.text).toContain("KeyboardInterrupt");
		expect(ends[1]).toMatchObject({ isError: false, result: { content: [{ text: "yes" }] } });
		expect(cli.events).toContainEqual({ type: "interrupt", action: "cell" });
		expect(cli.events.at(-1)).toMatchObject({ type: "result", status: "ok" });
	});

	it("stops the run on the second SIGINT and exits 130 saying how to resume", async () => {
		server = await openAiCompletionsServer([{ code: LONG_CELL }, { code: LONG_CELL }]);
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
		world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "coder" }] } } });
		cli = spawnCli(["--mode", "json", "-p", "run the long job", "--model", "local/coder"], world.project, world.env);
		await cli.waitForEvent((event) => event.type === "tool_execution_update");
		cli.child.kill("SIGINT");
		await cli.waitForEvent((event) => event.type === "tool_execution_end");
		cli.child.kill("SIGINT");
		expect(await cli.exitCode()).toBe(ExitCode.interrupted);
		const result = cli.events.at(-1) as { type: string; status: string; message: string };
		expect(result).toMatchObject({ type: "result", status: "aborted" });
		expect(result.message).toContain("prime-agent --resume");
	});

	it("SIGTERM ends the run mid-cell and says how to resume the saved session (text mode)", async () => {
		server = await openAiCompletionsServer([{ code: LONG_CELL }]);
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
		world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "coder" }] } } });
		const text = spawnCliText(["-p", "run the long job", "--model", "local/coder"], world.project, world.env);
		try {
			// Text mode shows no cell output while it runs: the cell starts once the kernel is ready.
			await text.waitFor("stderr", "Python kernel ready");
			text.child.kill("SIGTERM");
			expect(await text.exitCode()).toBe(ExitCode.interrupted);
			expect(text.stderr()).toContain("\nStopping (SIGTERM)…\n");
			expect(text.stderr()).toMatch(
				/Interrupted\. The session is saved: resume it with `prime-agent --resume \S+`\.\n$/,
			);
		} finally {
			text.child.kill("SIGKILL");
		}
	});

	it("SIGHUP ends the run mid-cell; the saved session holds the interrupted cell (json mode)", async () => {
		server = await openAiCompletionsServer([{ code: LONG_CELL }]);
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
		world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "coder" }] } } });
		cli = spawnCli(["--mode", "json", "-p", "run the long job", "--model", "local/coder"], world.project, world.env);
		await cli.waitForEvent((event) => event.type === "tool_execution_update");
		cli.child.kill("SIGHUP");
		expect(await cli.exitCode()).toBe(ExitCode.interrupted);
		expect(cli.events).toContainEqual({ type: "interrupt", action: "exit", signal: "SIGHUP" });
		const session = cli.events[0] as { id: string; path: string };
		const result = cli.events.at(-1) as { type: string; status: string; message: string };
		expect(result).toMatchObject({ type: "result", status: "aborted" });
		expect(result.message).toBe(
			`Interrupted. The session is saved: resume it with \`prime-agent --resume ${session.id}\`.`,
		);
		const saved = readFileSync(session.path, "utf8");
		expect(saved).toContain('"role":"toolResult"');
		expect(saved).toContain("KeyboardInterrupt");
	});
});
