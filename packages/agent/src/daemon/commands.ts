/**
 * The command line's daemon commands: runs through a worker, `agents`, `attach`, `status`,
 * `shutdown`, `schedule`.
 */
import { existsSync } from "node:fs";
import { ExitCode, type ExitCodeValue, UserError } from "../errors.js";
import { agentDir, agentPaths, DiskWriteError } from "../home/index.js";
import { chatMode } from "../modes/chat.js";
import type { InteractiveContext, InteractiveUi } from "../modes/interactive.js";
import { type EndingSignal, onEndingSignal } from "../modes/interrupts.js";
import { attachJsonMode, jsonMode } from "../modes/json.js";
import { printMode } from "../modes/print.js";
import { describeJobs } from "../schedules/index.js";
import {
	connectSupervisor,
	connectSupervisorForAgents,
	connectWorker,
	type DaemonContext,
	DaemonVersionError,
	daemonContext,
	plainEnv,
	stopOtherVersion,
	unwrap,
} from "./client.js";
import type { AgentInfo, RequestOf, WorkerSessionOptions, WorkerWelcome } from "./protocol.js";
import { replayLines } from "./replay.js";
import type { SupervisorClient, SupervisorRequests, WorkerClient, WorkerTarget } from "./requests.js";
import { type StartedWorker, startWorker } from "./start-worker.js";
import { liveWorkers, workerSocket } from "./state.js";
import { WorkerLink } from "./worker-link.js";

export interface DaemonIo {
	cwd: string;
	env: NodeJS.ProcessEnv;
	stdin: NodeJS.ReadableStream;
	stdout: NodeJS.WritableStream;
	stderr: NodeJS.WritableStream;
	/** Keys typed while the terminal UI starts, for the UI to take (see `InteractiveContext`). */
	typeAhead?: InteractiveContext["typeAhead"];
}

/**
 * Run the command line's session in a worker: `-p` and `--mode json` own theirs (it stops when
 * the run ends, or as soon as the client goes); the line chat's stays after `/exit`.
 */
export async function runInWorker(
	options: WorkerSessionOptions,
	prompt: string | undefined,
	mode: "text" | "json",
	io: DaemonIo,
	/** The line chat's worker, asked for already (see `startResidentWorker`). */
	asked?: Promise<StartedWorker>,
): Promise<ExitCodeValue> {
	const context = daemonContext(io.env);
	const oneShot = prompt !== undefined;
	// SIGTERM or SIGHUP while the worker starts: the run is not begun, and the worker is let go.
	let early: EndingSignal | undefined;
	const disposeEarly = oneShot
		? onEndingSignal((signal) => {
				early = signal;
			})
		: () => {};
	let client: WorkerClient;
	let welcome: WorkerWelcome;
	try {
		const started = await (asked ?? startWorker(context, options, oneShot ? "oneshot" : "resident"));
		if (started.attached) io.stderr.write(`${openElsewhere(started.key)}\n`);
		// The line chat answers questions (a cell that ignored the interrupt); a one-shot run does not.
		({ client, welcome } = await connectWorker(context, started.socket, oneShot, !oneShot));
	} finally {
		disposeEarly();
	}
	if (early !== undefined) {
		await client.request({ type: "shutdown" }).catch(() => {});
		client.close();
		io.stderr.write(`Stopped (${early}) before the run began: nothing was sent to the model.\n`);
		return ExitCode.interrupted;
	}
	if (prompt === undefined) {
		const reconnect = (restarting: boolean) => awaitRestart(context, welcome.key, restarting);
		return chatMode(new WorkerLink(client, welcome, { reconnect }), io.stdin, io.stdout, io.stderr);
	}
	// Its own run only: a session open in another view may run that view's prompts meanwhile.
	const link = new WorkerLink(client, welcome, { ownRunsOnly: true });
	try {
		if (mode === "json") return await jsonMode(link, prompt, io.stdout);
		const stdin = io.stdin as NodeJS.ReadStream;
		return await printMode(link, prompt, { out: io.stdout, err: io.stderr }, stdin.isTTY ? stdin : undefined);
	} finally {
		// The worker stops once the run has ended, the session saved.
		await link.shutdown();
	}
}

