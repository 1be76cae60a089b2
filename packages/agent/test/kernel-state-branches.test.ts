import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { useFauxSessions, wireText } from "prime-agent-test-support/faux-session";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, expect, it } from "vitest";
import { ipythonStateMessage, listKernelNames } from "../src/compaction/index.js";
import type { SessionEntry } from "../src/session/index.js";
import { SessionKernel } from "../src/tools/index.js";

const sessions = useFauxSessions();

let kernel: SessionKernel | undefined;
let world: TempWorld | undefined;
afterEach(async () => {
	await kernel?.dispose();
	kernel = undefined;
	world?.cleanup();
	world = undefined;
});

/** A model turn that runs `code` in one cell. */
const cell = (code: string) => fauxAssistantMessage(fauxToolCall("ipython", { code }));

/** A model turn that runs `code`, then remembers what the model was sent before its answer. */
function checkThenAnswer(code: string, seen: Context[]) {
	return [
		(context: Context) => {
			seen.push(JSON.parse(JSON.stringify(context)));
			return cell(code);
		},
		(context: Context) => {
			seen.push(JSON.parse(JSON.stringify(context)));
			return fauxAssistantMessage("checked");
		},
	];
}

/** The text of the last tool result and of the kernel note in a request. */
function lastResult(context: Context): string {
	return wireText(context.messages.filter((message) => message.role === "toolResult").at(-1) as never);
}
function kernelNote(context: Context): string {
	const note = context.messages.find(
		(message) => message.role === "user" && wireText(message).startsWith("[This session continues"),
	);
	return note ? wireText(note) : "";
}

/** The ids of the entries holding the ipython results, in order. */
const cellResults = (entries: readonly SessionEntry[]) =>
	entries.filter((entry) => entry.type === "message" && entry.message.role === "toolResult").map((entry) => entry.id);

it("-r --at and --fork --at restore the variables of the branch point, never of a later point or of another branch", async () => {
	sessions.newWorld();
	sessions.faux.setResponses([
		...[1, 2, 3, 4].map((step) => cell(`step = ${step}\nseen = ${JSON.stringify([1, 2, 3, 4].slice(0, step))}`)),
		fauxAssistantMessage("counted"),
	]);
	const original = await sessions.start();
	await original.agentSession.prompt("count to four");
	await original.dispose();
	const [first, second, , fourth] = cellResults(original.session.branch());
	const check = "print(step, seen)";

	const seen: Context[] = [];
	sessions.faux.setResponses(checkThenAnswer(check, seen));
	const forked = await sessions.start({ fork: original.session.id, at: second });
	await forked.agentSession.prompt("where are we?");
	await forked.dispose();
	expect(lastResult(seen[1] as Context)).toMatch(/came back from the saved state[\s\S]*\n2 \[1, 2\]$/);
	expect(kernelNote(seen[0] as Context)).toContain(
		`The state saved after cell 2 of this conversation (entry ${second}), its last cell, is restored when it starts`,
	);

	// A branch in the file itself: its own cell changes the state there, and only there.
	sessions.faux.setResponses([...checkThenAnswer(check, seen), cell("step = 20"), fauxAssistantMessage("set")]);
	const branched = await sessions.start({ resume: original.session.id, at: second });
	await branched.agentSession.prompt("where are we?");
	expect(lastResult(seen[3] as Context)).toMatch(/\n2 \[1, 2\]$/);
	await branched.agentSession.prompt("set 20");
	await branched.dispose();

	// Back to the first branch's end: its own state, not the one saved last (on the other branch).
	sessions.faux.setResponses(checkThenAnswer(check, seen));
	const back = await sessions.start({ resume: original.session.id, at: fourth });
	await back.agentSession.prompt("and here?");
	await back.dispose();
	expect(lastResult(seen[5] as Context)).toMatch(/\n4 \[1, 2, 3, 4\]$/);

	// A point after the first cell's call but before its result has no state of its own: an empty kernel, said so.
	const call = original.session.entry(first as string)?.parentId as string;
	sessions.faux.setResponses(checkThenAnswer("print('step' in dir())", seen));
	const before = await sessions.start({ fork: original.session.id, at: call });
	await before.agentSession.prompt("anything?");
	await before.dispose();
	expect(lastResult(seen[7] as Context)).toBe("False");
	expect(JSON.stringify(seen[6]?.messages)).not.toContain("is restored when it starts");
}, 180_000); // five sessions, each starting its own kernel

