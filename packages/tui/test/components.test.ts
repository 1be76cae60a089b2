import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { Markdown, visibleWidth } from "@mariozechner/pi-tui";
import { Session } from "prime-agent";
import { afterEach, describe, expect, it } from "vitest";
import { listFolder } from "../src/autocomplete.js";
import { CapsuleCard, parseCapsule } from "../src/components/capsule.js";
import { CellView } from "../src/components/cell.js";
import { AssistantView, settledLength } from "../src/components/messages.js";
import { Picker } from "../src/components/picker.js";
import { formatStatus, type StatusInfo, shortCount, statusLines } from "../src/components/status-line.js";
import { highlightCode } from "../src/highlight.js";
import { plainText } from "../src/style.js";
import { markdownTheme } from "../src/theme.js";
import { branchTarget, treeItems, treeRows } from "../src/tree.js";
import { visible } from "./virtual-terminal.js";

const CAPSULE = `<prime_context_output id="obs_000007" tool="ipython" bytes="648029" lines="9553" source="public-complete-output">
Large output archived locally. No excerpt fits this capsule; recover exact text as below.
TEST_RESULT FAIL 193 failed, 1183 passed, 8 skipped, 1 xfailed, exit 0
EXCEPTIONS: AssertionError x67 (first at line 1435)
Read exact visible text: prime_context action=read id=obs_000007 startLine=1415 endLine=1445
</prime_context_output>`;

const lines = (component: { render(width: number): string[] }, width = 80) => component.render(width).map(visible);

let temp: string | undefined;
afterEach(() => {
	if (temp) rmSync(temp, { recursive: true, force: true });
	temp = undefined;
});

describe("syntax highlighting", () => {
	it("colours keywords, strings, comments and numbers and keeps the text", () => {
		const code = "def f(x):\n    return x + 1  # add\ns = 'a'";
		const out = highlightCode(code);
		expect(visible(out)).toBe(code);
		expect(out).toContain("\x1b[35mdef\x1b[39m");
		expect(out).toContain("\x1b[34mf\x1b[39m");
		expect(out).toContain("\x1b[32m'a'\x1b[39m");
		expect(out).toContain("\x1b[90m# add\x1b[39m");
		expect(out).toContain("\x1b[33m1\x1b[39m");
	});

	it("styles each line of a multi-line string on its own line", () => {
		const out = highlightCode('x = """one\ntwo"""');
		expect(out.split("\n")).toEqual(['x = \x1b[32m"""one\x1b[39m', '\x1b[32mtwo"""\x1b[39m']);
	});

	it("shows a %%bash cell's magic line coloured and the script as written; other languages unchanged", () => {
		expect(highlightCode("%%bash\nls -la")).toBe("\x1b[35m%%bash\x1b[39m\nls -la");
		expect(highlightCode("SELECT 1", "sql")).toBe("SELECT 1");
	});

	it("survives an unterminated string", () => {
		expect(visible(highlightCode("print('oops"))).toBe("print('oops");
	});
});

describe("capsule cards", () => {
	it("parses the observation id, size and status line", () => {
		const capsule = parseCapsule(`[note]\n${CAPSULE}`);
		expect(capsule).toMatchObject({
			id: "obs_000007",
			tool: "ipython",
			bytes: 648029,
			lines: 9553,
			status: "TEST_RESULT FAIL 193 failed, 1183 passed, 8 skipped, 1 xfailed, exit 0",
		});
		expect(capsule?.text.startsWith("<prime_context_output")).toBe(true);
		expect(parseCapsule("plain output\n42")).toBeUndefined();
		expect(parseCapsule('<prime_context_output tool="x">')).toBeUndefined();
	});

	it("is three lines collapsed and reads the first archive page only when expanded", async () => {
		const reads: string[] = [];
		let expanded = false;
		let loaded = 0;
		const card = new CapsuleCard(
			parseCapsule(CAPSULE) as NonNullable<ReturnType<typeof parseCapsule>>,
			async (id, start, end) => {
				reads.push(`${id} ${start}:${end}`);
				return "line one\nline two";
			},
			() => expanded,
			() => loaded++,
		);
		expect(lines(card)).toEqual([
			"┌ obs_000007 · ipython · 648,029 bytes · 9,553 lines",
			"│ TEST_RESULT FAIL 193 failed, 1183 passed, 8 skipped, 1 xfailed, exit 0",
			"└ archived · Ctrl-O reads it here",
		]);
		expect(reads).toEqual([]);
		expanded = true;
		expect(lines(card)).toContain("│ reading…");
		await new Promise((resolve) => setImmediate(resolve));
		expect(reads).toEqual(["obs_000007 1:40"]);
		expect(loaded).toBe(1);
		const shown = lines(card);
		expect(shown).toContain("├ archive lines 1-40 of 9553:");
		expect(shown).toContain("│ line one");
		expect(shown.at(-1)).toBe("└ Ctrl-O collapses");
		// Rendering again does not read again.
		lines(card);
		expect(reads).toHaveLength(1);
	});

	it("says when the archive cannot be read", async () => {
		const card = new CapsuleCard(
			parseCapsule(CAPSULE) as NonNullable<ReturnType<typeof parseCapsule>>,
			async () => {
				throw new Error("obs_000007 is not in this session's archive");
			},
			() => true,
			() => {},
		);
		card.render(80);
		await new Promise((resolve) => setImmediate(resolve));
		expect(lines(card)).toContain("│ The archive could not be read: obs_000007 is not in this session's archive");
	});
});

