import { statSync } from "node:fs";
import { type AgentInfo, connectSupervisorForAgents, daemonContext, daemonPaths } from "../daemon/index.js";
import type { CheckResult } from "./check-result.js";

/**
 * `doctor`: the daemon folder is the user's alone (0700), and the supervisor, when one runs,
 * answers with the token. A daemon that is not running is fine: the next session starts it (one
 * is started now for workers left running by a supervisor that died, which it adopts).
 */
export async function daemonDoctorCheck(agentHome: string, env: NodeJS.ProcessEnv): Promise<CheckResult> {
	const name = "daemon";
	const paths = daemonPaths(agentHome);
	try {
		const mode = statSync(paths.dir).mode & 0o777;
		if (mode !== 0o700)
			return {
				name,
				status: "fail",
				detail: `${paths.dir} has mode ${mode.toString(8)}; other users could reach the agents' sockets`,
				fix: `chmod 700 ${paths.dir}`,
			};
	} catch {
		return { name, status: "ok", detail: "not started yet (the next session starts it)" };
	}
	try {
		const supervisor = await connectSupervisorForAgents(daemonContext({ ...env, PRIME_AGENT_DIR: agentHome }));
		if (!supervisor) return { name, status: "ok", detail: "not running (the next session starts it)" };
		const reply = await supervisor.request({ type: "list" });
		supervisor.close();
		const agents = reply.ok ? (reply.data as AgentInfo[]) : [];
		const failed = agents.filter((agent) => agent.state === "failed");
		if (failed.length > 0)
			return {
				name,
				status: "warn",
				detail: `supervisor running; ${failed.length} agent${failed.length > 1 ? "s" : ""} failed (${failed.map((agent) => `${agent.key}: ${agent.failedReason}`).join("; ")})`,
				fix: "`prime-agent attach <agent>` starts a failed agent's session again; `prime-agent agents` lists them",
			};
		const live = agents.filter((agent) => agent.state === "running" || agent.state === "idle").length;
		return { name, status: "ok", detail: `supervisor running, ${live} live agent${live === 1 ? "" : "s"}` };
	} catch (error) {
		return {
			name,
			status: "fail",
			detail: `the supervisor did not answer: ${(error as Error).message}`,
			fix: "`prime-agent shutdown --force`, then start a session again",
		};
	}
}
