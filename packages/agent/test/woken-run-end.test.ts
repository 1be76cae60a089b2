import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { expect, it } from "vitest";
import { type LinkRunEnd, localLink, type SessionEvent } from "../src/link/index.js";
import { chatMode } from "../src/modes/index.js";
import { cell, scriptAgents } from "./agent-scripts.js";

const sessions = useFauxSessions({ provider: "fauxw", models: [{ id: "m" }] });

/** Resolves with the first event that passes `test` (a woken turn ends on its own time). */
function nextEvent<T extends SessionEvent>(
	link: ReturnType<typeof localLink>,
	test: (event: SessionEvent) => event is T,
): Promise<T> {
	return new Promise((resolve) => {
		const stop = link.subscribe((event) => {
			if (!test(event)) return;
			stop();
			resolve(event);
		});
	});
}

it("a turn a sub-agent's notice woke ends with the exit code and message a prompt's run would have", async () => {
	const started = await sessions.start();
	const link = localLink(started);
	const release = join(sessions.world.project, "release-alpha");
	scriptAgents(sessions, {
		root: [
			cell('await rlm("count to three", name="alpha")'),
			fauxAssistantMessage("Spawned alpha; waiting for it."),
			// The turn the notice wakes fails at the provider.
			fauxAssistantMessage("", { stopReason: "error", errorMessage: "400 the request was refused" }),
		],
		// Alpha ends once the root's turn has ended: its notice wakes the idle root.
		alpha: [
			cell(`import os, time\nwhile not os.path.exists(${JSON.stringify(release)}):\n    time.sleep(0.05)`),
			fauxAssistantMessage("1 2 3"),
		],
	});
	const woken = nextEvent(link, (event): event is { type: "run_end" } & LinkRunEnd => event.type === "run_end");
	const first = await link.prompt("spawn a helper");
	expect(first.status).toBe("ok");
	expect(first.exitCode).toBe(0);
	writeFileSync(release, "");

	const end = await woken;
	expect(end.status).toBe("error");
	expect(end.exitCode).toBe(1);
	expect(end.message).toBe(
		`The model fauxw/m at ${started.model.baseUrl} failed: 400 the request was refused. Check the model id, your key or quota, and the network (\`prime-agent doctor\` helps), then retry. The session is saved: resume it with \`prime-agent --resume ${started.session.id}\`.`,
	);
	expect(end.result).toMatchObject({ type: "result", status: "error", exitCode: 1, message: end.message });
	await link.close();
});

it("the line chat says how a woken turn ended, as it does for the prompts typed into it", async () => {
	const started = await sessions.start();
	const release = join(sessions.world.project, "release-beta");
	scriptAgents(sessions, {
		root: [
			cell('await rlm("count to three", name="beta")'),
			fauxAssistantMessage("Spawned beta; waiting for it."),
			fauxAssistantMessage("", { stopReason: "error", errorMessage: "400 the request was refused" }),
		],
		beta: [
			cell(`import os, time\nwhile not os.path.exists(${JSON.stringify(release)}):\n    time.sleep(0.05)`),
			fauxAssistantMessage("1 2 3"),
		],
	});
	const input = new PassThrough();
	const out = new PassThrough();
	const err = new PassThrough();
	let notes = "";
	err.on("data", (chunk) => {
		notes += chunk;
	});
	let shown = "";
	const answered = new Promise<void>((resolve) =>
		out.on("data", (chunk) => {
			shown += chunk;
			if (shown.includes("Spawned beta; waiting for it.")) resolve();
		}),
	);
	const link = localLink(started);
	const failed = nextEvent(link, (event): event is { type: "run_end" } & LinkRunEnd => event.type === "run_end");
	const finished = chatMode(link, input, out, err);
	input.write("spawn a helper\n");
	await answered;
	writeFileSync(release, "");
	const end = await failed;
	input.end("/exit\n");
	expect(await finished).toBe(0);
	expect(end.message).toMatch(/^The model fauxw\/m at .* failed: 400 the request was refused\./);
	expect(notes.split(`${end.message}\n`).length).toBe(2);
});
