import { homedir } from "node:os";
import { join } from "node:path";

/** `PRIME_AGENT_DIR`, else `~/.prime/agent`. */
export function agentDir(env: NodeJS.ProcessEnv = process.env): string {
	return env.PRIME_AGENT_DIR || join(homedir(), ".prime", "agent");
}

/** The interpreter inside a venv. */
export function venvPython(venv: string): string {
	return process.platform === "win32" ? join(venv, "Scripts", "python.exe") : join(venv, "bin", "python");
}

/** The venv made by the setup command: `<agent dir>/kernel-venv`. */
export function kernelVenvDir(dir: string = agentDir()): string {
	return join(dir, "kernel-venv");
}