describe("cells", () => {
	const cellOf = (code: string, expanded = () => false) =>
		new CellView({
			toolName: "ipython",
			args: { code },
			isExpanded: expanded,
			readArchive: async () => "",
			requestRender: () => {},
		});

	it("collapsed: the code and the last four lines of the output", () => {
		const cell = cellOf("for i in range(10):\n    print(i)");
		cell.finish("0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n", false, { status: "ok", durationMs: 1234 });
		expect(lines(cell)).toEqual([
			"✓ ipython 1.2s",
			"│ for i in range(10):",
			"│     print(i)",
			"├ … 6 earlier lines (Ctrl-O shows them)",
			"│ 6",
			"│ 7",
			"│ 8",
			"│ 9",
			"└",
		]);
	});

	it("expanded: the whole output, up to 200 lines", () => {
		let expanded = true;
		const cell = cellOf("print(1)", () => expanded);
		cell.finish(Array.from({ length: 250 }, (_, i) => `row ${i}`).join("\n"), false, { status: "ok", durationMs: 5 });
		const shown = lines(cell);
		expect(shown).toContain("│ row 0");
		expect(shown).toContain("│ row 199");
		expect(shown).not.toContain("│ row 200");
		expect(shown.at(-2)).toBe("├ … 50 more lines (in the session file)");
		expanded = false;
		expect(lines(cell)).toContain("│ row 249");
	});

	it("names the exception of a failed cell, and an interrupted one says so", () => {
		const failed = cellOf("1/0");
		failed.finish("ZeroDivisionError: division by zero", true, {
			status: "error",
			errorName: "ZeroDivisionError",
			durationMs: 10,
		});
		expect(lines(failed)[0]).toBe("✗ ZeroDivisionError ipython 0.0s");
		const stopped = cellOf("sleep(60)");
		stopped.finish("KeyboardInterrupt", true, { status: "aborted", durationMs: 2000 });
		expect(lines(stopped)[0]).toBe("✗ interrupted ipython 2.0s");
	});

	it("shows a capsule result as a card", () => {
		const cell = cellOf("print(open('pytest.log').read())");
		cell.finish(CAPSULE, false, { status: "ok", durationMs: 100 });
		expect(cell.capsuleId).toBe("obs_000007");
		expect(lines(cell).slice(2)).toEqual([
			"┌ obs_000007 · ipython · 648,029 bytes · 9,553 lines",
			"│ TEST_RESULT FAIL 193 failed, 1183 passed, 8 skipped, 1 xfailed, exit 0",
			"└ archived · Ctrl-O reads it here",
		]);
	});

	it("a capsule cell shows the archive page once it is read (its cached lines are replaced)", async () => {
		let expanded = false;
		let renders = 0;
		const cell = new CellView({
			toolName: "ipython",
			args: { code: "print(log)" },
			isExpanded: () => expanded,
			readArchive: async () => "1: first archived line",
			requestRender: () => renders++,
		});
		cell.finish(CAPSULE, false, { status: "ok", durationMs: 100 });
		lines(cell);
		expanded = true;
		cell.invalidate();
		expect(lines(cell)).toContain("│ reading…");
		await new Promise((resolve) => setImmediate(resolve));
		expect(renders).toBe(1);
		expect(lines(cell)).toContain("│ 1: first archived line");
	});

	it("never renders a line wider than the terminal, even with tabs, escapes and wide characters", () => {
		const cell = cellOf(`x = "${"界".repeat(60)}"\n\tprint(x)`, () => true);
		cell.finish(`\x1b[31mred\x1b[0m\t${"界".repeat(50)}\r\n${"y".repeat(300)}`, false, { status: "ok" });
		for (const width of [80, 33, 12]) {
			for (const line of cell.render(width)) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
		}
	});

	it("while running shows how long it has run and how to interrupt it", () => {
		const cell = cellOf("import time; time.sleep(60)");
		cell.setPartial("working\n");
		expect(lines(cell)).toEqual([
			"● ipython 0.0s running (Esc interrupts)",
			"│ import time; time.sleep(60)",
			"│ working",
			"└",
		]);
	});
});

