import { readFileSync } from "node:fs";
import { type StartedWorker, startResidentWorker, stopUnusedWorker } from "../daemon/start-worker.js";
import { ExitCode, type ExitCodeValue, UserError } from "../errors.js";
import { agentDir, agentPaths, ensurePrivateDir, secureHomeFolders } from "../home/index.js";
import type { InteractiveUi } from "../modes/index.js";
import { TypeAhead } from "../modes/type-ahead.js";
import type { StartedSession, StartOptions } from "../startup/index.js";
import { type CliArgs, parseArgs } from "./args.js";
import { HELP } from "./help.js";

export interface CliIo {
	cwd: string;
	env: NodeJS.ProcessEnv;
	stdin: NodeJS.ReadableStream;
	stdout: NodeJS.WritableStream;
	stderr: NodeJS.WritableStream;
	/** Keys typed while the terminal UI starts; a command that runs the UI holds them for it. */
	typeAhead?: TypeAhead;
}

/** Run the command line; returns the exit code. User errors are printed as what happened + what to do. */
export async function runCli(argv: readonly string[], cliIo: CliIo): Promise<ExitCodeValue> {
	const typeAhead = new TypeAhead(cliIo.stdin as NodeJS.ReadStream);
	const io = { ...cliIo, typeAhead };
	try {
		if (argv[0] === "skill") {
			secureHome(io);
			return await runSkill(argv.slice(1), io);
		}
		const args = parseArgs(argv);
		// Doctor only reports a home other users can write; every command that uses the home fixes or refuses it first.
		if (args.command !== "help" && args.command !== "version" && args.command !== "doctor") secureHome(io);
		switch (args.command) {
			case "help":
				io.stdout.write(HELP);
				return ExitCode.ok;
			case "version":
				io.stdout.write(`${packageVersion()}\n`);
				return ExitCode.ok;
			case "setup":
				return await runSetup(io);
			case "doctor":
				return await runDoctor(io);
			case "kernelspec":
				return await runKernelspecInstall(args, io);
			case "sessions":
				return await runSessionsCommand(args, io);
			case "package":
				return await runPackageCommand(args, io);
			case "agents":
			case "attach":
			case "status":
			case "shutdown":
			case "schedule":
				return await runDaemonCommand(args, io);
			case "run":
				return await runAgent(args, io);
		}
	} catch (error) {
		return reportError(error, io, wantsJson(argv));
	} finally {
		// The UI never started (an error): the terminal goes back to its mode.
		typeAhead.stop();
	}
}

/** The agent home's folders are ours alone to write (see `secureHomeFolders`): a fix is said once, here. */
function secureHome(io: CliIo): void {
	secureHomeFolders(agentPaths(agentDir(io.env)), (line) => io.stderr.write(`${line}\n`));
}

// The model libraries and the kernel client take a while to load: only commands that need them do.

