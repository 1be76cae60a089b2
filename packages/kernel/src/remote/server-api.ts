import { type Kernel as JupyterKernel, KernelAPI, ServerConnection } from "@jupyterlab/services";
import WebSocket from "ws";
import { KernelStartError } from "../kernel/errors.js";
import type { JupyterServerOptions } from "../types.js";
import { quietClientLogs } from "./quiet-logs.js";

/** A kernel as the server lists it (`GET /api/kernels`). */
export type ServerKernelModel = JupyterKernel.IModel;

/**
 * The server's address, checked: `http(s)://host[:port][/base/]`, with a trailing slash so
 * relative API paths keep the base path. Throws a KernelStartError naming what to fix.
 */
export function serverBaseUrl(url: string): URL {
	let parsed: URL;
	try {
		parsed = new URL(url);
	} catch {
		throw new KernelStartError(
			`The Jupyter Server URL ${JSON.stringify(url)} is not a URL; give it as http://host:8888 (or https://...).`,
		);
	}
	if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
		throw new KernelStartError(
			`The Jupyter Server URL ${JSON.stringify(url)} must start with http:// or https:// (the WebSocket address is derived from it).`,
		);
	}
	if (parsed.search || parsed.username || parsed.password) {
		throw new KernelStartError(
			`The Jupyter Server URL must not carry a token, user or query (${parsed.origin}${parsed.pathname}); pass the token in JUPYTER_TOKEN.`,
		);
	}
	if (!parsed.pathname.endsWith("/")) parsed.pathname += "/";
	return parsed;
}

/** The URL shown to users and models: never a token, never a query. */
export function displayUrl(url: string): string {
	try {
		const parsed = serverBaseUrl(url);
		return `${parsed.origin}${parsed.pathname === "/" ? "" : parsed.pathname.replace(/\/$/, "")}`;
	} catch {
		return "<invalid URL>";
	}
}

/**
 * Connection settings for @jupyterlab/services. The token travels in the Authorization header of
 * every request and of the WebSocket upgrade, never in a URL (a URL ends up in logs).
 */
export function serverSettings(options: JupyterServerOptions): ServerConnection.ISettings {
	quietClientLogs();
	const base = serverBaseUrl(options.url);
	const wsUrl = new URL(base.href);
	wsUrl.protocol = base.protocol === "https:" ? "wss:" : "ws:";
	const token = options.token ?? "";
	class AuthorizedWebSocket extends WebSocket {
		constructor(address: string | URL, protocols?: string | string[]) {
			super(address, protocols, token ? { headers: { Authorization: `token ${token}` } } : {});
		}
	}
	return ServerConnection.makeSettings({
		baseUrl: base.href,
		wsUrl: wsUrl.href,
		token,
		appendToken: false,
		WebSocket: AuthorizedWebSocket as unknown as typeof globalThis.WebSocket,
		fetch: globalThis.fetch,
		Request: globalThis.Request,
		Headers: globalThis.Headers,
	});
}

/**
 * Checks the server answers as a Jupyter Server with this token (`GET /api`, then `GET
 * /api/kernelspecs`, which needs the token), and says what to do when it does not.
 */
export async function checkServer(options: JupyterServerOptions, settings = serverSettings(options)): Promise<void> {
	const where = displayUrl(options.url);
	// Plain fetch, not the library's request: its NetworkError drops the cause (refused, TLS, DNS).
	const probe = async (path: string) => {
		try {
			const response = await fetch(`${settings.baseUrl}${path}`, { headers: authHeader(options) });
			await response.body?.cancel();
			return response;
		} catch (error) {
			throw new KernelStartError(describeNetworkError(where, error));
		}
	};
	const api = await probe("api");
	if (api.status === 404) {
		throw new KernelStartError(
			`${where} answered 404 at /api: it is not a Jupyter Server, or its base path is missing from the URL (e.g. http://host:8888/user/me/).`,
		);
	}
	if (!api.ok && api.status !== 401 && api.status !== 403) {
		throw new KernelStartError(`${where} answered ${api.status} ${api.statusText} at /api; is it a Jupyter Server?`);
	}
	// The kernelspecs need the token too; the kernels list is avoided (a server can fail to list a
	// kernel still starting, and many kernels start at once under a fan-out of sub-agents).
	const kernels = await probe("api/kernelspecs");
	if (kernels.status === 401 || kernels.status === 403) {
		throw new KernelStartError(
			`${where} refused the token (${kernels.status}): set JUPYTER_TOKEN (or the variable named by kernel.tokenEnv) to the server's token.`,
		);
	}
	if (!kernels.ok) {
		throw new KernelStartError(`${where} answered ${kernels.status} ${kernels.statusText} at /api/kernelspecs.`);
	}
}

/**
 * Starts a kernel of `kernelName` in `cwd` (relative to the server's root). A kernelspec the
 * server lacks is named with the ones it has.
 */
