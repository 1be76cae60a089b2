/**
 * A real Jupyter Server on loopback from a cached venv, for the kernel tests, the kernel
 * benchmark and the tests of other packages: `prime-agent-kernel/testing`, not the package index.
 */
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rename, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { JupyterServerOptions } from "../types.js";

const run = promisify(execFile);

/** What the test server's venv holds; jupyter-server comes from the machine's wheel mirror. */
const PACKAGES = ["jupyter-server>=2,<3", "ipykernel>=6", "dill"];
const VENV = join(
	process.env.PRIME_TEST_JUPYTER_VENV_CACHE ?? join(homedir(), ".cache", "prime-agent-tests"),
	"jupyter-server-venv-1",
);

/**
 * The venv with jupyter-server, made once and kept between runs. Built under a temporary name and
 * renamed into place, so test files that ask at once never see half a venv (the loser removes its
 * copy). Scripts' shebangs would name the temporary path: the server is run as `python -m`.
 */
export async function jupyterServerPython(): Promise<string> {
	const python = join(VENV, "bin", "python");
	if (existsSync(join(VENV, "ready"))) return python;
	const building = `${VENV}.build-${process.pid}-${randomBytes(3).toString("hex")}`;
	try {
		await run("python3", ["-m", "venv", building]);
		await run(join(building, "bin", "python"), [
			"-m",
			"pip",
			"install",
			"--retries",
			"0",
			"--timeout",
			"3",
			"--disable-pip-version-check",
			"-q",
			...PACKAGES,
		]);
		await run("touch", [join(building, "ready")]);
		await rename(building, VENV).catch(async (error) => {
			if (!existsSync(join(VENV, "ready"))) throw error;
		});
	} finally {
		await rm(building, { recursive: true, force: true });
	}
	return python;
}

export interface TestJupyterServer {
	url: string;
	/** The server process's id (its kernels are its children). */
	pid: number;
	token: string;
	/** The server's root folder (a temp folder removed by `stop()`). */
	root: string;
	/** Where this server looks for kernelspecs of its own (its private Jupyter data folder). */
	kernelsDir: string;
	/** Options for `Kernel.start({ jupyterServer })`. */
	options(extra?: Partial<JupyterServerOptions>): JupyterServerOptions;
	/** The server's log so far (for a failing test's message). */
	log(): string;
	/** Stops the server and every kernel it runs (its whole process group), and removes its root. */
	stop(): Promise<void>;
}

/** The server's flags that turn its iopub rate limits off (they drop output past 1 MB/s by default). */
export const RATE_LIMITS_OFF = [
	"--ZMQChannelsWebsocketConnection.iopub_data_rate_limit=0",
	"--ZMQChannelsWebsocketConnection.iopub_msg_rate_limit=0",
];

async function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = createServer();
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => {
			const address = server.address();
			server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
		});
	});
}

/** Iopub rate limits for the test server; one left out keeps the server's default. */
export interface RateLimits {
	/** `iopub_data_rate_limit`: bytes of stream output a second, averaged over 3 s (default 1,000,000). */
	dataBytesPerSecond?: number;
	/** `iopub_msg_rate_limit`: iopub messages a second, averaged over 3 s (default 1,000). */
	messagesPerSecond?: number;
}

/** The server's flags for `limits` (none for `true`: its defaults). */
function rateLimitFlags(limits: boolean | RateLimits | undefined): string[] {
	if (!limits) return RATE_LIMITS_OFF;
	if (limits === true) return [];
	const flags: string[] = [];
	if (limits.dataBytesPerSecond !== undefined) {
		flags.push(`--ZMQChannelsWebsocketConnection.iopub_data_rate_limit=${limits.dataBytesPerSecond}`);
	}
	if (limits.messagesPerSecond !== undefined) {
		flags.push(`--ZMQChannelsWebsocketConnection.iopub_msg_rate_limit=${limits.messagesPerSecond}`);
	}
	return flags;
}

/**
 * A real Jupyter Server on loopback with a token, its config and runtime folders private to it.
 * `rateLimits: true` keeps the server's default iopub rate limits (they drop output; see the
 * README), and `rateLimits: { ... }` sets them; by default they are off, as the README tells users
 * to set them.
 */
export async function startJupyterServer(
	options: { rateLimits?: boolean | RateLimits } = {},
): Promise<TestJupyterServer> {
	const python = await jupyterServerPython();
	const root = await mkdtemp(join(tmpdir(), "prime-jupyter-root-"));
	const home = await mkdtemp(join(tmpdir(), "prime-jupyter-home-"));
	const token = randomBytes(16).toString("hex");
	const port = await freePort();
	const args = [
		"-m",
		"jupyter_server",
		"--allow-root",
		"--no-browser",
		"--ServerApp.ip=127.0.0.1",
		`--ServerApp.port=${port}`,
		"--ServerApp.port_retries=0",
		`--IdentityProvider.token=${token}`,
		`--ServerApp.root_dir=${root}`,
	];
	// jupyter-server 2 reads these from the WebSocket connection's class: the `ServerApp.` names
	// of 1.x are taken without effect.
	args.push(...rateLimitFlags(options.rateLimits));
	const child = spawn(python, args, {
		detached: true,
		stdio: ["ignore", "pipe", "pipe"],
		env: {
			...process.env,
			JUPYTER_CONFIG_DIR: join(home, "config"),
			JUPYTER_RUNTIME_DIR: join(home, "runtime"),
			JUPYTER_DATA_DIR: join(home, "data"),
			IPYTHONDIR: join(home, "ipython"),
		},
	});
	let log = "";
	const collect = (chunk: Buffer) => {
		log = (log + chunk.toString()).slice(-20_000);
	};
	child.stdout.on("data", collect);
	child.stderr.on("data", collect);
	const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
	let gone = false;
	void exited.then(() => {
		gone = true;
	});
	const url = `http://127.0.0.1:${port}`;
	const stop = async () => {
		if (!gone && child.pid) {
			try {
				process.kill(-child.pid, "SIGTERM");
			} catch {}
			const timer = setTimeout(() => {
				try {
					if (child.pid) process.kill(-child.pid, "SIGKILL");
				} catch {}
			}, 10_000);
			await exited;
			clearTimeout(timer);
		}
		await rm(root, { recursive: true, force: true });
		await rm(home, { recursive: true, force: true });
	};
	const deadline = Date.now() + 90_000;
	while (true) {
		if (gone) {
			await stop();
			throw new Error(`The loopback Jupyter Server exited during startup:\n${log}`);
		}
		const ready = await fetch(`${url}/api/kernels`, { headers: { Authorization: `token ${token}` } })
			.then((response) => response.ok)
			.catch(() => false);
		if (ready) break;
		if (Date.now() > deadline) {
			await stop();
			throw new Error(`The loopback Jupyter Server did not answer within 90 s:\n${log}`);
		}
		await new Promise((resolve) => setTimeout(resolve, 200));
	}
	return {
		url,
		pid: child.pid as number,
		token,
		root,
		kernelsDir: join(home, "data", "kernels"),
		options: (extra = {}) => ({ url, token, ...extra }),
		log: () => log,
		stop,
	};
}