describe("streaming answers", () => {
	const answer = [
		"# Plan",
		"",
		"First **read** the parser.",
		"",
		"```python",
		"def f():",
		"",
		"    return 1",
		"```",
		"",
		"- one",
		"- two",
		"",
		"Done.",
	].join("\n");

	it("splits at the last blank line outside a code fence", () => {
		expect(settledLength("one\n\ntwo")).toBe(4);
		expect(settledLength("one\n\n```\na\n\nb")).toBe(4);
		expect(settledLength("no blank line yet")).toBe(0);
	});

	it("renders the same lines as one markdown block, however the text arrived", () => {
		const whole = new Markdown(answer, 1, 0, markdownTheme).render(60);
		const streamed = new AssistantView();
		for (let end = 1; end <= answer.length; end += 7) streamed.setContent(answer.slice(0, end), "");
		streamed.setContent(answer, "");
		expect(streamed.render(60)).toEqual(whole);
	});
	it("sets a stopped turn's message apart from the half-written paragraph above it", () => {
		const stopped = new AssistantView();
		stopped.setContent("The fix is to change the", "");
		stopped.setError("Turn stopped.");
		expect(stopped.render(40).map((line) => visible(line).trimEnd())).toEqual([
			" The fix is to change the",
			"",
			"Turn stopped.",
		]);
		const silent = new AssistantView();
		silent.setError("Turn stopped.");
		expect(silent.render(40).map(visible)).toEqual(["Turn stopped."]);
	});
});

describe("status line", () => {
	const info: StatusInfo = {
		model: "anthropic/claude-sonnet-4-5",
		contextTokens: 50_000,
		contextWindow: 200_000,
		totalTokens: 123_456,
		cost: 0.4567,
		kernel: "busy",
		runningChildren: 2,
		queued: 1,
		working: true,
		goal: "make the tests pass",
	};

	it("shows model, context share, tokens and cost, kernel, sub-agents, queue and goal", () => {
		expect(visible(formatStatus(info))).toBe(
			"● working │ kernel busy · anthropic/claude-sonnet-4-5 · 25% of 200k · 123k tok $0.457 · 2 sub-agents running · 1 queued · goal: make the tests pass",
		);
		expect(visible(formatStatus({ ...info, working: false, runningChildren: 0, queued: 0, goal: undefined }))).toBe(
			"● ready │ kernel busy · anthropic/claude-sonnet-4-5 · 25% of 200k · 123k tok $0.457",
		);
	});

	it("wraps between its pieces when one line does not fit, so the cost and the queue stay in sight", () => {
		expect(statusLines(info, 80).map(visible)).toEqual([
			"● working │ kernel busy · anthropic/claude-sonnet-4-5 · 25% of 200k",
			"123k tok $0.457 · 2 sub-agents running · 1 queued · goal: make the tests pass",
		]);
		const idle = { ...info, model: "local/coder", working: false, runningChildren: 0, queued: 0, goal: undefined };
		expect(statusLines({ ...idle, kernel: "not started" }, 60).map(visible)).toEqual([
			"● ready │ kernel not started · local/coder · 25% of 200k",
			"123k tok $0.457",
		]);
		expect(statusLines({ ...info, goal: "a\nmulti-line   goal" }, 200).map(visible)).toHaveLength(1);
		for (const line of statusLines(info, 30)) expect(visibleWidth(line)).toBeLessThanOrEqual(30);
		expect(statusLines(info, 30).map(visible).join("\n")).toContain("$0.457");
	});

	it("counts shortly", () => {
		expect([999, 1000, 9_950, 12_345, 1_500_000].map(shortCount)).toEqual(["999", "1.0k", "9.9k", "12k", "1.5M"]);
	});
});

