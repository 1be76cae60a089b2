import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AssistantMessage, type Context, fauxAssistantMessage } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { describe, expect, it } from "vitest";
import { runCli } from "../src/cli/index.js";
import { ExitCode } from "../src/errors.js";
import {
	CREATOR_SYSTEM_PROMPT,
	discoverSkills,
	SKILL_INDEX_LIMIT,
	skillPromptSection,
	skillRoots,
} from "../src/skills/index.js";
import { projectTrust } from "../src/trust/index.js";
import { cell } from "./agent-scripts.js";
import { memoryIo } from "./cli-io.js";

const sessions = useFauxSessions();

const CSV_SKILL_MD = `---
name: csv-stats
description: Column statistics of CSV files (mean, min, max) without pandas.
---

Use it when a CSV file needs quick numbers.

    stats = skills.load("csv-stats")
    stats.mean([1, 2, 3])
`;

/** A skill folder under `root`: SKILL.md plus an `__init__.py` holding `code`. */
function writeSkill(root: string, name: string, skillMd: string, code: string): string {
	const dir = join(root, name);
	mkdirSync(dir, { recursive: true });
	writeFileSync(join(dir, "SKILL.md"), skillMd);
	writeFileSync(join(dir, "__init__.py"), code);
	return dir;
}

function skillMd(name: string, description: string): string {
	return `---\nname: ${name}\ndescription: ${description}\n---\n\nHow to use ${name}.\n`;
}

const projectSkills = () => join(sessions.world.project, ".prime", "skills");
const homeSkills = () => join(sessions.world.home, "skills");

describe("skills in a session", () => {
	it("are listed in the system prompt (name and description only), loaded and used from a cell", async () => {
		writeSkill(projectSkills(), "csv-stats", CSV_SKILL_MD, "def mean(values):\n    return sum(values) / len(values)\n");
		writeSkill(homeSkills(), "zeta-notes", skillMd("zeta-notes", "Notes about zeta."), "VALUE = 7\n");
		const prompts: string[] = [];
		const results: string[] = [];
		const record = (context: Context) => {
			prompts.push(context.systemPrompt ?? "");
			const last = context.messages.at(-1);
			if (last?.role === "toolResult")
				results.push(last.content.map((p) => (p.type === "text" ? p.text : "")).join(""));
		};
		const answer = (reply: () => AssistantMessage) => (context: Context) => {
			record(context);
			return reply();
		};
		sessions.faux.setResponses([
			answer(() => cell('stats = skills.load("csv-stats")\nprint(stats.mean([1, 2, 6]), stats.__name__)')),
			answer(() => fauxAssistantMessage("done")),
			answer(() => fauxAssistantMessage("again")),
			answer(() => fauxAssistantMessage("third")),
		]);
		const started = await sessions.start({ trustProject: true });
		await started.agentSession.prompt("average please");
		await started.agentSession.prompt("once more");
		expect(prompts[0]).toContain(
			"\n\n- csv-stats: Column statistics of CSV files (mean, min, max) without pandas.\n- zeta-notes: Notes about zeta.",
		);
		expect(prompts[0]).not.toContain("Use it when a CSV file needs quick numbers.");
		// Unchanged skills: the same system prompt on every call and every prompt.
		expect(prompts).toHaveLength(3);
		expect(new Set(prompts).size).toBe(1);
		expect(results[0]).toBe(`${CSV_SKILL_MD}\n3.0 prime_skills.csv_stats`);
		// A new skill is listed from the next prompt on.
		writeSkill(homeSkills(), "alpha-tool", skillMd("alpha-tool", "First by name."), "");
		await started.agentSession.prompt("and now?");
		expect(prompts[3]).toContain("\n\n- alpha-tool: First by name.\n- csv-stats: ");
	});

	it("skills.list(), an unknown name and a package that fails to import raise clear errors", async () => {
		writeSkill(
			projectSkills(),
			"broken",
			skillMd("broken", "Fails on import."),
			"raise RuntimeError('nope at import')\n",
		);
		const started = await sessions.start({ trustProject: true });
		const listed = await started.kernel.run("print([(s['name'], s['source']) for s in skills.list()])");
		expect(listed.cell.stdout).toBe("[('broken', 'project')]\n");
		const unknown = await started.kernel.run('skills.load("missing")');
		expect(unknown.cell.error?.ename).toBe("SkillError");
		expect(unknown.cell.error?.evalue).toBe(
			"skills.load('missing'): no skill named \"missing\" (skills: broken); skills.list() lists them.",
		);
		const broken = await started.kernel.run('skills.load("broken", quiet=True)');
		expect(broken.cell.error?.ename).toBe("SkillError");
		expect(broken.cell.error?.evalue).toBe(
			`skills.load('broken'): importing ${join(projectSkills(), "broken")} failed: RuntimeError: nope at import`,
		);
	});

	it("a bad SKILL.md is left out and named by `skill list`; the project's skill hides the home's of the same name", async () => {
		writeSkill(projectSkills(), "dup", skillMd("dup", "Project copy."), "");
		writeSkill(homeSkills(), "dup", skillMd("dup", "Home copy."), "");
		writeSkill(homeSkills(), "no-description", "---\nname: no-description\n---\nbody\n", "");
		const io = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill", "list"], io)).toBe(ExitCode.ok);
		expect(io.out()).toBe(
			`dup  (project)  Project copy.\ndup  (user, hidden by the one above)  ${join(homeSkills(), "dup")}\n`,
		);
		const problem = `Left out: ${join(homeSkills(), "no-description", "SKILL.md")}: "description" in the front matter is missing or empty; say what the skill does.`;
		expect(io.err()).toBe(`${problem}\n`);
		// In a session, /skill list names the broken one too.
		const started = await sessions.start();
		const listed = await started.agentSession.prompt("/skill list");
		expect(listed.command?.message).toBe(`dup  (project)  Project copy.\n${problem}`);
	});
});