/** What the user is told when the session asked for runs in a worker already. */
function openElsewhere(key: string): string {
	return `The session is open in agent ${key} already; this runs there (a session has one worker).`;
}

/** Connect to a worker as a view that answers questions (the terminal UI) and follows it through restarts. */
async function connectLink(context: DaemonContext, socket: string, notices?: string[]): Promise<WorkerLink> {
	const { client, welcome } = await connectWorker(context, socket, false, true);
	return new WorkerLink(client, welcome, {
		notices: notices ? [...welcome.notices, ...notices] : welcome.notices,
		reconnect: (restarting) => awaitRestart(context, welcome.key, restarting),
	});
}

/** How long a view waits for the supervisor to restart a crashed worker (its delays are 250 ms, 1 s, 5 s). */
const RESTART_WAIT_MS = 30_000;

/**
 * Wait until the supervisor has restarted the worker of `key`, then connect; or say why it will
 * not come back. `restarting`: it is being started again on purpose (until then it reads as saved).
 * `answers`: the view answers questions (the terminal UI; see `connectWorker`).
 */
async function awaitRestart(
	context: DaemonContext,
	key: string,
	restarting: boolean,
	answers = true,
): Promise<{ client: WorkerClient; welcome: WorkerWelcome } | { reason: string }> {
	const deadline = Date.now() + RESTART_WAIT_MS;
	while (Date.now() < deadline) {
		await new Promise((resolve) => setTimeout(resolve, 250));
		// A removed agent home (a throwaway one) is not brought back by starting a supervisor in it.
		if (!existsSync(context.paths.dir)) return { reason: "its agent home was removed" };
		let supervisor: SupervisorClient | undefined;
		try {
			supervisor = await connectSupervisor(context);
		} catch (error) {
			// No supervisor can start (a full disk): waiting would not bring the agent back.
			if (error instanceof DiskWriteError) return { reason: `${error.message} ${error.hint}` };
		}
		if (!supervisor) continue;
		let agent: AgentInfo | undefined;
		try {
			const reply = await supervisor.request({ type: "list" });
			agent = reply.ok ? reply.data?.find((info) => info.key === key) : undefined;
		} finally {
			supervisor.close();
		}
		if (!agent) return { reason: "its record is gone" };
		if (agent.state === "failed") return { reason: agent.failedReason ?? "it failed" };
		if (agent.state === "saved" && !restarting) return { reason: "it was stopped" };
		if (agent.state === "saved") continue;
		if (agent.state === "starting") continue;
		try {
			return await connectWorker(context, workerSocket(context.paths, key), false, answers);
		} catch {
			// Not listening yet.
		}
	}
	return { reason: `it did not come back within ${RESTART_WAIT_MS / 1000} s` };
}

/**
 * The terminal UI as a view of a resident worker: leaving detaches (the session goes on);
 * `/model`, `/resume`, `/fork` and `/new` stop this worker and start one for the new session.
 */
export async function runUiInWorker(
	options: WorkerSessionOptions,
	ui: InteractiveUi,
	io: DaemonIo,
	/** Its worker, asked for already (see `startResidentWorker`). */
	asked?: Promise<StartedWorker>,
): Promise<ExitCodeValue> {
	const context = daemonContext(io.env);
	const started = await (asked ?? startWorker(context, options, "resident"));
	const notices = started.attached ? [openElsewhere(started.key)] : undefined;
	return runUi(context, await connectLink(context, started.socket, notices), options, ui, io);
}

