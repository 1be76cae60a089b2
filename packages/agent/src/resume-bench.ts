#!/usr/bin/env node
/**
 * `npm run bench:resume`: how long a long session takes to come back. Builds a 1,047-entry session
 * through the session API (turns of cells with real-sized code and output, `<ipython_state>` notes,
 * two compactions), and the same entries as a linear file (no `id`/`parentId`, an older format).
 * For each it times, in this process, reading the file (`Session.open`: parse, check, place), the
 * model's context from the branch, and the messages of the first request; then, end to end,
 * `startSession` with `--resume` until the first request reaches a scripted model (`faux`), which
 * includes the extensions and the kernel start. Prints figures; asserts nothing.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage, registerFauxProvider } from "@mariozechner/pi-ai";
import { resolveKernelPython } from "prime-agent-kernel";
import { ModelRegistry } from "./providers/index.js";
import { Session, toLlmMessages } from "./session/index.js";
import { startSession } from "./startup/index.js";

const ENTRIES = 1047;
const RUNS = 15;

/** Deterministic text of about `length` characters: lines of code or output, not one repeated byte. */
function text(seed: number, length: number, kind: "code" | "output"): string {
	const lines: string[] = [];
	let size = 0;
	for (let line = 0; size < length; line++) {
		const n = (seed * 7919 + line * 104729) % 100_000;
		const next =
			kind === "code"
				? `result_${n % 97} = compute(data[${n % 13}:], window=${n % 50}, label="step ${line}")`
				: `row ${line} value=${(n / 997).toFixed(4)} mean=${(n / 1009).toFixed(3)} ok=${n % 3 === 0}`;
		lines.push(next);
		size += next.length + 1;
	}
	return lines.join("\n");
}

/** A session of exactly `ENTRIES` entries, shaped as real use: prompts, cells, answers, notes, compactions. */
function buildSession(dir: string, cwd: string): Session {
	const session = Session.create({ dir, cwd });
	const usage = { input: 4000, output: 300, cacheRead: 0, cacheWrite: 0, totalTokens: 4300 };
	const cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
	const assistant = (content: unknown[], stopReason: string) =>
		({
			role: "assistant",
			content,
			api: "faux",
			provider: "faux",
			model: "faux-1",
			usage: { ...usage, cost },
			stopReason,
			timestamp: Date.now(),
		}) as never;
	session.appendModelChange("faux", "faux-1");
	for (let turn = 0; session.entries.length < ENTRIES; turn++) {
		const left = () => ENTRIES - session.entries.length;
		session.appendMessage({ role: "user", content: `Task ${turn}: ${text(turn, 300, "code")}`, timestamp: Date.now() });
		for (let cell = 0; cell < 4 && left() > 2; cell++) {
			const id = `call-${turn}-${cell}`;
			const code = text(turn * 10 + cell, 200 + ((turn * 31 + cell * 17) % 600), "code");
			session.appendMessage(assistant([{ type: "toolCall", id, name: "ipython", arguments: { code } }], "toolUse"));
			const output = text(turn * 10 + cell, 300 + ((turn * 53 + cell * 29) % 2700), "output");
			session.appendMessage({
				role: "toolResult",
				toolCallId: id,
				toolName: "ipython",
				content: [{ type: "text", text: output }],
				isError: false,
				timestamp: Date.now(),
			});
		}
		if (left() > 0) session.appendMessage(assistant([{ type: "text", text: text(turn, 400, "output") }], "stop"));
		if (turn % 5 === 4 && left() > 0) {
			session.append({
				type: "custom_message",
				customType: "ipython_state",
				content: `<ipython_state>\nnames: ${text(turn, 200, "code")}\n</ipython_state>`,
				display: false,
			});
		}
		// Two compactions, each keeping the last ~20 entries verbatim.
		const count = session.entries.length;
		if (
			(count > ENTRIES / 3 && count < ENTRIES / 3 + 12) ||
			(count > (2 * ENTRIES) / 3 && count < (2 * ENTRIES) / 3 + 12)
		) {
			if (left() > 0) {
				const kept = session.branch().at(-20)?.id as string;
				session.append({
					type: "compaction",
					summary: text(turn, 3000, "output"),
					firstKeptEntryId: kept,
					tokensBefore: 24_000,
				});
			}
		}
	}
	return session;
}