async function runAgent(args: CliArgs, io: CliIo): Promise<ExitCodeValue> {
	if (args.mode === "json" && args.print === undefined) {
		throw new UserError("--mode json needs a prompt.", 'Pass it with -p: prime-agent --mode json -p "your request".');
	}
	const prompt = args.print === "-" ? await readAll(io.stdin) : args.print;
	if (prompt !== undefined && prompt.trim() === "") {
		throw new UserError("The prompt is empty.", 'Pass a request: prime-agent -p "fix the failing test".');
	}
	// Refused before a session (its worker, or one here) starts for it.
	if (args.tools) (await import("../tools/removed-tools.js")).rejectRemovedTools(args.tools);
	const { parseSlashCommand } = await import("../orchestrator/slash-commands.js");
	// A slash command may need no model (`/pc status`); one that does says the key is missing then.
	const allowMissingKey = prompt !== undefined && parseSlashCommand(prompt) !== undefined;
	// What the command line asks of the session, wherever it runs.
	const requested = {
		model: args.model,
		continueLatest: args.continueLatest,
		resume: args.resume,
		fork: args.fork,
		at: args.at,
		tools: args.tools,
		thinkingLevel: args.thinkingLevel,
		extensionPaths: args.extensions,
		goal: args.goal,
		autonomous: args.autonomous,
		allowMissingKey,
		trustProject: args.trustProject,
		kernelUrl: args.kernelUrl,
	};
	const { inProcess } = await import("../daemon/client.js");
	const inWorker = !inProcess(io.env);
	const wantsUi = prompt === undefined && wantsTerminalUi(io);
	// The UI will run: keys typed while the session starts are kept for its editor.
	if (wantsUi) io.typeAhead?.hold();
	const startOptions: StartOptions = { cwd: io.cwd, env: io.env, ...requested, oneShot: prompt !== undefined };
	// A worker's session starts there while this process loads its views, seconds of modules each:
	// only project code waiting for the terminal UI's review holds it until the user has answered.
	// Here, the terminal UI loads first (one thread for both: its starting screen comes sooner and
	// the session no later), the line chat and `-p` start the session at once.
	const early: { worker?: Promise<StartedWorker>; session?: Promise<StartedSession> } | undefined =
		wantsUi && !args.trustProject && (await projectCodeHeld(io))
			? undefined
			: inWorker
				? prompt === undefined
					? { worker: startResidentWorker({ cwd: io.cwd, ...requested }, io.env) }
					: undefined
				: wantsUi
					? {}
					: { session: startLocalSession(startOptions) };
	// A failure is met where each is awaited (below), after the views have loaded.
	early?.worker?.catch(() => {});
	early?.session?.catch(() => {});
	let ui: InteractiveUi | undefined;
	try {
		ui = await loadUi(wantsUi, io);
	} catch (error) {
		// Views that cannot load leave no session behind: nobody would ever attach to it.
		void early?.worker?.then((started) => stopUnusedWorker(started, io.env)).catch(() => {});
		void early?.session?.then((started) => started.dispose()).catch(() => {});
		throw error;
	}
	// The line chat reads its own input: nothing is held for it.
	if (!ui) io.typeAhead?.stop();
	// The terminal UI asks about the project's code before any of it could run (in a worker or here).
	if (ui?.reviewProject && !args.trustProject && !early) {
		// The review reads the terminal itself: keys typed for the prompt must not answer it.
		io.typeAhead?.stop();
		await reviewProjectCode(ui, io);
		io.typeAhead?.hold();
	}
	// The terminal UI draws a starting screen at once; its first frame replaces it (an error erases it).
	let starting = ui?.showStartingScreen?.(io.stdout as NodeJS.WriteStream, io.cwd);
	if (early && !inWorker && !early.session) {
		early.session = startLocalSession(startOptions);
		early.session.catch(() => {});
	}
	try {
		// The session runs in a background worker unless PRIME_AGENT_IN_PROCESS asks for this process.
		let stays: string | undefined;
		if (inWorker) {
			const daemon = await import("../daemon/commands.js");
			const { DaemonUnavailableError } = await import("../daemon/client.js");
			try {
				if (ui) return await daemon.runUiInWorker({ cwd: io.cwd, ...requested }, ui, io, early?.worker);
				return await daemon.runInWorker({ cwd: io.cwd, ...requested }, prompt, args.mode, io, early?.worker);
			} catch (error) {
				// A daemon that cannot serve this run (another version, an unusable folder): it runs here as with PRIME_AGENT_IN_PROCESS=1.
				if (!(error instanceof DaemonUnavailableError)) throw error;
				stays = `${error.message.replace(/\.$/, "")}; this run stays in this process. ${error.later}`;
				starting?.erase();
				io.stderr.write(`${stays}\n`);
				starting = ui?.showStartingScreen?.(io.stdout as NodeJS.WriteStream, io.cwd);
			}
		}
		const { startSession } = await import("../startup/index.js");
		const { localLink } = await import("../link/index.js");
		const { chatMode, jsonMode, printMode } = await import("../modes/index.js");
		const { NO_PICK } = await import("../daemon/commands.js");
		const started = await (early?.session ?? startSession(startOptions));
		let current: StartedSession | undefined = started;
		try {
			if (ui) {
				return await ui.runInteractiveMode({
					// The UI clears the screen: why it runs here is said in its header too.
					link: localLink(started, stays ? [stays] : []),
					paths: started.paths,
					stdin: io.stdin as NodeJS.ReadStream,
					stdout: io.stdout as NodeJS.WriteStream,
					env: io.env,
					typeAhead: io.typeAhead,
					switchSession: async (changes) => {
						await current?.dispose();
						current = undefined;
						current = await startSession({ ...startOptions, ...NO_PICK, ...changes });
						return localLink(current);
					},
				});
			}
			// Why it runs here was said already (its screen is not cleared).
			const link = localLink(started);
			try {
				if (prompt === undefined) return await chatMode(link, io.stdin, io.stdout, io.stderr);
				if (args.mode === "json") return await jsonMode(link, prompt, io.stdout);
				return await printMode(link, prompt, { out: io.stdout, err: io.stderr }, terminalInput(io.stdin));
			} finally {
				await link.close();
			}
		} finally {
			await current?.dispose();
		}
	} catch (error) {
		starting?.erase();
		throw error;
	}
}