async function runUi(
	context: DaemonContext,
	first: WorkerLink,
	options: WorkerSessionOptions,
	ui: InteractiveUi,
	io: DaemonIo,
): Promise<ExitCodeValue> {
	let current: WorkerLink | undefined = first;
	// The agent last driven (a failed switch has none current; going back resumes this one).
	let last: WorkerLink = first;
	return ui.runInteractiveMode({
		link: first,
		paths: agentPaths(agentDir(io.env)),
		stdin: io.stdin as NodeJS.ReadStream,
		stdout: io.stdout as NodeJS.WriteStream,
		env: io.env,
		typeAhead: io.typeAhead,
		switchSession: async (changes) => {
			const leaving = current;
			current = undefined;
			// The same session on another model (`/model`): the worker is started again under its key,
			// and other views follow it. Another session: this view leaves (the worker stops when it has
			// nothing else to do) and the new session's worker serves it.
			const same = leaving ?? last;
			if (same && changes.resume && changes.resume === same.status().session.path) {
				// One step in the supervisor: the restart happens even if this view goes meanwhile.
				leaving?.abandon();
				current = await restartAgent(context, same.agentKey, { model: changes.model, at: changes.at });
				last = current;
				return current;
			}
			await leaving?.release();
			const next = await startWorker(context, { ...options, ...NO_PICK, ...changes }, "resident");
			current = await connectLink(context, next.socket, next.attached ? [openElsewhere(next.key)] : undefined);
			last = current;
			return current;
		},
	});
}

/**
 * Start agent `key` again on its session with `changes` (another model, an entry): stopped first
 * when live (its other views follow it); then connect to it as a view.
 */
async function restartAgent(
	context: DaemonContext,
	key: string,
	changes: { model?: string; at?: string },
): Promise<WorkerLink> {
	const supervisor = (await connectSupervisor(context)) as SupervisorClient;
	let target: { key: string; socket: string };
	try {
		target = unwrap(await supervisor.request({ type: "restart", key, env: plainEnv(context.env), changes }));
	} finally {
		supervisor.close();
	}
	return connectLink(context, target.socket);
}

/** A new session's options pick nothing the first one picked (which session, where in it, its goal). */
export const NO_PICK = {
	continueLatest: false,
	resume: undefined,
	fork: undefined,
	at: undefined,
	goal: undefined,
	autonomous: undefined,
} as const;

/**
 * `prime-agent attach <agent>`: start it again if saved, then the terminal UI (on a terminal), the
 * line chat, which replays what happened while detached, or with `--mode json` the JSON lines. Each
 * follows the worker when it restarts.
 */
export async function runAttach(
	ref: string,
	io: DaemonIo,
	ui?: InteractiveUi,
	mode: "text" | "json" = "text",
): Promise<ExitCodeValue> {
	const context = daemonContext(io.env);
	const supervisor = (await connectSupervisor(context)) as SupervisorClient;
	let target: WorkerTarget;
	try {
		target = unwrap(await supervisor.request({ type: "resume", key: ref, env: plainEnv(io.env) }));
	} finally {
		supervisor.close();
	}
	// The agent's session is served by another agent now (a `--resume` started one): it attaches there.
	const elsewhere = target.attached ? [openElsewhere(target.key)] : [];
	if (ui) {
		const link = await connectLink(context, target.socket, [...elsewhere, `Attached to agent ${target.key}.`]);
		return runUi(context, link, { cwd: link.status().session.cwd }, ui, io);
	}
	for (const line of elsewhere) io.stderr.write(`${line}\n`);
	// The line chat answers questions (a cell that ignored the interrupt); JSON lines do not.
	const answers = mode !== "json";
	const { client, welcome } = await connectWorker(context, target.socket, false, answers);
	const link = new WorkerLink(client, welcome, {
		reconnect: (restarting) => awaitRestart(context, welcome.key, restarting, answers),
	});
	if (mode === "json") {
		try {
			return await attachJsonMode(link, io.stdin, io.stdout);
		} finally {
			await link.close();
		}
	}
	return chatMode(link, io.stdin, io.stdout, io.stderr, { replay: await replayLines(welcome) });
}

/**
 * Ask the supervisor: started when none runs (`start`), or only when live workers wait for one to
 * adopt them (`adopt`; undefined when none runs and no worker is left).
 */
async function ask<K extends keyof SupervisorRequests & string>(
	io: DaemonIo,
	request: RequestOf<SupervisorRequests, K>,
	how: "start" | "adopt",
): Promise<SupervisorRequests[K]["reply"] | undefined> {
	const context = daemonContext(io.env);
	const supervisor = how === "start" ? await connectSupervisor(context) : await connectSupervisorForAgents(context);
	if (!supervisor) return undefined;
	try {
		return unwrap(await supervisor.request(request));
	} finally {
		supervisor.close();
	}
}

