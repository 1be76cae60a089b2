import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The fields of a Jupyter connection file that the host uses. */
export interface ConnectionInfo {
	/**
	 * `ipc`: Unix sockets at `<ip>-<port>` inside the private connection directory, so no other
	 * user can even connect. `tcp` on loopback only where IPC is unavailable.
	 */
	transport: "tcp" | "ipc";
	/** The loopback address (tcp), or the socket path prefix (ipc). */
	ip: string;
	key: string;
	signature_scheme: "hmac-sha256";
	shell_port: number;
	iopub_port: number;
	control_port: number;
	stdin_port: number;
	hb_port: number;
}

const PORT_FIELDS = ["shell_port", "iopub_port", "control_port", "stdin_port", "hb_port"] as const;

/** A connection file in a private directory (0700) readable by the user only (0600). */
export interface PrivateConnectionFile {
	dir: string;
	path: string;
	key: string;
}

/** Longest Unix socket path the platforms we run on accept (macOS: 104 bytes with the NUL). */
const MAX_SOCKET_PATH = 103;

/**
 * Writes a connection file with a random HMAC key in a fresh 0700 directory. Where Unix sockets
 * are available the channels are IPC sockets in that same directory (ports 1-5 name them: the
 * directory is this kernel's alone, so nothing can race for them); otherwise TCP on loopback with
 * every port 0, so the kernel binds free ports itself and writes them back into the file (no race
 * between choosing a port and binding it).
 */
export async function createConnectionFile(): Promise<PrivateConnectionFile> {
	const dir = await mkdtemp(join(tmpdir(), "prime-kernel-"));
	const path = join(dir, "connection.json");
	const key = randomBytes(32).toString("hex");
	const socketPrefix = join(dir, "k");
	const ipc = process.platform !== "win32" && Buffer.byteLength(`${socketPrefix}-5`) <= MAX_SOCKET_PATH;
	const info: ConnectionInfo = {
		transport: ipc ? "ipc" : "tcp",
		ip: ipc ? socketPrefix : "127.0.0.1",
		key,
		signature_scheme: "hmac-sha256",
		shell_port: ipc ? 1 : 0,
		iopub_port: ipc ? 2 : 0,
		control_port: ipc ? 3 : 0,
		stdin_port: ipc ? 4 : 0,
		hb_port: ipc ? 5 : 0,
	};
	await writeFile(path, JSON.stringify(info), { mode: 0o600, flag: "wx" });
	return { dir, path, key };
}

/** The ZeroMQ address of one channel. */
export function channelAddress(info: ConnectionInfo, port: number): string {
	return info.transport === "ipc" ? `ipc://${info.ip}-${port}` : `tcp://${info.ip}:${port}`;
}

/** The connection info once the kernel has bound its sockets (and written their ports), or `undefined` if not yet. */
export async function readBoundPorts(path: string, key: string): Promise<ConnectionInfo | undefined> {
	let parsed: Partial<ConnectionInfo>;
	try {
		parsed = JSON.parse(await readFile(path, "utf8"));
	} catch {
		return undefined; // not there yet, or caught half-written
	}
	if (parsed.key !== key) return undefined;
	if (!PORT_FIELDS.every((field) => Number.isInteger(parsed[field]) && (parsed[field] as number) > 0)) return undefined;
	const info = parsed as ConnectionInfo;
	// Connecting to a Unix socket the kernel has not bound yet fails, and zeromq retries only
	// 100 ms later: wait until the kernel has bound them all, as with TCP ports.
	if (info.transport === "ipc" && !PORT_FIELDS.every((field) => existsSync(`${info.ip}-${info[field]}`))) {
		return undefined;
	}
	return info;
}