/**
 * Show the project's code that is not approved (new, or changed since its approval) in the
 * terminal UI's review; what the user approves is recorded in the agent home.
 */
async function reviewProjectCode(ui: InteractiveUi, io: CliIo): Promise<void> {
	const { approveItems, projectTrust } = await import("../trust/index.js");
	const agentHome = agentDir(io.env);
	const trust = projectTrust({ cwd: io.cwd, agentHome });
	if (trust.held.length === 0 || !ui.reviewProject) return;
	const review = { root: trust.root, items: trust.held.map((item) => ({ ...item, state: trust.heldState(item) })) };
	if (await ui.reviewProject(review)) approveItems(agentHome, trust.root, trust.held);
}

/** `startSession` in this process, its modules loaded first. */
async function startLocalSession(options: StartOptions): Promise<StartedSession> {
	const { startSession } = await import("../startup/index.js");
	return startSession(options);
}

/** With no prompt on a terminal, the terminal UI (found as `loadTerminalUi` says); the line chat otherwise. */
async function loadUi(wantsUi: boolean, io: CliIo): Promise<InteractiveUi | undefined> {
	if (!wantsUi) return undefined;
	const { loadTerminalUi } = await import("../modes/interactive.js");
	const loaded = await loadTerminalUi();
	if ("missing" in loaded) io.stderr.write(`Line chat: ${loaded.missing}.\n`);
	return "ui" in loaded ? loaded.ui : undefined;
}

/** Whether the project has code not approved (new, or changed since its approval): the terminal UI asks about it first. */
async function projectCodeHeld(io: CliIo): Promise<boolean> {
	const { projectTrust } = await import("../trust/index.js");
	return projectTrust({ cwd: io.cwd, agentHome: agentDir(io.env) }).held.length > 0;
}

/** Both ends are a terminal, and PRIME_AGENT_NO_TUI does not ask for the line chat. */
function wantsTerminalUi(io: CliIo): boolean {
	const tty = (stream: NodeJS.ReadableStream | NodeJS.WritableStream) => (stream as { isTTY?: boolean }).isTTY === true;
	return tty(io.stdin) && tty(io.stdout) && !io.env.PRIME_AGENT_NO_TUI;
}

async function runDaemonCommand(args: CliArgs, io: CliIo): Promise<ExitCodeValue> {
	const daemon = await import("../daemon/commands.js");
	switch (args.command) {
		case "agents":
			return daemon.runAgentsCommand(io, args.json);
		case "attach": {
			// `--mode json` asks for the JSON lines, on a terminal too.
			const wantsUi = args.mode === "text" && wantsTerminalUi(io);
			if (wantsUi) io.typeAhead?.hold();
			const ui = await loadUi(wantsUi, io);
			if (!ui) io.typeAhead?.stop();
			return daemon.runAttach(args.agentRef as string, io, ui, args.mode);
		}
		case "status":
			return daemon.runStatusCommand(io);
		case "shutdown":
			return daemon.runShutdownCommand(io, args.agentRef, args.force);
		default:
			return daemon.runScheduleCli(io, args.scheduleArgs ?? [], args.agentRef, args.steer);
	}
}

/**
 * Writes a Jupyter kernelspec running prime-agent's kernel with the agent's kernel runtime, for a
 * Jupyter Server the user controls (see the kernel package's `installKernelspec`).
 */