/** `prime-agent agents [--json]`: every session tree the daemon knows. */
export async function runAgentsCommand(io: DaemonIo, json: boolean): Promise<ExitCodeValue> {
	const agents = (await ask(io, { type: "list" }, "start")) ?? [];
	if (json) {
		io.stdout.write(`${JSON.stringify(agents, null, 2)}\n`);
		return ExitCode.ok;
	}
	if (agents.length === 0) {
		io.stdout.write("No background agents. `prime-agent` starts one; `prime-agent -p` runs one request.\n");
		return ExitCode.ok;
	}
	for (const agent of agents) io.stdout.write(`${describeAgent(agent)}\n`);
	io.stdout.write("`prime-agent attach <agent>` attaches; `prime-agent shutdown <agent>` stops one.\n");
	return ExitCode.ok;
}

export function describeAgent(agent: AgentInfo): string {
	const when = agent.lastActivity ? agent.lastActivity.replace("T", " ").slice(0, 19) : "-";
	const extras = [
		agent.clients > 0 ? `${agent.clients} attached` : "",
		agent.heartbeat ? `heartbeat ${agent.heartbeat}` : "",
		agent.schedules > 0 ? `${agent.schedules} schedule${agent.schedules > 1 ? "s" : ""}` : "",
		agent.crashes > 0 ? `${agent.crashes} crash${agent.crashes > 1 ? "es" : ""}` : "",
		agent.owner === "oneshot" ? "one-shot" : "",
	].filter(Boolean);
	const why = agent.failedReason
		? `  failed: ${agent.failedReason}`
		: agent.stopReason
			? `  stopped: ${agent.stopReason}`
			: "";
	return `${agent.key}  ${agent.state.padEnd(8)}  ${when}  ${agent.sessionId ?? "(no session yet)"}  ${agent.cwd}${extras.length ? `  [${extras.join(", ")}]` : ""}${why}`;
}

/**
 * `prime-agent status`: whether the supervisor runs, and its agents. Starts one only for workers
 * left running by a supervisor that died (it adopts them; see `connectSupervisorForAgents`).
 */
export async function runStatusCommand(io: DaemonIo): Promise<ExitCodeValue> {
	const status = await ask(io, { type: "status" }, "adopt");
	if (!status) {
		io.stdout.write("The agent daemon is not running (it starts with the next `prime-agent` session).\n");
		return ExitCode.ok;
	}
	const count = (state: string) => status.agents.filter((agent) => agent.state === state).length;
	io.stdout.write(
		`Daemon running: supervisor pid ${status.pid}, socket ${status.socket}\n` +
			`Agents: ${count("running")} running, ${count("idle")} idle, ${count("saved")} saved, ${count("failed")} failed\n`,
	);
	for (const agent of status.agents) io.stdout.write(`  ${describeAgent(agent)}\n`);
	return ExitCode.ok;
}

/**
 * `prime-agent shutdown [<agent>] [--force]`: one agent, or every agent and the supervisor (workers
 * left by a supervisor that died included: one is started to adopt them first).
 */
