import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A throwaway agent home and project directory; `env` points PRIME_AGENT_DIR at the home and keeps
 * sessions in the calling process (PRIME_AGENT_IN_PROCESS=1); the daemon's tests delete that.
 */
export interface TempWorld {
	home: string;
	project: string;
	env: NodeJS.ProcessEnv;
	writeHome(name: string, value: unknown): void;
	writeProject(name: string, text: string): void;
	cleanup(): void;
}

export function makeTempWorld(extraEnv: Record<string, string> = {}): TempWorld {
	const root = mkdtempSync(join(tmpdir(), "prime-agent-test-"));
	const home = join(root, "home");
	const project = join(root, "project");
	mkdirSync(home, { mode: 0o700 });
	mkdirSync(project);
	const env: NodeJS.ProcessEnv = {
		PATH: process.env.PATH,
		HOME: root,
		PRIME_AGENT_DIR: home,
		PRIME_AGENT_IN_PROCESS: "1",
		...extraEnv,
	};
	return {
		home,
		project,
		env,
		writeHome: (name, value) => writeFileSync(join(home, name), JSON.stringify(value), { mode: 0o600 }),
		writeProject: (name, text) => {
			mkdirSync(join(project, name, ".."), { recursive: true });
			writeFileSync(join(project, name), text);
		},
		cleanup: () => rmSync(root, { recursive: true, force: true }),
	};
}
