import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { CONTEXT_FILE_MAX_CHARS, findContextFiles } from "./context-files.js";
import { buildSystemPrompt } from "./system-prompt.js";

let root: string | undefined;
afterEach(() => {
	if (root) rmSync(root, { recursive: true, force: true });
});

it("names one tool, %%bash, edit, the working directory and the permission warning", () => {
	const prompt = buildSystemPrompt({ cwd: "/home/user/project", date: "2026-01-02" });
	expect(prompt).toContain("exactly one tool, `ipython`");
	expect(prompt).toContain("`%%bash`");
	// A background process with its output left on the cell keeps the cell from ending.
	expect(prompt).toContain("`setsid nohup <command> > server.log 2>&1 &`");
	expect(prompt).toContain("await edit(path, old, new)");
	expect(prompt).toContain("Working directory: /home/user/project");
	expect(prompt).toContain("Today's date: 2026-01-02");
	expect(prompt).toContain("with the user's permissions");
	expect(prompt).toContain("bind what you read or find to a named");
});

it("does not promise kernel names that do not exist yet", () => {
	const prompt = buildSystemPrompt({ cwd: "/p" });
	for (const name of ["refine."]) expect(prompt).not.toContain(name);
	expect(prompt).toContain("Call `await goal.complete(summary)` only once every item");
	expect(prompt).toContain("await compact.run(");
	expect(prompt).toContain('handle = await rlm("task", name=None, model=None, thinking=None)');
});

it("tells the model to end its turn after spawning sub-agents, and a child at the depth limit that it cannot spawn", () => {
	expect(buildSystemPrompt({ cwd: "/p" })).toContain(
		"After spawning, end your turn: do not poll, sleep or loop waiting.",
	);
	const child = buildSystemPrompt({ cwd: "/p", canSpawn: false });
	expect(child).not.toContain("await rlm(");
	expect(child).toContain("You cannot start sub-agents of your own here (the depth limit is reached)");
});

it("appends context files from the agent home and every directory down to the working directory, nearest last", () => {
	root = mkdtempSync(join(tmpdir(), "prime-prompt-"));
	const home = join(root, "home");
	const repo = join(root, "repo");
	const sub = join(repo, "pkg");
	mkdirSync(home);
	mkdirSync(sub, { recursive: true });
	writeFileSync(join(home, "AGENTS.md"), "global rule");
	writeFileSync(join(repo, "AGENTS.md"), "repo rule");
	writeFileSync(join(repo, "CLAUDE.md"), "ignored when AGENTS.md exists");
	writeFileSync(join(sub, "CLAUDE.md"), "package rule");
	const files = findContextFiles(sub, home);
	expect(files.map((file) => file.content)).toEqual(["global rule", "repo rule", "package rule"]);
	const prompt = buildSystemPrompt({ cwd: sub, contextFiles: files });
	expect(prompt.indexOf("repo rule")).toBeLessThan(prompt.indexOf("package rule"));
	expect(prompt).toContain(`## ${join(sub, "CLAUDE.md")}`);
});

it("cuts an oversized context file and says where the rest is", () => {
	root = mkdtempSync(join(tmpdir(), "prime-prompt-"));
	writeFileSync(join(root, "AGENTS.md"), "x".repeat(CONTEXT_FILE_MAX_CHARS + 10));
	const [file] = findContextFiles(root).filter((found) => found.path.startsWith(root as string));
	expect(file?.content.length).toBeLessThan(CONTEXT_FILE_MAX_CHARS + 200);
	expect(file?.content).toContain(`read ${join(root, "AGENTS.md")} for the rest`);
});