describe("skill names that import as one module", () => {
	it("csv-sum and csv_sum: neither is loaded, both are named by `skill list`, /skill list and skills.load", async () => {
		const dash = writeSkill(homeSkills(), "csv-sum", skillMd("csv-sum", "Dash."), "WHO = 'dash'\n");
		const under = writeSkill(projectSkills(), "csv_sum", skillMd("csv_sum", "Underscore."), "WHO = 'under'\n");
		writeSkill(homeSkills(), "other", skillMd("other", "Unrelated."), "");
		const problem = `Left out: the skills "csv-sum" (${dash}) and "csv_sum" (${under}) both import as prime_skills.csv_sum (names that differ only in "-" and "_" are one module), so neither is loaded; rename one of them (the "name" in its SKILL.md) or remove it.`;
		const io = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill", "list"], io)).toBe(ExitCode.ok);
		expect(io.out()).toBe("other  (user)  Unrelated.\n");
		expect(io.err()).toBe(`${problem}\n`);
		const found = discoverSkills(skillRoots({ agentHome: sessions.world.home, cwd: sessions.world.project }));
		expect(found.collided.map((skill) => skill.dir)).toEqual([dash, under]);
		expect(skillPromptSection(found.skills).endsWith("\n\n- other: Unrelated.")).toBe(true);
		const started = await sessions.start({ trustProject: true });
		expect((await started.agentSession.prompt("/skill list")).command?.message).toBe(
			`other  (user)  Unrelated.\n${problem}`,
		);
		for (const name of ["csv-sum", "csv_sum"]) {
			const loaded = await started.kernel.run(`skills.load("${name}", quiet=True)`);
			expect(loaded.cell.error?.evalue).toBe(`skills.load('${name}'): ${problem.slice("Left out: ".length)}`);
		}
	});

	it("three names of one module are all left out, in name order", () => {
		for (const name of ["a-b-c", "a_b-c", "a_b_c"]) writeSkill(homeSkills(), name, skillMd(name, "One."), "");
		const found = discoverSkills(skillRoots({ agentHome: sessions.world.home, cwd: sessions.world.project }));
		expect(found.skills).toEqual([]);
		expect(found.problems.map((problem) => problem.message)).toEqual([
			`the skills "a-b-c" (${join(homeSkills(), "a-b-c")}), "a_b-c" (${join(homeSkills(), "a_b-c")}) and "a_b_c" (${join(homeSkills(), "a_b_c")}) all import as prime_skills.a_b_c (names that differ only in "-" and "_" are one module), so none of them is loaded; rename all but one (the "name" in its SKILL.md) or remove them.`,
		]);
	});

	it("the skill creator refuses a name whose module a skill of another name has, before any model call", async () => {
		const drafts = creatorModel(VALID_DRAFT, () => fauxAssistantMessage("unused"));
		const dash = writeSkill(homeSkills(), "word-count", skillMd("word-count", "Counts."), "");
		const started = await sessions.start();
		const refused = await started.kernel.run('await skills.create("word_count")');
		expect(refused.cell.error?.evalue).toBe(
			`skills.create('word_count'): the skill name "word_count" would import as prime_skills.word_count, as the skill "word-count" (user, ${dash}) does (names that differ only in "-" and "_" are one module); pick a name that differs in more than that.`,
		);
		expect(drafts).toHaveLength(0);
		expect(readdirSync(homeSkills())).toEqual(["word-count"]);
	});

	it("`skill install` refuses a name whose module is taken, here or in the source, and installs nothing", async () => {
		const dash = writeSkill(projectSkills(), "csv-sum", skillMd("csv-sum", "Dash."), "");
		const source = writeSkill(join(sessions.world.project, "incoming"), "csv_sum", skillMd("csv_sum", "Under."), "");
		const io = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill", "install", source], io)).toBe(ExitCode.usage);
		expect(io.err()).toBe(
			`Error: Nothing was installed: the skill "csv_sum" (${source}) would import as prime_skills.csv_sum, as the skill "csv-sum" (project, ${dash}) does; names that differ only in "-" and "_" are one module.\nRename it (the "name" in its SKILL.md), or remove it with \`prime-agent skill remove csv-sum --local\`; then install again.\n`,
		);
		expect(existsSync(homeSkills())).toBe(false);
		const pair = join(sessions.world.project, "pair");
		writeSkill(pair, "x-y", skillMd("x-y", "Dash."), "");
		writeSkill(pair, "x_y", skillMd("x_y", "Under."), "");
		const both = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill", "install", pair], both)).toBe(ExitCode.usage);
		expect(both.err()).toBe(
			`Error: Nothing was installed: the skills "x-y" (${join(pair, "x-y")}) and "x_y" (${join(pair, "x_y")}) both import as prime_skills.x_y (names that differ only in "-" and "_" are one module), so neither is loaded; rename one of them (the "name" in its SKILL.md) or remove it.\nFix the SKILL.md, then install again.\n`,
		);
		expect(existsSync(homeSkills())).toBe(false);
	});
});