/** The same file without its links: what an older, linear writer left. */
function writeLinear(session: Session, dir: string, id: string): string {
	const path = join(dir, `${id}.jsonl`);
	const lines = [JSON.stringify({ ...session.header, id })];
	// Its compactions name their first kept entry by index among the records (header 0), as pi's first format.
	const index = new Map(session.entries.map((entry, at) => [entry.id, at + 1]));
	for (const entry of session.entries) {
		const { id: _id, parentId: _parent, ...rest } = entry;
		if (rest.type === "compaction") {
			const { firstKeptEntryId, ...compaction } = rest;
			lines.push(JSON.stringify({ ...compaction, firstKeptEntryIndex: index.get(firstKeptEntryId) }));
		} else lines.push(JSON.stringify(rest));
	}
	writeFileSync(path, `${lines.join("\n")}\n`, { mode: 0o600 });
	return path;
}

function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.floor(sorted.length / 2)] as number;
}

const ms = (value: number) => `${value.toFixed(1)} ms`;

/** Median and fastest of `values`: on a shared machine the fastest is closest to the work itself. */
const spread = (values: number[]) => `${ms(median(values))} (fastest ${ms(Math.min(...values))})`;

function timeLoad(path: string): { open: string; context: string; request: string; messages: number } {
	const runs = { open: [] as number[], context: [] as number[], request: [] as number[] };
	let messages = 0;
	// One read first, untimed: the code is compiled by then, as it is for the second file.
	Session.open(path);
	for (let run = 0; run < RUNS; run++) {
		const t0 = performance.now();
		const session = Session.open(path);
		const t1 = performance.now();
		const context = session.context();
		const t2 = performance.now();
		messages = toLlmMessages(context.messages).length;
		const t3 = performance.now();
		runs.open.push(t1 - t0);
		runs.context.push(t2 - t1);
		runs.request.push(t3 - t2);
	}
	return { open: spread(runs.open), context: spread(runs.context), request: spread(runs.request), messages };
}

/** `startSession` with a resume, until the first request reaches the faux model (ms). */
async function timeResume(ref: string, env: NodeJS.ProcessEnv, cwd: string, registry: ModelRegistry): Promise<number> {
	const started = performance.now();
	let reached = 0;
	faux.setResponses([
		() => {
			reached = performance.now();
			return fauxAssistantMessage("ok");
		},
	]);
	const resumed = await startSession({ cwd, env, resume: ref, model: "faux/faux-1", registry });
	try {
		await resumed.agentSession.prompt("continue");
	} finally {
		await resumed.dispose();
	}
	return reached - started;
}

const faux = registerFauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
const root = mkdtempSync(join(tmpdir(), "prime-resume-bench-"));
try {
	const home = join(root, "home");
	const project = join(root, "project");
	mkdirSync(project, { recursive: true });
	const env = {
		...process.env,
		PRIME_AGENT_KERNEL_PYTHON: resolveKernelPython(process.env),
		PRIME_AGENT_DIR: home,
		PRIME_AGENT_AUTO_REFINE: "0",
	};
	mkdirSync(home, { recursive: true, mode: 0o700 });
	writeFileSync(join(home, "auth.json"), JSON.stringify({ faux: { type: "api_key", key: "bench" } }), { mode: 0o600 });
	const sessions = join(home, "sessions");
	const tree = buildSession(sessions, project);
	const registry = new ModelRegistry();
	for (const model of faux.models) registry.add(model);

	const load = loadavg()
		.map((value) => value.toFixed(1))
		.join(" ");
	console.log(
		`Resume of a ${tree.entries.length}-entry session (${RUNS} runs each; Node ${process.version}; ${cpus().length} cores, load average ${load})`,
	);
	for (const [label, path] of [
		["tree file", tree.path],
		["linear file (read in file order)", writeLinear(tree, sessions, "0000beef-0000-4000-8000-000000001047")],
	] as const) {
		const size = statSync(path).size;
		const times = timeLoad(path);
		console.log(
			`  ${label}: ${(size / 1024 / 1024).toFixed(1)} MB; Session.open ${times.open}, context ${times.context}, first request's messages ${times.request} (${times.messages} messages)`,
		);
	}
	// End to end, twice (the second with the file system and modules warm); the linear file is
	// rewritten as a tree by the first, so only the tree file is timed here.
	const first = await timeResume(tree.id, env, project, registry);
	const second = await timeResume(tree.id, env, project, registry);
	console.log(`  startSession --resume to the first request at the model: ${ms(first)}, then ${ms(second)}`);
} finally {
	faux.unregister();
	rmSync(root, { recursive: true, force: true });
}
