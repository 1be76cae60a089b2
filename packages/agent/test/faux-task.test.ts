import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { type Context, fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import type { TempWorld } from "prime-agent-test-support/temp-home";
import { expect, it } from "vitest";
import type { StartedSession } from "../src/startup/index.js";
import type { IpythonDetails } from "../src/tools/index.js";

const sessions = useFauxSessions();
let world: TempWorld;
let started: StartedSession | undefined;

const CALC = "def add(a, b):\n    return a - b\n";
const TEST =
	"import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\nif __name__ == '__main__':\n    unittest.main()\n";

function entries(path: string) {
	return readFileSync(path, "utf8")
		.trim()
		.split("\n")
		.map((line) => JSON.parse(line));
}

it("fixes a failing test in a temp repo: reads into a variable, edits, runs the test in %%bash, answers", async () => {
	world = sessions.newWorld();
	world.writeProject("calc.py", CALC);
	world.writeProject("test_calc.py", TEST);
	world.writeProject("AGENTS.md", "Run tests with python3 -m unittest.\n");
	execFileSync("git", ["init", "-q"], { cwd: world.project });

	const sent: Context[] = [];
	let fileExistedBeforeFirstAnswer: boolean | undefined;
	const record = (context: Context) => sent.push(JSON.parse(JSON.stringify(context)));
	sessions.faux.setResponses([
		(context) => {
			record(context);
			fileExistedBeforeFirstAnswer = started ? existsSync(started.session.path) : undefined;
			return fauxAssistantMessage([
				fauxText("Let me look at the code."),
				fauxToolCall("ipython", { code: 'src = open("calc.py").read()\nprint(src)' }),
			]);
		},
		(context) => {
			record(context);
			return fauxAssistantMessage(
				fauxToolCall("ipython", { code: 'print(await edit("calc.py", "return a - b", "return a + b"))' }),
			);
		},
		(context) => {
			record(context);
			return fauxAssistantMessage(
				fauxToolCall("ipython", { code: "\n%%bash\npython3 -m unittest -q test_calc 2>&1\n" }),
			);
		},
		(context) => {
			record(context);
			return fauxAssistantMessage("Fixed `add` in calc.py: it subtracted; the test passes now.");
		},
	]);

	started = await sessions.start({});
	const outcome = await started.agentSession.prompt("fix the failing test in this repo");

	expect(outcome.status).toBe("ok");
	expect(readFileSync(`${world.project}/calc.py`, "utf8")).toBe("def add(a, b):\n    return a + b\n");
	expect(fileExistedBeforeFirstAnswer).toBe(false);

	// What the model was sent: one tool, the prompt rules, the project context, the cell outputs.
	expect(sent).toHaveLength(4);
	const first = sent[0] as Context;
	expect(first.tools?.map((tool) => tool.name)).toEqual(["ipython", "prime_context"]);
	expect(Object.keys((first.tools?.[0]?.parameters as { properties: object } | undefined)?.properties ?? {})).toEqual([
		"code",
	]);
	expect(first.systemPrompt).toContain("%%bash");
	expect(first.systemPrompt).toContain("await edit(path, old, new)");
	expect(first.systemPrompt).toContain("Run tests with python3 -m unittest.");
	expect(first.systemPrompt).toContain(world.project);
	expect(first.messages).toEqual([expect.objectContaining({ role: "user" })]);
	const resultText = (context: Context) => {
		const last = context.messages[context.messages.length - 1];
		expect(last?.role).toBe("toolResult");
		return (last as { content: { text: string }[] }).content.map((part) => part.text).join("");
	};
	expect(resultText(sent[1] as Context)).toContain("return a - b");
	expect(resultText(sent[2] as Context)).toContain("Edited calc.py: +1 -1 lines");
	expect(resultText(sent[3] as Context)).toMatch(/\bOK\b/);

	// The transcript: header, then a chain of entries, nothing lost.
	const records = entries(started.session.path);
	expect(records[0]).toMatchObject({ type: "session", id: started.session.id, cwd: world.project });
	const body = records.slice(1);
	expect(body.map((entry) => (entry.type === "message" ? entry.message.role : entry.type))).toEqual([
		"model_change",
		"user",
		"assistant",
		"toolResult",
		"assistant",
		"toolResult",
		"assistant",
		"toolResult",
		"assistant",
	]);
	body.forEach((entry, index) => {
		expect(entry.parentId).toBe(index === 0 ? null : body[index - 1].id);
	});
	const editResult = body[5].message as { details: IpythonDetails; isError: boolean };
	expect(editResult.isError).toBe(false);
	expect(editResult.details.diffs).toEqual([
		expect.objectContaining({ path: `${world.project}/calc.py`, added: 1, removed: 1 }),
	]);
	expect(editResult.details.diffs[0]?.diff).toContain("+    return a + b");
});

it("a cell that raises comes back as an error result with the traceback, and the kernel keeps its state", async () => {
	world = sessions.newWorld();
	sessions.faux.setResponses([
		fauxAssistantMessage(fauxToolCall("ipython", { code: "x = 41\n1 / 0" })),
		fauxAssistantMessage(fauxToolCall("ipython", { code: "x + 1" })),
		fauxAssistantMessage("done"),
	]);
	started = await sessions.start({});
	await started.agentSession.prompt("divide");
	const results = entries(started.session.path)
		.filter((entry) => entry.type === "message" && entry.message.role === "toolResult")
		.map((entry) => entry.message);
	expect(results[0].isError).toBe(true);
	expect(results[0].details.errorName).toBe("ZeroDivisionError");
	expect(results[0].content[0].text).toContain("ZeroDivisionError");
	expect(results[1].isError).toBe(false);
	expect(results[1].content[0].text).toContain("42");
});

it("%%bash: a failing command fails the cell with its output; shell state does not persist but %cd does", async () => {
	world = sessions.newWorld();
	world.writeProject("sub/marker.txt", "here\n");
	sessions.faux.setResponses([
		fauxAssistantMessage(fauxToolCall("ipython", { code: "%%bash\necho before; export GONE=1; cd sub; exit 3" })),
		fauxAssistantMessage(fauxToolCall("ipython", { code: '%%bash\necho "gone=[$GONE]"; pwd' })),
		fauxAssistantMessage(fauxToolCall("ipython", { code: "%cd sub" })),
		fauxAssistantMessage(fauxToolCall("ipython", { code: "%%bash\ncat marker.txt" })),
		fauxAssistantMessage("done"),
	]);
	started = await sessions.start({});
	await started.agentSession.prompt("shell");
	const results = started.session
		.context()
		.messages.filter((message) => message.role === "toolResult")
		.map((message) => ({
			isError: message.isError,
			text: message.content.map((part) => ("text" in part ? part.text : "")).join(""),
		}));
	expect(results[0]?.isError).toBe(true);
	expect(results[0]?.text).toContain("before");
	expect(results[1]?.text).toContain("gone=[]");
	expect(results[1]?.text).toContain(world.project);
	expect(results[1]?.text).not.toContain(`${world.project}/sub`);
	expect(results[3]).toEqual({ isError: false, text: "here" });
});

it("a huge output is capped for the model, which is told where the complete output is", async () => {
	world = sessions.newWorld();
	// The tool's own cap is what is tested here, so the context broker is off.
	world.writeHome("prime-context.json", { enabled: false });
	sessions.faux.setResponses([
		fauxAssistantMessage(fauxToolCall("ipython", { code: "print('x' * 100_000 + 'END')" })),
		fauxAssistantMessage("done"),
	]);
	started = await sessions.start({});
	await started.agentSession.prompt("print a lot");
	const result = started.session.context().messages.find((message) => message.role === "toolResult");
	const text = result?.role === "toolResult" ? (result.content[0] as { text: string }).text : "";
	expect(text).toContain("[... output truncated at 65536 chars ...]");
	expect(text.length).toBeLessThan(70_000);
	const details = (result as { details: IpythonDetails }).details;
	expect(details.fullOutputPath?.startsWith(started.session.artifactDir)).toBe(true);
	expect(text).toContain(`complete output (${100_004} bytes): ${details.fullOutputPath}`);
	expect(readFileSync(details.fullOutputPath as string, "utf8")).toContain("END");
});