describe("skills of installed extension packages", () => {
	it("are found in a package's primeAgent.skills folders, after the project's and the home's", () => {
		const pkg = join(sessions.world.project, "vendor", "tools-pkg");
		writeSkill(join(pkg, "bundled"), "pkg-skill", skillMd("pkg-skill", "Shipped by a package."), "");
		writeFileSync(
			join(pkg, "package.json"),
			JSON.stringify({ name: "tools-pkg", primeAgent: { skills: ["bundled"] } }),
		);
		sessions.world.writeHome("settings.json", { packages: [pkg] });
		const found = discoverSkills(skillRoots({ agentHome: sessions.world.home, cwd: sessions.world.project }));
		expect(found.skills.map((skill) => [skill.name, skill.source])).toEqual([["pkg-skill", `package ${pkg}`]]);
	});
});

describe("the skill index in the system prompt", () => {
	it(`lists at most ${SKILL_INDEX_LIMIT} skills sorted by name, then +N more`, () => {
		for (let i = 0; i < 23; i++) {
			writeSkill(
				homeSkills(),
				`skill-${String(i).padStart(2, "0")}`,
				skillMd(`skill-${String(i).padStart(2, "0")}`, "x ".repeat(200)),
				"",
			);
		}
		const section = skillPromptSection(
			discoverSkills(skillRoots({ agentHome: sessions.world.home, cwd: sessions.world.project })).skills,
		);
		const lines = section.split("\n").filter((line) => line.startsWith("- ") || line.startsWith("+"));
		expect(lines).toHaveLength(21);
		expect(lines[0]).toBe(`- skill-00: ${"x ".repeat(89)}x…`);
		expect(lines[19]?.startsWith("- skill-19: ")).toBe(true);
		expect(lines[20]).toBe("+3 more (skills.list() lists them)");
	});
});

