import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import {
	type Context,
	type FauxProviderRegistration,
	fauxAssistantMessage,
	fauxToolCall,
	type Message,
	registerFauxProvider,
} from "@mariozechner/pi-ai";
import { Kernel } from "prime-agent-kernel";
import { afterAll, beforeAll, expect, it } from "vitest";
import { COMPACT_REQUEST_TYPE, compactRequestHandler } from "../src/compaction/index.js";
import { AgentSession } from "../src/orchestrator/index.js";
import { Session } from "../src/session/index.js";
import { ipythonParameters, RUNTIME_PYTHON_DIR } from "../src/tools/index.js";
import { kernelPythonForTests } from "./kernel-python.js";

let faux: FauxProviderRegistration;
let kernel: Kernel;
let dir: string;

beforeAll(async () => {
	faux = registerFauxProvider({ provider: "fauxk", models: [{ id: "m", contextWindow: 1_000_000 }] });
	dir = mkdtempSync(join(tmpdir(), "prime-agent-compact-run-"));
	kernel = await Kernel.start({
		python: kernelPythonForTests(),
		cwd: dir,
		pythonPath: [RUNTIME_PYTHON_DIR],
		outputDir: join(dir, "outputs"),
		startupCode: "import prime_agent_runtime as _r\n_r.install()\ndel _r\n",
	});
});
afterAll(async () => {
	faux.unregister();
	await kernel.shutdown();
	rmSync(dir, { recursive: true, force: true });
});

function text(message: Message): string {
	if (typeof message.content === "string") return message.content;
	return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

// The per-session kernel does not route this request yet, so the runtime's real kernel side is
// driven here through a kernel this test starts itself, with the same runtime and handler.
it("`await compact.run()` in the kernel compacts at the next turn boundary and the kernel keeps its variables", async () => {
	const cellTool: AgentTool<typeof ipythonParameters> = {
		name: "ipython",
		label: "IPython",
		description: "Run a cell.",
		parameters: ipythonParameters,
		async execute(_id, params) {
			const cell = await kernel.execute(params.code);
			return {
				content: [
					{ type: "text", text: `${cell.stdout}${cell.error ? `${cell.error.ename}: ${cell.error.evalue}` : ""}` },
				],
				details: {},
			};
		},
	};
	const session = new AgentSession(Session.create({ dir, cwd: dir }), {
		model: faux.getModel(),
		apiKey: "test-key",
		systemPrompt: "test",
		tools: [cellTool],
		compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 50 },
	});
	kernel.onHostRequest(COMPACT_REQUEST_TYPE, compactRequestHandler(session));

	const summaries: string[] = [];
	const sent: Context[] = [];
	const steps = [
		fauxAssistantMessage(fauxToolCall("ipython", { code: "table = list(range(5))\nprint('t' * 4000)" })),
		fauxAssistantMessage(fauxToolCall("ipython", { code: "print(await compact.run('keep the table'))" })),
		fauxAssistantMessage(fauxToolCall("ipython", { code: "print(sum(table))" })),
		fauxAssistantMessage("done"),
	];
	faux.setResponses(
		Array.from({ length: 8 }, () => (context: Context) => {
			if (context.systemPrompt?.startsWith("You summarise")) {
				summaries.push(text(context.messages[0] as Message));
				return fauxAssistantMessage("## Goal\nKernel-requested summary.");
			}
			sent.push(JSON.parse(JSON.stringify(context)));
			return steps.shift() ?? fauxAssistantMessage("no more steps");
		}),
	);

	const outcome = await session.prompt("work, then compact");
	expect(outcome.status).toBe("ok");
	// The cell got the host's answer; the compaction ran before the following model call.
	const afterRequest = sent[2] as Context;
	expect(text(afterRequest.messages.filter((message) => message.role === "toolResult").pop() as Message)).toContain(
		"Compaction requested",
	);
	expect(summaries).toHaveLength(1);
	expect(summaries[0]).toContain("Additional instructions: keep the table");
	expect(text(afterRequest.messages[0] as Message)).toContain("Kernel-requested summary.");
	expect(session.session.branch().filter((entry) => entry.type === "compaction")).toHaveLength(1);
	// The variable defined before the compaction still works after it.
	const last = sent[3] as Context;
	expect(text(last.messages.filter((message) => message.role === "toolResult").pop() as Message)).toBe("10\n");
});
