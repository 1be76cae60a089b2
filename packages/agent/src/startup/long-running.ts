import { join } from "node:path";
import type { Usage } from "@mariozechner/pi-ai";
import { type AutonomousConfig, AutonomousRun, GateArchive } from "../autonomous/index.js";
import { GOALS_EXTENSION_NAME, goalsExtension } from "../builtin/goals/index.js";
import type { ChildEvent, ChildManager } from "../children/index.js";
import { ExitCode, UserError } from "../errors.js";
import type { ExtensionRunner } from "../extensions/index.js";
import {
	budgetFrom,
	checkText,
	GOAL_CONTEXT,
	GOAL_ENTRY,
	type GoalBudget,
	GoalController,
	GoalError,
	goalHostHandlers,
	goalStartMessage,
	unstartedGoal,
} from "../goals/index.js";
import type { AgentSession } from "../orchestrator/index.js";
import type { Session } from "../session/index.js";
import type { SessionKernel } from "../tools/index.js";

/** `--goal` on the command line: the objective and budget values as typed. */
export interface GoalOption {
	objective: string;
	tokens?: string;
	turns?: string;
	minutes?: string;
}

/** Check `--goal` and its budget before anything starts; a bad value is a `UserError`. */
export function resolveGoalOption(option: GoalOption): { objective: string; budget: GoalBudget } {
	try {
		const { objective, ...budget } = option;
		const text = checkText(objective, "--goal: the objective");
		return { objective: text, budget: budgetFrom(budget, "--goal", (name) => `--goal-${name}`) };
	} catch (error) {
		if (!(error instanceof GoalError)) throw error;
		throw new UserError(
			error.message,
			'Write it as --goal "<objective>" [--goal-tokens N] [--goal-turns N] [--goal-minutes N].',
			ExitCode.usage,
		);
	}
}

export interface LongRunningParts {
	session: Session;
	agentSession: AgentSession;
	children: ChildManager;
	kernel: SessionKernel;
	extensions: ExtensionRunner;
	cwd: string;
	env: NodeJS.ProcessEnv;
	/** What processes running code the agent does not control (gates) start with: `env` without its keys. */
	childEnv: Record<string, string>;
	agentHome: string;
	onChildUsage(listener: (usage: Usage) => void): void;
	onChildEvent(listener: (event: ChildEvent) => void): void;
}

export interface LongRunning {
	goals: GoalController;
	autonomous?: AutonomousRun;
}

/**
 * Wire goals (always) and an autonomous run (with `--autonomous`) into a session: the goal's
 * entries, its `/goal` command and kernel requests, usage counting, the run supervisor, and the
 * kick that resumes a continuation held back for sub-agents once they have settled.
 */
export async function wireLongRunning(
	parts: LongRunningParts,
	options: {
		goal?: { objective: string; budget: GoalBudget };
		autonomous?: AutonomousConfig;
		/** The session serves one prompt, then ends (`-p`, `--mode json`): see `StartOptions.oneShot`. */
		oneShot?: boolean;
	},
): Promise<LongRunning> {
	const { session, agentSession, children } = parts;
	const hasConversation = () => agentSession.agent.state.messages.length > 0;
	let starting = true;
	const goals = new GoalController({
		branch: () => session.branch(),
		append: (data, keep) => session.appendCustom(GOAL_ENTRY, data, { keep }),
		childrenBusy: () => !children.isIdle(),
		hasConversation,
		start: (message) => {
			// Set at start-up (`--goal`) or in a new session: it goes with the next prompt.
			if (starting || (!hasConversation() && !agentSession.running))
				agentSession.addHostNote(message.customType, String(message.content));
			else agentSession.deliverExternal(message);
		},
		withdrawStart: () => agentSession.withdrawHostNotes(GOAL_CONTEXT),
	});
	for (const [type, handler] of Object.entries(goalHostHandlers(goals))) parts.kernel.onHostRequest(type, handler);
	// A one-shot process ends after its command: the next prompt comes from the command line that continues the session.
	const later = options.oneShot
		? `Work on it starts when this session continues: prime-agent --resume ${session.id} -p "<prompt>" (or -c, the newest session here).`
		: undefined;
	await parts.extensions.load(GOALS_EXTENSION_NAME, goalsExtension(goals, hasConversation, later));
	agentSession.subscribe((event) => goals.observe(event));
	parts.onChildUsage((usage) => goals.addChildUsage(usage));
	// A continuation held for sub-agents resumes once the last one has settled (after its notice is delivered).
	parts.onChildEvent((event) => {
		if (event.type === "child_finished")
			queueMicrotask(() => {
				if (children.isIdle()) void agentSession.resumeHeld();
			});
	});
	if (options.goal) goals.create(options.goal.objective, options.goal.budget, "user");
	else {
		// Set or resumed by a process that ended before its next prompt (`-p "/goal ..."`): work starts with this one's.
		const unstarted = unstartedGoal(session.branch());
		if (unstarted) {
			const start = goalStartMessage(goals.current() ?? unstarted);
			agentSession.addHostNote(start.customType, String(start.content));
		}
	}
	starting = false;
	if (!options.autonomous) {
		agentSession.setSupervisor(goals);
		return { goals };
	}
	const autonomous = new AutonomousRun(options.autonomous, {
		cwd: parts.cwd,
		env: parts.childEnv,
		logDir: join(session.artifactDir, "gates"),
		archive: new GateArchive({
			sessionId: session.id,
			cwd: parts.cwd,
			env: { ...parts.env, PRIME_AGENT_DIR: parts.agentHome },
		}),
		goals,
		childrenBusy: () => !children.isIdle(),
		// The time limit ends everything: the run, and sub-agents still at work.
		abortRun: () => {
			agentSession.abort();
			void children.shutdown();
		},
	});
	agentSession.subscribe((event) => autonomous.observe(event));
	parts.onChildUsage((usage) => autonomous.addChildUsage(usage));
	agentSession.setSupervisor(autonomous);
	return { goals, autonomous };
}
