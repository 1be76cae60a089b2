import { existsSync } from "node:fs";
import { ExitCode, UserError } from "../errors.js";
import type { AgentPaths } from "../home/index.js";
import type { StartAnnouncement } from "../orchestrator/index.js";
import { latestSession, openSessionRef, Session, type SessionHolder, unreadText } from "../session/index.js";
import { answerUnfinishedCalls, removeRunningCall } from "../unfinished-calls/index.js";
import type { StartOptions } from "./start-options.js";

/**
 * The session this run holds (locked for it, see `Session`'s holder) from the moment it is opened:
 * start-up releases it when it fails; once started, `dispose` does.
 */
export interface HeldSession {
	session?: Session;
}

/**
 * Which session the run works in, decided by reading only: nothing is written until `openSession`
 * (once every other check has passed). A resumed or continued file is held from here; a fork's
 * source is only read. `at`, when given, names an entry of `picked` (checked).
 */
export type SessionPlan =
	/** A new session: the root's in the agent home, a sub-agent's in its parent's folder. */
	| { kind: "new" }
	/** `picked` continues, from `at` when given (the next message starts a new branch there). */
	| { kind: "resume"; picked: Session; at?: string; pickedLeaf: string | null }
	/** A new file holding `picked`'s branch up to `at` (its leaf without one). */
	| { kind: "fork"; picked: Session; at?: string; pickedLeaf: string | null };

/** Who runs the session this process picks up or creates: a second run of it is refused, naming this one. */
export function sessionHolder(options: StartOptions): SessionHolder {
	return { agent: options.child?.name ?? "root", daemonAgent: options.daemonAgent };
}

/**
 * Decide the session from `--fork`, `--resume`, a passive sub-agent's own file, or `--continue`;
 * `notices` hears what reading it decided (never silent). An unknown `at` is a `UserError`.
 */
export function planSession(
	options: StartOptions,
	paths: AgentPaths,
	notices: string[],
	held: HeldSession,
): SessionPlan {
	const holder = sessionHolder(options);
	let plan: SessionPlan = { kind: "new" };
	const resume = (picked: Session): SessionPlan => {
		held.session = picked;
		return { kind: "resume", picked, at: options.at, pickedLeaf: picked.leafId };
	};
	if (options.fork) {
		const picked = openSessionRef(options.fork, paths.sessions, options.cwd, { upToDamage: true });
		plan = { kind: "fork", picked, at: options.at, pickedLeaf: picked.leafId };
		if (picked.damagedLine !== undefined) {
			const unread = unreadText(picked.unreadLines);
			notices.push(
				`Session ${picked.id} is damaged at line ${picked.damagedLine}; the fork holds the entries before that line.${unread ? ` ${unread}: repair line ${picked.damagedLine} of ${picked.path} by hand to keep ${picked.unreadLines?.count === 1 ? "it" : "them"}.` : ""}`,
			);
		}
	} else if (options.resume) {
		plan = resume(openSessionRef(options.resume, paths.sessions, options.cwd, { holder }));
	}
	// A passive sub-agent brought back by a message continues its own file.
	else if (options.child?.resumeFile) plan = resume(Session.open(options.child.resumeFile, { holder }));
	else if (options.continueLatest) {
		const latest = latestSession(paths.sessions, options.cwd);
		if (latest) plan = resume(Session.open(latest.path, { holder }));
		else notices.push("No earlier session in this directory; starting a new one.");
	}
	if (plan.kind === "new") return plan;
	const { picked } = plan;
	// What reading the file decided (entries placed in file order, a compaction's kept part): said, never silent.
	notices.push(...picked.readNotes);
	if (picked.linearBackup) {
		notices.push(
			plan.kind === "fork"
				? `The fork is written as a tree; ${picked.path} is left as it is.`
				: `When this session continues, its file is rewritten as a tree; the original is kept as ${picked.linearBackup}.`,
		);
	}
	if (options.at && !picked.entry(options.at)) {
		throw new UserError(
			`No entry ${options.at} in session ${picked.id}.`,
			`List the entries with \`prime-agent sessions ${picked.id}\`.`,
			ExitCode.usage,
		);
	}
	return plan;
}

/**
 * The folder the run works in: the picked session's own when it still exists, else `cwd`
 * (`notices` says which, and what a missing one means).
 */
export function workingDirectory(plan: SessionPlan, cwd: string, notices: string[]): string {
	const sessionCwd = plan.kind === "new" ? cwd : plan.picked.cwd;
	const chosen = existsSync(sessionCwd) ? sessionCwd : cwd;
	if (chosen !== cwd) notices.push(`Working in the session's directory: ${chosen}`);
	else if (sessionCwd !== cwd) {
		notices.push(
			`The session's directory ${sessionCwd} no longer exists: working in ${chosen} instead. Files the conversation names there are not here; restore the directory and resume again to work in it.`,
		);
	}
	return chosen;
}

/**
 * Carry the plan out: from here on the session may be written. A call the last run of the picked
 * session left unanswered (its process died mid-cell) gets its result now, as `notices` says.
 * `resumed`: an existing session was picked up.
 */
export function openSession(
	plan: SessionPlan,
	options: StartOptions,
	paths: AgentPaths,
	notices: string[],
	held: HeldSession,
): { session: Session; resumed: boolean } {
	const holder = sessionHolder(options);
	let session: Session;
	if (plan.kind === "fork") {
		session = held.session = plan.picked.fork(plan.at ?? plan.picked.leafId, { holder });
		notices.push(`Forked session ${plan.picked.id} into ${session.id}.`);
	} else if (plan.kind === "resume") {
		session = plan.picked;
		if (plan.at) session.branchFrom(plan.at);
	} else if (options.child) {
		const child = options.child;
		session = held.session = Session.create({
			dir: child.sessionDir,
			cwd: options.cwd,
			parentSession: child.parentSessionFile,
			parentEntryId: child.parentEntryId,
			rlmChild: { id: child.id, name: child.name, depth: child.depth },
			holder,
		});
	} else {
		session = held.session = Session.create({ dir: paths.sessions, cwd: options.cwd, holder });
	}
	// The process that ran it last stopped during a call (killed, crashed): the call gets its result now.
	if (plan.kind !== "new" && answerUnfinishedCalls(session, plan.picked.artifactDir) > 0) {
		if (plan.kind !== "fork") removeRunningCall(plan.picked.artifactDir);
		notices.push(
			"The last run of this session stopped before a cell's result was saved (its process crashed or was killed): the model is told, with the output recorded until then.",
		);
	}
	return { session, resumed: session.persisted };
}

/** What extensions hear at start-up (`session_start`, and a fork's or branch's origin). */
export function startAnnouncement(plan: SessionPlan, resumed: boolean): StartAnnouncement {
	if (plan.kind === "fork") {
		return {
			reason: "fork",
			forkedFrom: { sessionFile: plan.picked.path, atEntryId: plan.at ?? plan.picked.leafId },
		};
	}
	return {
		reason: resumed ? "resume" : "new",
		branchedFrom: plan.kind === "resume" && plan.at ? { leafId: plan.at, previousLeafId: plan.pickedLeaf } : undefined,
	};
}