describe("prime-agent skill", () => {
	it("installs a folder, shows it, lists it and removes it; --local uses the project", async () => {
		const source = writeSkill(join(sessions.world.project, "incoming"), "csv-stats", CSV_SKILL_MD, "X = 1\n");
		const run = async (...argv: string[]) => {
			const io = memoryIo(sessions.world.project, sessions.world.env);
			const code = await runCli(["skill", ...argv], io);
			return { code, out: io.out(), err: io.err() };
		};
		const installed = await run("install", source);
		expect(installed).toEqual({
			code: ExitCode.ok,
			out: `Installed csv-stats into ${join(homeSkills(), "csv-stats")}\nNew sessions everywhere list it.\n`,
			err: "",
		});
		expect(readFileSync(join(homeSkills(), "csv-stats", "__init__.py"), "utf8")).toBe("X = 1\n");
		expect((await run("show", "csv-stats")).out).toBe(`${join(homeSkills(), "csv-stats")} (user)\n\n${CSV_SKILL_MD}`);
		expect((await run("list")).out).toBe(
			"csv-stats  (user)  Column statistics of CSV files (mean, min, max) without pandas.\n",
		);
		const local = await run("install", source, "--local");
		expect(local.out).toBe(
			`Installed csv-stats into ${join(projectSkills(), "csv-stats")}\nNew sessions in this project list it.\n`,
		);
		// Installed by the user: approved as installed, so it loads without a review.
		const trust = projectTrust({ cwd: sessions.world.project, agentHome: sessions.world.home });
		expect(trust.skillRefusal(join(projectSkills(), "csv-stats"), "csv-stats")).toBeUndefined();
		expect((await run("remove", "csv-stats", "--local")).out).toBe(`Removed ${join(projectSkills(), "csv-stats")}\n`);
		expect((await run("remove", "csv-stats")).out).toBe(`Removed ${join(homeSkills(), "csv-stats")}\n`);
		expect(readdirSync(homeSkills())).toEqual([]);
		const missing = await run("remove", "csv-stats");
		expect(missing.code).toBe(ExitCode.usage);
		expect(missing.err).toBe(
			`Error: No skill "csv-stats" in ${homeSkills()}.\nList skills with \`prime-agent skill list\`.\n`,
		);
	});

	it("installs the skills an npm package ships (here a packed tarball, so no registry is needed)", async () => {
		const pkg = join(sessions.world.project, "pkg");
		writeSkill(join(pkg, "skills"), "csv-stats", CSV_SKILL_MD, "X = 2\n");
		writeSkill(join(pkg, "skills"), "zeta-notes", skillMd("zeta-notes", "Notes about zeta."), "");
		writeFileSync(
			join(pkg, "package.json"),
			JSON.stringify({ name: "skills-fixture", version: "1.0.0", primeAgent: { skills: ["skills"] } }),
		);
		execFileSync("npm", ["pack", "--pack-destination", sessions.world.project], { cwd: pkg, stdio: "ignore" });
		const io = memoryIo(sessions.world.project, sessions.world.env);
		const tarball = join(sessions.world.project, "skills-fixture-1.0.0.tgz");
		expect(await runCli(["skill", "install", `npm:${tarball}`], io)).toBe(ExitCode.ok);
		expect(io.out()).toBe(
			`Installed csv-stats into ${join(homeSkills(), "csv-stats")}\nInstalled zeta-notes into ${join(homeSkills(), "zeta-notes")}\nNew sessions everywhere list them.\n`,
		);
		expect(readFileSync(join(homeSkills(), "csv-stats", "__init__.py"), "utf8")).toBe("X = 2\n");
		expect(readdirSync(homeSkills())).toEqual(["csv-stats", "zeta-notes"]);
	});

	it("bad usage says what is wrong and how to call it", async () => {
		const io = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill"], io)).toBe(ExitCode.usage);
		expect(io.err().split("\n")[0]).toBe("Error: `prime-agent skill` needs list, show, install or remove.");
		const io2 = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill", "show"], io2)).toBe(ExitCode.usage);
		expect(io2.err().split("\n")[0]).toBe("Error: `prime-agent skill show` needs a skill name.");
		const io3 = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill", "remove", "x", "--force"], io3)).toBe(ExitCode.usage);
		expect(io3.err().split("\n")[0]).toBe(
			"Error: --force goes with `prime-agent skill install` only (it replaces an installed skill of the same name).",
		);
	});

	it("refuses a folder whose SKILL.md is broken and installs nothing", async () => {
		const source = writeSkill(join(sessions.world.project, "incoming"), "bad", "no front matter\n", "");
		const io = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill", "install", source], io)).toBe(ExitCode.usage);
		expect(io.err()).toBe(
			`Error: Nothing was installed: ${join(source, "SKILL.md")} has no front matter: start it with a "---" line, then "name: ..." and "description: ...", then "---".\nFix the SKILL.md, then install again.\n`,
		);
		expect(existsSync(homeSkills())).toBe(false);
		const badYaml = writeSkill(join(sessions.world.project, "incoming"), "yaml", "---\nname: [bad\n---\n", "");
		const yamlIo = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill", "install", badYaml], yamlIo)).toBe(ExitCode.usage);
		expect(yamlIo.err()).toBe(
			`Error: Nothing was installed: ${join(badYaml, "SKILL.md")}: the front matter is not valid YAML (Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 11).\nFix the SKILL.md, then install again.\n`,
		);
		expect(existsSync(homeSkills())).toBe(false);
	});

	it("installs every skill of a plain folder of skill folders; two skills of one name install nothing", async () => {
		const folder = join(sessions.world.project, "collection");
		writeSkill(folder, "csv-stats", CSV_SKILL_MD, "X = 3\n");
		writeSkill(folder, "zeta", skillMd("zeta-notes", "Notes about zeta."), "");
		const io = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill", "install", folder], io)).toBe(ExitCode.ok);
		expect(io.out()).toBe(
			`Installed csv-stats into ${join(homeSkills(), "csv-stats")}\nInstalled zeta-notes into ${join(homeSkills(), "zeta-notes")}\nNew sessions everywhere list them.\n`,
		);
		expect(readdirSync(homeSkills())).toEqual(["csv-stats", "zeta-notes"]);
		const twice = join(sessions.world.project, "twice");
		writeSkill(twice, "a", skillMd("same-name", "First copy."), "");
		writeSkill(twice, "b", skillMd("same-name", "Second copy."), "");
		const clash = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill", "install", twice], clash)).toBe(ExitCode.usage);
		expect(clash.err()).toBe(
			`Error: Nothing was installed: ${join(twice, "a")} and ${join(twice, "b")} both hold the skill "same-name".\nRename one of them (the "name" in its SKILL.md), then install again.\n`,
		);
		expect(readdirSync(homeSkills())).toEqual(["csv-stats", "zeta-notes"]);
	});

	it("refuses to replace an installed skill without --force, and replaces it with --force", async () => {
		const first = writeSkill(join(sessions.world.project, "v1"), "csv-stats", CSV_SKILL_MD, "X = 1\n");
		const second = writeSkill(join(sessions.world.project, "v2"), "csv-stats", CSV_SKILL_MD, "X = 2\n");
		expect(await runCli(["skill", "install", first], memoryIo(sessions.world.project, sessions.world.env))).toBe(
			ExitCode.ok,
		);
		const again = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill", "install", second], again)).toBe(ExitCode.usage);
		expect(again.err()).toBe(
			`Error: Nothing was installed: ${join(homeSkills(), "csv-stats")} is already there (the skill "csv-stats").\nAdd --force to replace it, or remove it first with \`prime-agent skill remove csv-stats\`.\n`,
		);
		expect(readFileSync(join(homeSkills(), "csv-stats", "__init__.py"), "utf8")).toBe("X = 1\n");
		const forced = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill", "install", second, "--force"], forced)).toBe(ExitCode.ok);
		expect(forced.out()).toBe(
			`Installed csv-stats into ${join(homeSkills(), "csv-stats")}\nNew sessions everywhere list it.\n`,
		);
		expect(readFileSync(join(homeSkills(), "csv-stats", "__init__.py"), "utf8")).toBe("X = 2\n");
		expect(readdirSync(homeSkills())).toEqual(["csv-stats"]);
	});

	it("checks that each package imports in a separate Python process, and installs nothing when one does not", async () => {
		const folder = join(sessions.world.project, "collection");
		writeSkill(folder, "good", skillMd("good", "Imports."), "X = 1\n");
		const bad = writeSkill(folder, "bad-import", skillMd("bad-import", "Fails."), "import no_such_module_anywhere\n");
		writeSkill(folder, "notes-only", skillMd("notes-only", "Instructions only."), "");
		rmSync(join(folder, "notes-only", "__init__.py"));
		const io = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill", "install", folder], io)).toBe(ExitCode.usage);
		const [message, hint, end] = io.err().split("\n");
		expect(
			message?.startsWith(
				`Error: Nothing was installed: the skill "bad-import" (${bad}) does not import cleanly: importing it failed: `,
			),
		).toBe(true);
		expect(message?.endsWith(" | ModuleNotFoundError: No module named 'no_such_module_anywhere'")).toBe(true);
		expect(hint).toBe("Fix its package so that it imports (skills.load would fail the same way), then install again.");
		expect(end).toBe("");
		expect(existsSync(homeSkills())).toBe(false);
		rmSync(bad, { recursive: true });
		const fixed = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill", "install", folder], fixed)).toBe(ExitCode.ok);
		expect(readdirSync(homeSkills())).toEqual(["good", "notes-only"]);
	});

	it("says when an installed skill is hidden by the project's skill of the same name", async () => {
		writeSkill(projectSkills(), "csv-stats", skillMd("csv-stats", "The project's own."), "");
		const source = writeSkill(join(sessions.world.project, "incoming"), "csv-stats", CSV_SKILL_MD, "X = 1\n");
		const io = memoryIo(sessions.world.project, sessions.world.env);
		expect(await runCli(["skill", "install", source], io)).toBe(ExitCode.ok);
		expect(io.out()).toBe(
			`Installed csv-stats into ${join(homeSkills(), "csv-stats")}\nNew sessions everywhere list it.\n`,
		);
		expect(io.err()).toBe(
			`In this project the skill "csv-stats" of ${join(projectSkills(), "csv-stats")} (project) hides it; remove that one with \`prime-agent skill remove csv-stats --local\` to use this one here.\n`,
		);
	});
});