describe("session tree", () => {
	it("lists entries depth first, indents branches, marks the active path, and takes a user message back", () => {
		temp = mkdtempSync(join(tmpdir(), "prime-tui-tree-"));
		const session = Session.create({ dir: temp, cwd: temp });
		const user = (text: string) => session.appendMessage({ role: "user", content: text, timestamp: 0 });
		const assistant = (text: string) => session.appendMessage(fauxAssistantMessage(text));
		const first = user("first question");
		const answer = assistant("first answer");
		user("second question");
		assistant("second answer");
		session.branchFrom(answer);
		user("another second");
		const rows = treeRows(session.entries, session.leafId);
		expect(rows.map((row) => [row.depth, row.active, row.label])).toEqual([
			[0, true, "you: first question"],
			[0, true, "agent: first answer"],
			[0, false, "you: second question"],
			[0, false, "agent: second answer"],
			[1, true, "you: another second"],
		]);
		expect(treeItems(rows, session.leafId).map((item) => item.label)).toEqual([
			"• you: first question",
			"• agent: first answer",
			"· you: second question",
			"· agent: second answer",
			"  ◆ you: another second",
		]);
		expect(branchTarget(session.entry(first) as NonNullable<ReturnType<Session["entry"]>>)).toEqual({
			leafId: null,
			editorText: "first question",
		});
		expect(branchTarget(session.entry(answer) as NonNullable<ReturnType<Session["entry"]>>)).toEqual({
			leafId: answer,
		});
	});
});

describe("pickers", () => {
	const items = [
		{ value: "anthropic/claude-sonnet-4-5", label: "anthropic/claude-sonnet-4-5" },
		{ value: "openai/gpt-5", label: "openai/gpt-5" },
		{ value: "ollama/qwen2.5-coder:14b", label: "ollama/qwen2.5-coder:14b" },
	];

	it("typing filters, Enter picks the highlighted item", () => {
		const picker = new Picker("Model", items, 5);
		let picked: string | undefined;
		picker.onPick = (value) => {
			picked = value;
		};
		for (const key of "qwen") picker.handleInput(key);
		expect(lines(picker, 30)).toEqual([
			"─".repeat(30),
			"Model · filter: qwen",
			"→ ollama/qwen2.5-coder:14b",
			"─".repeat(30),
		]);
		picker.handleInput("\r");
		expect(picked).toBe("ollama/qwen2.5-coder:14b");
	});

	it("Esc and Ctrl-C close it without a choice", () => {
		for (const key of ["\x1b", "\x03"]) {
			const picker = new Picker("Model", items, 5);
			let closed = 0;
			let picked = 0;
			picker.onClose = () => closed++;
			picker.onPick = () => picked++;
			picker.handleInput(key);
			expect([closed, picked]).toEqual([1, 0]);
		}
	});
});

describe("@ file completion", () => {
	it("lists the folder typed so far: folders first, no hidden or generated folders unless asked", () => {
		temp = mkdtempSync(join(tmpdir(), "prime-tui-files-"));
		mkdirSync(join(temp, "src"));
		mkdirSync(join(temp, "node_modules"));
		mkdirSync(join(temp, ".git"));
		writeFileSync(join(temp, "setup.py"), "");
		writeFileSync(join(temp, ".env"), "");
		writeFileSync(join(temp, "src", "main.py"), "");
		expect(listFolder(temp, "").map((item) => item.value)).toEqual(["@src/", "@setup.py"]);
		expect(listFolder(temp, "s").map((item) => item.label)).toEqual(["src/", "setup.py"]);
		expect(listFolder(temp, "src/m").map((item) => item.value)).toEqual(["@src/main.py"]);
		expect(listFolder(temp, ".e").map((item) => item.value)).toEqual(["@.env"]);
		expect(listFolder(temp, "missing/")).toEqual([]);
	});
});

describe("plain text", () => {
	it("drops escape sequences and control characters and expands tabs", () => {
		expect(plainText("a\tb\x1b[31mred\x1b[0m\x07\r\nnext\x1b]0;title\x07")).toBe("a    bred\nnext");
	});

	it("shows what a terminal shows of a line rewritten with \\r (a progress bar): its last state", () => {
		expect(plainText(" progress 0%\r progress 50%\r progress 100%\ndone\n")).toBe(" progress 100%\ndone\n");
		// A line ending in \r (the next write would overwrite it) keeps its last text.
		expect(plainText("\r 10%\r 20%\r\nnext")).toBe(" 20%\nnext");
		expect(plainText("a\r\r\n")).toBe("a\n");
	});
});