export async function startServerKernel(
	options: JupyterServerOptions,
	settings = serverSettings(options),
): Promise<ServerKernelModel> {
	const name = options.kernelName ?? "python3";
	const body: Record<string, string> = { name };
	if (options.cwd) body.path = options.cwd;
	try {
		return await KernelAPI.startNew(body as { name: string }, settings);
	} catch (error) {
		throw new KernelStartError(await describeStartError(options, settings, name, error));
	}
}

/** Kernels the server runs now. */
export async function listServerKernels(options: JupyterServerOptions): Promise<ServerKernelModel[]> {
	const settings = serverSettings(options);
	try {
		return await KernelAPI.listRunning(settings);
	} catch (error) {
		throw new KernelStartError(describeRequestError(displayUrl(options.url), "list its kernels", error));
	}
}

/** Deletes a kernel on the server; one already gone counts as deleted. */
export async function deleteServerKernel(
	options: JupyterServerOptions,
	id: string,
	settings = serverSettings(options),
): Promise<void> {
	try {
		await KernelAPI.shutdownKernel(id, settings);
	} catch (error) {
		const status = (error as { response?: Response }).response?.status;
		if (status === 404) return;
		throw new KernelStartError(describeRequestError(displayUrl(options.url), `delete kernel ${id}`, error));
	}
}

/** The server's interrupt (a signal or an interrupt_request, as the kernelspec says). */
export async function interruptServerKernel(
	options: JupyterServerOptions,
	id: string,
	settings = serverSettings(options),
): Promise<void> {
	await KernelAPI.interruptKernel(id, settings);
}

/** The server's view of one kernel, or undefined when it has none by that id. */
export async function serverKernelModel(
	options: JupyterServerOptions,
	id: string,
	settings = serverSettings(options),
): Promise<ServerKernelModel | undefined> {
	return KernelAPI.getKernelModel(id, settings);
}

async function describeStartError(
	options: JupyterServerOptions,
	settings: ServerConnection.ISettings,
	name: string,
	error: unknown,
): Promise<string> {
	const where = displayUrl(options.url);
	const response = (error as { response?: Response }).response;
	const message = error instanceof Error ? error.message : String(error);
	// Servers answer a missing kernelspec differently (404, or 500 "Unhandled error"): ask for the list.
	const names = await fetch(`${settings.baseUrl}api/kernelspecs`, { headers: authHeader(options) })
		.then(async (reply) => Object.keys(((await reply.json()) as { kernelspecs?: object }).kernelspecs ?? {}))
		.catch(() => undefined);
	if (names && !names.includes(name)) {
		return `${where} has no kernelspec named ${JSON.stringify(name)}${names.length ? ` (it has: ${names.join(", ")})` : ""}; set kernel.kernelName to one of them, or install one with \`prime-agent kernelspec install\` on that machine.`;
	}
	if (
		response &&
		(response.status === 404 || response.status === 400) &&
		options.cwd &&
		/path|director|not found/i.test(message)
	) {
		return `${where} could not start a kernel in ${JSON.stringify(options.cwd)} (${message}); kernel.cwd is a folder relative to the server's root.`;
	}
	return describeRequestError(where, `start a ${name} kernel`, error);
}

function authHeader(options: JupyterServerOptions): Record<string, string> {
	return options.token ? { Authorization: `token ${options.token}` } : {};
}

function describeRequestError(where: string, what: string, error: unknown): string {
	const response = (error as { response?: Response }).response;
	if (response?.status === 401 || response?.status === 403) {
		return `${where} refused the token (${response.status}) when asked to ${what}: set JUPYTER_TOKEN (or the variable named by kernel.tokenEnv) to the server's token.`;
	}
	if (error instanceof ServerConnection.NetworkError) return describeNetworkError(where, error);
	const message = error instanceof Error ? error.message : String(error);
	return `${where} could not ${what}: ${message}`;
}

/** Connection refused, unknown host, TLS problems: what happened and what to check. */
export function describeNetworkError(where: string, error: unknown): string {
	const cause = (error as { cause?: { code?: string; message?: string; cause?: { code?: string; message?: string } } })
		.cause;
	const inner = cause?.cause ?? cause;
	const code = inner?.code ?? cause?.code ?? "";
	const detail = inner?.message ?? (error instanceof Error ? error.message : String(error));
	if (code === "ECONNREFUSED")
		return `Cannot reach the Jupyter Server at ${where} (connection refused): is it running, and on that port?`;
	if (code === "ENOTFOUND" || code === "EAI_AGAIN")
		return `Cannot reach the Jupyter Server at ${where}: the host name does not resolve (${code}).`;
	if (/CERT|SSL|TLS|self[- ]signed/i.test(`${code} ${detail}`)) {
		return `The TLS connection to ${where} failed (${code || detail}): the server's certificate is not trusted here. Use a certificate this machine trusts, or point NODE_EXTRA_CA_CERTS at the CA that signed it.`;
	}
	if (code === "ETIMEDOUT" || code === "UND_ERR_CONNECT_TIMEOUT")
		return `The Jupyter Server at ${where} did not answer in time (${code}).`;
	return `Cannot reach the Jupyter Server at ${where}: ${code ? `${code} ` : ""}${detail}`;
}
