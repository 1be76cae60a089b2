import type { Component, SelectItem, SlashCommand } from "@mariozechner/pi-tui";
import type { InteractiveContext, SessionChanges, SessionLink, StillBusyChoice } from "prime-agent";
import { sameSession } from "prime-agent/view";
import { Picker } from "./components/picker.js";
import { errorText } from "./error-text.js";
import { branchTarget, treeItems, treeRows } from "./tree.js";

/** A command the UI itself answers (it changes what the UI shows or which session it drives). */
export interface LocalCommand extends SlashCommand {
	run(args: string): Promise<void>;
}

export interface LocalCommands {
	find(name: string): LocalCommand | undefined;
	list(): LocalCommand[];
	/**
	 * A cell ignored the interrupt: ask whether to wait for it or restart the kernel. `dismiss`
	 * closes the question unanswered (another view answered it); `answer` is then undefined.
	 */
	askStillBusy(): { answer: Promise<StillBusyChoice | undefined>; dismiss(): void };
}

/** What the commands use of the app they belong to (`InteractiveApp`). */
export interface CommandHost {
	/** The session the UI drives now. */
	readonly link: SessionLink;
	readonly env: NodeJS.ProcessEnv;
	readonly paths: InteractiveContext["paths"];
	/** A turn is running (the session cannot be switched or moved in its tree meanwhile). */
	readonly working: boolean;
	/** Set while `/tree` moves the conversation, so the app does not redraw for its own move. */
	branching: boolean;
	readonly editor: { setText(text: string): void };
	/** Add a note (a command's answer, a problem) to the conversation. */
	note(text: string, tone?: "info" | "error"): void;
	/** Show `component` in the editor's place (the editor keeps its text) until `close` is called. */
	showPanel(component: Component): { close(): void };
	/** Replace the session; false (with a note saying why) when it was not replaced. */
	switchSession(changes: SessionChanges, what: string): Promise<boolean>;
	/** Lay the conversation out again from the session's active branch. */
	redraw(): Promise<void>;
	/** Leave the UI. */
	exit(): Promise<void>;
}

const PICKER_ROWS = 12;

