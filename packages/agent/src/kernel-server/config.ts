import type { JupyterServerOptions } from "prime-agent-kernel";
import { ExitCode, UserError } from "../errors.js";
import type { Settings } from "../home/index.js";

/** The variable naming the server when neither `--kernel-url` is given (settings.json's `kernel.url` comes last). */
export const KERNEL_URL_ENV = "PRIME_AGENT_KERNEL_URL";
/** Where the token is read from unless settings.json's `kernel.tokenEnv` names another variable. */
export const DEFAULT_TOKEN_ENV = "JUPYTER_TOKEN";
/** The URL word that asks for a kernel on this machine, over a server configured elsewhere. */
export const LOCAL_KERNEL = "local";

/**
 * The Jupyter Server (or Enterprise Gateway) a session's kernels run on. The token is read from the
 * environment when the session starts and lives only in `options.token`: never printed, logged,
 * written to a session file, or given to the kernel or the model (its variable is withheld from
 * every child process, see `childEnvironment`).
 */
export interface KernelServer {
	/** What `Kernel.start({ jupyterServer })` takes. `url` never holds a token, nor ends with a slash. */
	options: JupyterServerOptions;
	/** The variable the token comes from (named in messages; its value never is). */
	tokenEnv: string;
	/** Where the URL was given: `--kernel-url`, `PRIME_AGENT_KERNEL_URL` or `"kernel.url" in <settings.json>`. */
	source: string;
}

export interface KernelServerInput {
	/** `--kernel-url`: wins over the environment and settings. */
	flagUrl?: string;
	env: NodeJS.ProcessEnv;
	/** settings.json's `"kernel"` (its shape already checked by `loadSettings`). */
	settings?: Settings["kernel"];
	settingsPath: string;
}

/**
 * The server a session's kernels run on, from `--kernel-url`, else `PRIME_AGENT_KERNEL_URL`, else
 * settings.json's `kernel.url`; `undefined` for a local kernel (none given, or the first one given
 * is `local`). `kernel.tokenEnv`, `kernel.kernelName` and `kernel.cwd` apply whichever gave the URL.
 * A URL that is not an http(s) URL, one holding a token or a password, and a `tokenEnv` naming an
 * unset variable are `UserError`s saying what to fix.
 */
export function resolveKernelServer(input: KernelServerInput): KernelServer | undefined {
	const given = [
		{ value: input.flagUrl, source: "--kernel-url" },
		{ value: input.env[KERNEL_URL_ENV], source: KERNEL_URL_ENV },
		{ value: input.settings?.url, source: `"kernel.url" in ${input.settingsPath}` },
	].find((candidate) => candidate.value !== undefined && candidate.value.trim() !== "");
	if (!given?.value || given.value.trim() === LOCAL_KERNEL) return undefined;
	const url = checkServerUrl(given.value.trim(), given.source);
	const tokenEnv = input.settings?.tokenEnv ?? DEFAULT_TOKEN_ENV;
	const token = input.env[tokenEnv];
	if (input.settings?.tokenEnv !== undefined && !token) {
		throw new UserError(
			`"kernel.tokenEnv" in ${input.settingsPath} names ${tokenEnv}, which is ${token === undefined ? "not set" : "empty"}: the Jupyter Server's token is read from it.`,
			`Export ${tokenEnv}=<the server's token>, or remove "tokenEnv" to read the token from ${DEFAULT_TOKEN_ENV}.`,
			ExitCode.usage,
		);
	}
	const options: JupyterServerOptions = { url };
	if (token) options.token = token;
	if (input.settings?.kernelName !== undefined) options.kernelName = input.settings.kernelName;
	if (input.settings?.cwd !== undefined) options.cwd = input.settings.cwd;
	return { options, tokenEnv, source: given.source };
}

/**
 * `raw` as a server URL (`http://host:8888`, `https://host/user/me`), or a `UserError`: it must be http or https, and carry no credentials
 * (a URL ends up in shell history, process lists, settings files and logs). The message never
 * repeats a credential it found.
 */
function checkServerUrl(raw: string, source: string): string {
	let url: URL;
	try {
		url = new URL(raw);
	} catch {
		url = new URL("invalid:");
	}
	if (url.protocol !== "http:" && url.protocol !== "https:") {
		throw new UserError(
			`${source} is ${JSON.stringify(withoutCredentials(raw))}, which is not the http(s) URL of a Jupyter Server.`,
			`Give the server's address with its scheme, e.g. http://gpu-box:8888 (or "${LOCAL_KERNEL}" for a kernel on this machine).`,
			ExitCode.usage,
		);
	}
	const tokenParam = [...url.searchParams.keys()].find((key) => key.toLowerCase() === "token");
	if (tokenParam !== undefined || url.username !== "" || url.password !== "") {
		url.username = "";
		url.password = "";
		url.search = "";
		throw new UserError(
			`${source} holds a ${tokenParam !== undefined ? "token" : "user name or password"}: a URL is shown in process lists, shell history and logs, so it must not carry one.`,
			`Give the URL without it (${url.href}) and put the token in ${DEFAULT_TOKEN_ENV} (or the variable "kernel.tokenEnv" in settings.json names).`,
			ExitCode.usage,
		);
	}
	// As the kernel names its server (`KernelLocation.url`): no trailing slash, a base path kept.
	return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** `raw` with anything after `token=` and any `user:password@` masked, for a message about a malformed URL. */
function withoutCredentials(raw: string): string {
	return raw.replace(/(token=)[^&#\s]*/gi, "$1…").replace(/\/\/[^/@\s]*@/, "//…@");
}

/**
 * Where a session's kernels run (`server`; none: this machine) and the variables holding a Jupyter
 * Server token, withheld from every process running code the agent does not control (the variable
 * `kernel.tokenEnv` names is withheld in every session, whichever kernel it runs).
 */
export function chooseKernelServer(
	options: { kernelUrl?: string; kernelServer?: KernelServer | "local" },
	env: NodeJS.ProcessEnv,
	settings: Settings,
	settingsPath: string,
): { server?: KernelServer; tokenVariables: string[] } {
	const server =
		options.kernelServer === undefined
			? resolveKernelServer({ flagUrl: options.kernelUrl, env, settings: settings.kernel, settingsPath })
			: options.kernelServer === "local"
				? undefined
				: options.kernelServer;
	const tokenVariables = [settings.kernel?.tokenEnv, server?.tokenEnv].filter((name) => name !== undefined);
	return { server, tokenVariables: [...new Set(tokenVariables)] };
}