it("a branch point after cells whose state was not kept restores the point before them and says which", async () => {
	sessions.newWorld();
	sessions.faux.setResponses([
		cell("step = 1"),
		cell("step = 2\nraise ValueError('half done')"),
		fauxAssistantMessage("stopped"),
	]);
	const original = await sessions.start();
	await original.agentSession.prompt("go");
	await original.dispose();
	const [first, failed] = cellResults(original.session.branch());

	const seen: Context[] = [];
	sessions.faux.setResponses(checkThenAnswer("print(step)", seen));
	const resumed = await sessions.start({ resume: original.session.id, at: failed });
	await resumed.agentSession.prompt("where?");
	await resumed.dispose();
	expect(kernelNote(seen[0] as Context)).toContain(
		`The state saved after cell 1 of this conversation (entry ${first}), not after the 1 later cell (they failed or their state was not kept, so what they changed is missing), is restored`,
	);
	expect(lastResult(seen[1] as Context)).toMatch(/\n1$/);
}, 120_000);

it("a crash keeps the saved variables: the restarted kernel gets them back and later saves keep them", async () => {
	sessions.newWorld();
	const seen: Context[] = [];
	sessions.faux.setResponses([
		cell("data = {'k': [1, 2]}"),
		cell("import os\nos._exit(1)"),
		(context: Context) => {
			seen.push(JSON.parse(JSON.stringify(context)));
			return cell("more = data['k'] + [3]\nprint(more)");
		},
		(context: Context) => {
			seen.push(JSON.parse(JSON.stringify(context)));
			return fauxAssistantMessage("recovered");
		},
	]);
	const started = await sessions.start();
	await started.agentSession.prompt("crash in the middle");
	await started.dispose();
	expect(lastResult(seen[0] as Context)).toContain("[the kernel process died; it restarts on the next call");
	const after = lastResult(seen[1] as Context);
	expect(after).toMatch(/^\[Kernel restarted: the kernel process exited during the previous cell \(/);
	expect(after).toContain(
		"[Kernel state restored from the snapshot saved after the last successful cell before the restart (what the cell that stopped the kernel changed is lost). 1 name came back from the saved state: data.]",
	);
	expect(after).toMatch(/\n\[1, 2, 3\]$/);
	const manifest = JSON.parse(readFileSync(join(started.session.artifactDir, "kernel-state", "manifest.json"), "utf8"));
	expect(manifest.variables.map((variable: { name: string }) => variable.name).sort()).toEqual(["data", "more"]);

	const later: Context[] = [];
	sessions.faux.setResponses(checkThenAnswer("print(data, more)", later));
	const resumed = await sessions.start({ resume: started.session.id });
	await resumed.agentSession.prompt("still there?");
	expect(lastResult(later[1] as Context)).toMatch(/\n\{'k': \[1, 2\]\} \[1, 2, 3\]$/);
}, 120_000);

it("<ipython_state> after a restart says the kernel restarted, and the one after it that nothing was reset", async () => {
	world = makeTempWorld();
	kernel = new SessionKernel({
		cwd: world.project,
		outputDir: join(world.home, "outputs"),
		python: kernelPythonForTests(),
		state: { dir: join(world.home, "state") },
	});
	await kernel.run("kept = 1");
	expect((await kernel.run("import os\nos._exit(1)")).cell.status).toBe("died");
	const next = await kernel.run("print(kept)");
	expect(next.cell.stdout).toBe("1\n");

	const note = ipythonStateMessage((await listKernelNames(kernel)) ?? {});
	expect(note.split("\n").slice(0, 4)).toEqual([
		"<ipython_state>",
		"The conversation above was compacted. The IPython kernel restarted once since the last state note (the kernel process exited during the previous cell (The kernel process exited with code 1 while this cell was running; all kernel variables are gone.)): names defined before a restart are there only if its snapshot restored them.",
		"These names are still defined; use them directly and do not redefine or re-read them:",
		"kept (int)",
	]);
	expect(ipythonStateMessage((await listKernelNames(kernel)) ?? {})).toContain("nothing was reset");
}, 60_000);