/** `/model`, `/resume`, `/tree`, `/fork`, `/new`, `/exit`: the UI's own commands. */
export function LOCAL_COMMANDS(app: CommandHost): LocalCommands {
	/** A picker in the editor's place; `dismiss` closes it as Esc does. */
	const open = (title: string, items: SelectItem[], selected = 0) => {
		let dismiss = () => {};
		const chosen = new Promise<string | undefined>((resolve) => {
			const picker = new Picker(title, items, PICKER_ROWS, selected);
			const shown = app.showPanel(picker);
			let done = false;
			const end = (value: string | undefined) => {
				if (done) return;
				done = true;
				shown.close();
				resolve(value);
			};
			picker.onPick = (value) => end(value);
			picker.onClose = () => end(undefined);
			dismiss = () => end(undefined);
		});
		return { chosen, dismiss: () => dismiss() };
	};
	const pick = (title: string, items: SelectItem[], selected = 0): Promise<string | undefined> =>
		open(title, items, selected).chosen;

	const commands: LocalCommand[] = [
		{
			name: "model",
			description: "pick the model (providers with a key, local servers)",
			run: async (args) => {
				const { paths } = app;
				const { model, session } = app.link.status();
				const current = `${model.provider}/${model.id}`;
				let refs: string[];
				try {
					refs = await availableModels(paths.models, paths.auth, current, app.env);
				} catch (error) {
					app.note(`The model list could not be read: ${(error as Error).message}`, "error");
					return;
				}
				const ref =
					args ||
					(await pick(
						"Model",
						refs.map((value) => ({ value, label: value, description: value === current ? "current" : undefined })),
						Math.max(0, refs.indexOf(current)),
					));
				if (!ref || ref === current) return;
				// Checked before anything stops: a model that cannot be used leaves the session as it is.
				try {
					await app.link.checkModel(ref);
				} catch (error) {
					app.note(errorText(error), "error");
					return;
				}
				// A new model needs its provider's key and a fresh loop: the session is started again on it
				// (the kernel's variables are saved and restored, as on any resume).
				if (await app.switchSession({ model: ref, ...sameSession(session) }, `switching to ${ref}`))
					app.note(`Model: ${ref}`);
			},
		},
		{
			name: "resume",
			description: "pick an earlier session of this directory",
			run: async () => {
				const { session } = app.link.status();
				// The session catalogue loads with the command: the UI's first frame does without it.
				const { describeContents, listSessions } = await import("prime-agent");
				const sessions = listSessions(app.paths.sessions).filter(
					(info) => info.cwd === session.cwd && info.id !== session.id && info.damagedLine === undefined,
				);
				if (sessions.length === 0) {
					app.note("No other session in this directory to resume.");
					return;
				}
				const path = await pick(
					"Resume",
					sessions.map((info) => ({
						value: info.path,
						label: `${info.modified.toISOString().replace("T", " ").slice(0, 16)} ${info.firstMessage || "(no message)"}`,
						description: describeContents(info).trim(),
					})),
				);
				if (path) await app.switchSession({ resume: path }, "resuming the session");
			},
		},
		{
			name: "tree",
			description: "the session tree: go back to any entry and branch from it",
			run: async () => {
				if (app.working) {
					app.note("Wait for the turn to end (or stop it with Ctrl-C twice) before moving in the tree.", "error");
					return;
				}
				let tree: Awaited<ReturnType<typeof app.link.tree>>;
				try {
					tree = await app.link.tree();
				} catch (error) {
					app.note(`The session tree could not be read: ${errorText(error)}`, "error");
					return;
				}
				const { entries, leafId } = tree;
				const rows = treeRows(entries, leafId);
				if (rows.length === 0) {
					app.note("The session has no messages yet.");
					return;
				}
				const leafRow = rows.findIndex((row) => row.entry.id === leafId);
				const id = await pick("Session tree", treeItems(rows, leafId), leafRow === -1 ? rows.length - 1 : leafRow);
				const entry = id ? entries.find((candidate) => candidate.id === id) : undefined;
				if (!entry) return;
				const target = branchTarget(entry);
				app.branching = true;
				try {
					await app.link.branch(target.leafId);
				} catch (error) {
					app.note(errorText(error), "error");
					return;
				} finally {
					app.branching = false;
				}
				await app.redraw();
				if (target.editorText !== undefined) app.editor.setText(target.editorText);
				app.note(
					target.editorText !== undefined
						? "Back before that message: edit it and press Enter to branch from here."
						: "The next message branches from the picked entry.",
				);
			},
		},
		{
			name: "fork",
			description: "continue in a new session file holding this branch",
			run: async () => {
				const { session } = app.link.status();
				if (!session.persisted) {
					app.note("Nothing to fork yet: send a message first.");
					return;
				}
				const from = session.id;
				const at = session.leafId ? { at: session.leafId } : {};
				const { model } = app.link.status();
				const fork = { fork: session.path, ...at, model: `${model.provider}/${model.id}` };
				if (await app.switchSession(fork, "forking the session"))
					app.note(`Forked ${from} into ${app.link.status().session.id}.`);
			},
		},
		{
			name: "new",
			description: "start a new session in this directory",
			run: async () => {
				const { model } = app.link.status();
				await app.switchSession({ model: `${model.provider}/${model.id}` }, "starting a new session");
			},
		},
		{ name: "exit", description: "leave (Ctrl-D)", run: () => app.exit() },
		{ name: "quit", description: "leave (Ctrl-D)", run: () => app.exit() },
	];

	return {
		find: (name) => commands.find((command) => command.name === name),
		list: () => commands,
		askStillBusy: () => {
			const question = open("The cell ignored the interrupt and is still running", [
				{ value: "wait", label: "Wait for it", description: "the kernel keeps its variables" },
				{ value: "restart", label: "Restart the kernel", description: "its variables are lost" },
			]);
			let dismissed = false;
			return {
				answer: question.chosen.then((choice) =>
					dismissed ? undefined : choice === "wait" ? ("wait" as const) : ("restart" as const),
				),
				dismiss: () => {
					dismissed = true;
					question.dismiss();
				},
			};
		},
	};
}

/** `provider/id` of every model whose provider has a key (or is a local server in models.json). */
export async function availableModels(
	modelsPath: string,
	authPath: string,
	current: string,
	env: NodeJS.ProcessEnv,
): Promise<string[]> {
	// The model catalogue loads with the command: the UI's first frame does without it.
	const { Credentials, loadModelsFile, ModelRegistry } = await import("prime-agent");
	const registry = new ModelRegistry(loadModelsFile(modelsPath));
	const credentials = Credentials.load(registry.file, authPath, env);
	const refs = registry
		.providers()
		.filter((provider) => credentials.has(provider))
		.flatMap((provider) => registry.modelsOf(provider).map((model) => `${provider}/${model.id}`));
	return refs.includes(current) ? refs : [current, ...refs];
}