export async function runShutdownCommand(
	io: DaemonIo,
	ref: string | undefined,
	force: boolean,
): Promise<ExitCodeValue> {
	if (ref) {
		const agent = await ask(io, { type: "stop", key: ref, force }, "start");
		io.stdout.write(
			`Stopped agent ${agent?.key}${force ? " (killed)" : ""}; its session is saved: \`prime-agent attach ${agent?.key}\` starts it again.\n`,
		);
		return ExitCode.ok;
	}
	const context = daemonContext(io.env);
	let supervisor: SupervisorClient | undefined;
	try {
		supervisor = await connectSupervisorForAgents(context);
	} catch (error) {
		if (!(error instanceof DaemonVersionError)) throw error;
		await stopOtherVersion(context.paths);
		io.stdout.write(
			`Stopped the agent daemon of another version (${error.detail}) and its agents; their sessions are saved.\n`,
		);
		return ExitCode.ok;
	}
	if (!supervisor) {
		io.stdout.write("The agent daemon is not running.\n");
		return ExitCode.ok;
	}
	unwrap(await supervisor.request({ type: "stop_all", force }));
	await supervisor.closed;
	// The daemon is gone once its connection closes, stopped or crashed: what it left running is told.
	const left = liveWorkers(context.paths);
	if (left.length > 0) {
		throw new UserError(
			`The agent daemon stopped, but ${left.length === 1 ? "an agent is" : `${left.length} agents are`} still running: ${left.map((worker) => `${worker.key} (pid ${worker.pid})`).join(", ")}.`,
			`Its log says why (${context.paths.log}; a full disk stops it from saving state). Stop them with \`kill ${left.map((worker) => worker.pid).join(" ")}\` (their sessions are saved as they go).`,
		);
	}
	io.stdout.write(`Stopped every agent${force ? " (killed)" : ""} and the daemon.\n`);
	return ExitCode.ok;
}

/**
 * `prime-agent schedule "<when>" "<prompt>" [--agent <agent>] [--steer]`, `schedule list`,
 * `schedule remove <id>`: the agent is the one given, or the only live one of this directory.
 */
export async function runScheduleCli(
	io: DaemonIo,
	positional: string[],
	agentRef: string | undefined,
	steer: boolean,
): Promise<ExitCodeValue> {
	const context = daemonContext(io.env);
	const supervisor = (await connectSupervisor(context)) as SupervisorClient;
	let target: { key: string; socket: string };
	try {
		const agents = unwrap(await supervisor.request({ type: "list" }));
		const key = agentRef ?? pickAgent(agents, io.cwd);
		target = unwrap(await supervisor.request({ type: "resume", key, env: plainEnv(io.env) }));
	} finally {
		supervisor.close();
	}
	const { client } = await connectWorker(context, target.socket, false);
	try {
		const [first, ...rest] = positional;
		if (first === "list" && rest.length === 0) {
			io.stdout.write(`${describeJobs(unwrap(await client.request({ type: "schedule_list" })))}\n`);
			return ExitCode.ok;
		}
		if (first === "remove" && rest.length === 1) {
			const job = unwrap(await client.request({ type: "schedule_remove", scheduleId: rest[0] as string }));
			io.stdout.write(`Removed ${job.kind} ${job.id} from agent ${target.key}.\n`);
			return ExitCode.ok;
		}
		if (positional.length !== 2)
			throw new UserError(
				"`prime-agent schedule` needs a time and a prompt.",
				'Write it as prime-agent schedule "in 30m" "run the tests" (or "every 10m", "at <ISO time>", "*/15 * * * *"); `schedule list`, `schedule remove <id>`.',
				ExitCode.usage,
			);
		const job = unwrap(
			await client.request({
				type: "schedule_add",
				when: first as string,
				text: rest[0] as string,
				delivery: steer ? "steer" : "follow_up",
			}),
		);
		io.stdout.write(`Scheduled ${job.id} for agent ${target.key}, next at ${job.nextRunAt}.\n`);
		return ExitCode.ok;
	} finally {
		await client.request({ type: "detach" });
		client.close();
	}
}

function pickAgent(agents: AgentInfo[], cwd: string): string {
	// A finished `-p` run's agent is not one to schedule for (it ran one request and stopped).
	const here = agents.filter(
		(agent) => agent.cwd === cwd && agent.state !== "failed" && !(agent.owner === "oneshot" && agent.state === "saved"),
	);
	const live = here.filter((agent) => agent.state === "running" || agent.state === "idle");
	const pick = live.length === 1 ? live[0] : here.length === 1 ? here[0] : undefined;
	if (pick) return pick.key;
	throw new UserError(
		here.length === 0
			? "No agent works in this directory to schedule for."
			: `${here.length} agents work in this directory; name one.`,
		"Pass --agent <agent> (`prime-agent agents` lists them), or start one with `prime-agent`.",
		ExitCode.usage,
	);
}