/** A faux model that answers the creator's drafting call with `draft` and anything else with `other`. */
function creatorModel(draft: string, other: (context: Context) => ReturnType<typeof fauxAssistantMessage>) {
	const drafts: Context[] = [];
	sessions.faux.setResponses(
		Array.from({ length: 10 }, () => (context: Context) => {
			if (context.systemPrompt === CREATOR_SYSTEM_PROMPT) {
				drafts.push(context);
				return fauxAssistantMessage(draft);
			}
			return other(context);
		}),
	);
	return drafts;
}

const VALID_DRAFT = `<file path="SKILL.md">
---
name: word-count
description: Count words in text files, as done by hand earlier in the session.
---

Call \`wc = skills.load("word-count")\`, then \`wc.count_words(path)\`.
</file>
<file path="__init__.py">
from .counting import count_words
</file>
<file path="counting.py">
def count_words(path):
    """Words in the file at path."""
    with open(path) as handle:
        return len(handle.read().split())
</file>`;

describe("the skill creator", () => {
	it("/skill create drafts a skill from the trajectory, validates it, writes it and lists it", async () => {
		const drafts: Context[] = [];
		sessions.world.writeProject("notes.txt", "one two three\n");
		const started = await sessions.start();
		sessions.faux.setResponses([
			() => cell("print(len(open('notes.txt').read().split()))"),
			() => fauxAssistantMessage("3 words"),
			...Array.from({ length: 5 }, () => (context: Context) => {
				drafts.push(context);
				return fauxAssistantMessage(VALID_DRAFT);
			}),
		]);
		await started.agentSession.prompt("count the words in notes.txt");
		const outcome = await started.agentSession.prompt("/skill create word-count count words in a file");
		const dir = join(homeSkills(), "word-count");
		expect(outcome.command?.message).toBe(
			`Created the skill "word-count" in ${dir} (SKILL.md, __init__.py, counting.py): Count words in text files, as done by hand earlier in the session.\nLoad it with skills.load("word-count"); it is listed in the system prompt from the next prompt on.`,
		);
		const request = drafts[0]?.messages[0];
		const text =
			request?.role === "user" && typeof request.content !== "string"
				? (request.content[0] as { text: string }).text
				: "";
		expect(drafts[0]?.systemPrompt).toBe(CREATOR_SYSTEM_PROMPT);
		expect(text).toContain('Create the skill "word-count". It should do: count words in a file');
		expect(text).toContain("print(len(open('notes.txt').read().split()))");
		expect(readdirSync(dir).sort()).toEqual(["SKILL.md", "__init__.py", "counting.py"]);
		const used = await started.kernel.run(
			'wc = skills.load("word-count", quiet=True)\nprint(wc.count_words("notes.txt"))',
		);
		expect(used.cell.stdout).toBe("3\n");
		const listed = await started.agentSession.prompt("/skill list");
		expect(listed.command?.message).toBe(
			"word-count  (user)  Count words in text files, as done by hand earlier in the session.",
		);
	});

	it("writes nothing when the drafted package fails to import, or SKILL.md has no description", async () => {
		const started = await sessions.start();
		const failing = VALID_DRAFT.replace("from .counting import count_words", "import no_such_module_anywhere");
		sessions.faux.setResponses([() => fauxAssistantMessage(failing)]);
		const first = await started.agentSession.prompt("/skill create word-count");
		expect(first.status).toBe("error");
		expect(first.command?.message).toContain(
			'The draft of the skill "word-count" did not validate, so nothing was written:\n- the package does not import cleanly: importing it failed: ',
		);
		expect(first.command?.message).toContain("ModuleNotFoundError: No module named 'no_such_module_anywhere'");
		const undescribed = VALID_DRAFT.replace(/description: .*\n/, "");
		sessions.faux.setResponses([() => fauxAssistantMessage(undescribed)]);
		const second = await started.agentSession.prompt("/skill create word-count");
		expect(second.command?.message).toBe(
			'The command /skill failed: The draft of the skill "word-count" did not validate, so nothing was written:\n- SKILL.md: "description" in the front matter is missing or empty; say what the skill does.\nTry again with a more precise request.',
		);
		expect(existsSync(homeSkills())).toBe(false);
	});

	it("/skill create --project writes into the project's .prime/skills", async () => {
		const drafts = creatorModel(VALID_DRAFT, () => fauxAssistantMessage("unused"));
		const started = await sessions.start();
		const outcome = await started.agentSession.prompt("/skill create word-count --project count words");
		expect(outcome.command?.message?.split("\n")[0]).toBe(
			`Created the skill "word-count" in ${join(projectSkills(), "word-count")} (SKILL.md, __init__.py, counting.py): Count words in text files, as done by hand earlier in the session.`,
		);
		const request = drafts[0]?.messages[0];
		expect(JSON.stringify(request)).toContain("It should do: count words");
		expect(existsSync(homeSkills())).toBe(false);
		// The session's own new skill loads without a review (it is the user's, not the repository's).
		const loaded = await started.kernel.run('print(skills.load("word-count", quiet=True).__name__)');
		expect(loaded.cell.stdout).toBe("prime_skills.word_count\n");
	});

	it("await skills.create(...) from a cell creates the skill; a taken name is refused before any model call", async () => {
		const drafts = creatorModel(VALID_DRAFT, () => fauxAssistantMessage("unused"));
		const started = await sessions.start();
		const created = await started.kernel.run(
			'print(await skills.create("word-count", "count words", scope="project"))',
		);
		expect(created.cell.stdout).toContain(`Created the skill "word-count" in ${join(projectSkills(), "word-count")}`);
		const taken = await started.kernel.run('await skills.create("word-count")');
		expect(taken.cell.error?.ename).toBe("SkillError");
		expect(taken.cell.error?.evalue).toBe(
			`skills.create('word-count'): a skill named "word-count" already exists (project, ${join(projectSkills(), "word-count")}); pick another name or remove it with \`prime-agent skill remove word-count\`.`,
		);
		expect(drafts).toHaveLength(1);
	});

	it("a folder already at the new skill's place (a broken skill) is refused before any model call", async () => {
		const drafts = creatorModel(VALID_DRAFT, () => fauxAssistantMessage("unused"));
		writeSkill(homeSkills(), "word-count", "no front matter\n", "");
		const started = await sessions.start();
		const outcome = await started.agentSession.prompt("/skill create word-count");
		expect(outcome.command?.message).toBe(
			`The command /skill failed: the folder ${join(homeSkills(), "word-count")} is already there and is not a usable skill "word-count" (\`prime-agent skill list\` says what is wrong with it); pick another name, or fix or delete that folder.`,
		);
		expect(drafts).toHaveLength(0);
		expect(readFileSync(join(homeSkills(), "word-count", "SKILL.md"), "utf8")).toBe("no front matter\n");
	});
});