async function runKernelspecInstall(args: CliArgs, io: CliIo): Promise<ExitCodeValue> {
	const { installKernelspec, resolveKernelPython } = await import("prime-agent-kernel");
	const { RUNTIME_PYTHON_DIR } = await import("../tools/index.js");
	let installed: ReturnType<typeof installKernelspec>;
	try {
		installed = installKernelspec({
			name: args.kernelspecName,
			python: resolveKernelPython(io.env),
			folders: [RUNTIME_PYTHON_DIR],
			env: io.env,
		});
	} catch (error) {
		throw new UserError(
			`Installing the kernelspec failed: ${(error as Error).message}`,
			/cannot name a kernelspec/.test((error as Error).message)
				? "Pick another --name."
				: "Run `prime-agent setup` first (the kernel's Python), or set JUPYTER_DATA_DIR to a folder you can write.",
			ExitCode.kernel,
		);
	}
	io.stdout.write(
		`Installed the kernelspec "${installed.name}" in ${installed.path} (Python: ${installed.python}).\n` +
			`Restart the Jupyter Server if it runs, then start sessions with kernel.kernelName "${installed.name}" (settings.json) on it.\n`,
	);
	return ExitCode.ok;
}

async function runSetup(io: CliIo): Promise<ExitCodeValue> {
	const root = agentDir(io.env);
	ensurePrivateDir(root);
	const { setupKernelEnvironment } = await import("prime-agent-kernel");
	try {
		const result = await setupKernelEnvironment({
			agentDir: root,
			env: io.env,
			log: (line) => io.stderr.write(`${line}\n`),
		});
		io.stdout.write(
			`${result.created ? "Created" : "Checked"} the kernel environment: ${result.python}\nNext: \`prime-agent doctor\`.\n`,
		);
		return ExitCode.ok;
	} catch (error) {
		throw new UserError(
			`Setting up the kernel environment failed: ${(error as Error).message}`,
			"Make sure Python 3.10+ with the venv module is installed, then run `prime-agent setup` again.",
			ExitCode.kernel,
		);
	}
}

async function runDoctor(io: CliIo): Promise<ExitCodeValue> {
	const { formatChecks, runChecks } = await import("../doctor/index.js");
	const results = await runChecks(agentPaths(agentDir(io.env)), io.env, io.cwd);
	io.stdout.write(`${formatChecks(results)}\n`);
	const failed = results.filter((result) => result.status === "fail").length;
	const warned = results.filter((result) => result.status === "warn").length;
	// A warning ("!") still lets the agent run, but "All checks passed" under one reads as a contradiction.
	const warnings = warned === 0 ? "" : ` (${warned} warning${warned > 1 ? "s" : ""} marked ! above)`;
	io.stdout.write(
		failed === 0 ? `All checks passed${warnings}.\n` : `${failed} problem${failed > 1 ? "s" : ""} to fix${warnings}.\n`,
	);
	return failed === 0 ? ExitCode.ok : ExitCode.usage;
}

async function runSkill(argv: readonly string[], io: CliIo): Promise<ExitCodeValue> {
	const { runSkillCommand } = await import("../skills/index.js");
	return runSkillCommand(argv, {
		cwd: io.cwd,
		agentHome: agentDir(io.env),
		env: io.env,
		out: (text) => io.stdout.write(text),
		err: (text) => io.stderr.write(text),
	});
}

async function runSessionsCommand(args: CliArgs, io: CliIo): Promise<ExitCodeValue> {
	const { afterDamage, describeBranch, describeChildren, describeContents, listSessions, openSessionRef, unreadText } =
		await import("../session/index.js");
	const paths = agentPaths(agentDir(io.env));
	if (args.sessionRef) {
		const session = openSessionRef(args.sessionRef, paths.sessions, io.cwd, { upToDamage: true });
		io.stdout.write(describeBranch(session));
		for (const note of session.readNotes) io.stdout.write(`${note}\n`);
		if (session.damagedLine !== undefined) {
			const unread = unreadText(session.unreadLines);
			const what = `The file is damaged at line ${session.damagedLine}${session.damage ? ` (${session.damage})` : ""}${unread ? `. ${unread}` : ""}`;
			io.stdout.write(
				session.entries.length > 0
					? `${what}: the entries above come before it. Continue from them with \`prime-agent --fork ${session.commandRef} --at <entry>\`.\n`
					: `${what}. ${afterDamage(0, session.damagedLine, session.commandRef)}.\n`,
			);
		}
		return ExitCode.ok;
	}
	const sessions = listSessions(paths.sessions).filter((info) => args.all || info.cwd === io.cwd);
	if (args.json) {
		io.stdout.write(`${JSON.stringify(sessions, null, 2)}\n`);
		return ExitCode.ok;
	}
	if (sessions.length === 0) {
		io.stdout.write(
			args.all
				? "No sessions yet.\n"
				: "No sessions in this directory (`prime-agent sessions --all` lists every one).\n",
		);
		return ExitCode.ok;
	}
	for (const info of sessions) {
		const when = info.modified.toISOString().replace("T", " ").slice(0, 16);
		const where = args.all ? `  ${info.cwd}` : "";
		const damaged =
			info.damagedLine === undefined
				? ""
				: `  [damaged at line ${info.damagedLine}: ${info.messageCount > 0 ? "fork it" : "nothing before it to fork"}]`;
		io.stdout.write(`${info.id}  ${when}  ${describeContents(info)}${where}${damaged}  ${info.firstMessage}\n`);
		for (const line of describeChildren(info)) io.stdout.write(`${line}\n`);
	}
	io.stdout.write("Resume one with `prime-agent --resume <id>` (a unique prefix is enough).\n");
	if (sessions.some((info) => info.damagedLine !== undefined)) {
		io.stdout.write(
			"A damaged session cannot be resumed; `prime-agent --fork <id>` continues it from its last good entry in a new file.\n",
		);
	}
	return ExitCode.ok;
}

async function runPackageCommand(args: CliArgs, io: CliIo): Promise<ExitCodeValue> {
	const { installedPackages, installPackage, packageScope, removePackage } = await import("../extensions/index.js");
	const scope = packageScope({ agentHome: agentDir(io.env), cwd: io.cwd, local: args.local });
	const where = args.local ? "this project" : "every project";
	switch (args.packageAction) {
		case "install": {
			const spec = installPackage(scope, args.packageSource as string, io.cwd, (line) => io.stderr.write(`${line}\n`));
			// Installed by the user into the project: its packages are approved as they are now.
			if (args.local) {
				const { approveItems, findProjectCode } = await import("../trust/index.js");
				const code = findProjectCode(io.cwd);
				approveItems(
					agentDir(io.env),
					code.root,
					code.items.filter((item) => item.kind === "packages"),
				);
			}
			io.stdout.write(`Installed ${spec}; its extensions load in new sessions of ${where}.\n`);
			return ExitCode.ok;
		}
		case "remove": {
			const spec = removePackage(scope, args.packageSource as string, io.cwd);
			io.stdout.write(`Removed ${spec}.\n`);
			return ExitCode.ok;
		}
		default: {
			const packages = installedPackages(scope);
			if (packages.length === 0) {
				io.stdout.write(
					`No extension packages for ${where}. Add one with \`prime-agent package install <path|npm:name>${args.local ? " --local" : ""}\`.\n`,
				);
			}
			for (const pkg of packages) io.stdout.write(`${pkg.spec}${pkg.spec === pkg.dir ? "" : `  (${pkg.dir})`}\n`);
			return ExitCode.ok;
		}
	}
}

function reportError(error: unknown, io: CliIo, json: boolean): ExitCodeValue {
	if (error instanceof UserError) {
		if (json)
			io.stdout.write(
				`${JSON.stringify({ type: "error", message: error.message, hint: error.hint, exitCode: error.exitCode })}\n`,
			);
		io.stderr.write(`Error: ${error.message}\n${error.hint}\n`);
		return error.exitCode;
	}
	const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
	io.stderr.write(`Unexpected error: ${message}\nPlease report this with the command you ran.\n`);
	return ExitCode.modelError;
}

/** Whether errors go out as a JSON line: `--mode json` or `--mode=json`, even when other arguments are bad. */
function wantsJson(argv: readonly string[]): boolean {
	try {
		return parseArgs(argv).mode === "json";
	} catch {
		return argv.some((arg, index) => arg === "--mode=json" || (arg === "--mode" && argv[index + 1] === "json"));
	}
}

function packageVersion(): string {
	const file = new URL("../../package.json", import.meta.url);
	return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
}

/** Stdin when it is a terminal (Ctrl-C is then read as a key), else nothing. */
function terminalInput(stdin: NodeJS.ReadableStream): NodeJS.ReadStream | undefined {
	const stream = stdin as NodeJS.ReadStream;
	return stream.isTTY ? stream : undefined;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
	const chunks: Buffer[] = [];
	for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
	return Buffer.concat(chunks).toString("utf8");
}
