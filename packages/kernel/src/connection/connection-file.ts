import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The fields of a Jupyter connection file that the host uses. */
export interface ConnectionInfo {
	transport: "tcp";
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

/**
 * Writes a connection file with a random HMAC key, loopback address and every port 0. The kernel
 * binds free ports itself and writes them back into the file, so no port is ever chosen by one
 * process and bound by another (no race).
 */
export async function createConnectionFile(): Promise<PrivateConnectionFile> {
	const dir = await mkdtemp(join(tmpdir(), "prime-kernel-"));
	const path = join(dir, "connection.json");
	const key = randomBytes(32).toString("hex");
	const info: ConnectionInfo = {
		transport: "tcp",
		ip: "127.0.0.1",
		key,
		signature_scheme: "hmac-sha256",
		shell_port: 0,
		iopub_port: 0,
		control_port: 0,
		stdin_port: 0,
		hb_port: 0,
	};
	await writeFile(path, JSON.stringify(info), { mode: 0o600, flag: "wx" });
	return { dir, path, key };
}

/** The connection info once the kernel has written its bound ports, or `undefined` if not yet. */
export async function readBoundPorts(path: string, key: string): Promise<ConnectionInfo | undefined> {
	let parsed: Partial<ConnectionInfo>;
	try {
		parsed = JSON.parse(await readFile(path, "utf8"));
	} catch {
		return undefined; // not there yet, or caught half-written
	}
	if (parsed.key !== key) return undefined;
	if (!PORT_FIELDS.every((field) => Number.isInteger(parsed[field]) && (parsed[field] as number) > 0)) return undefined;
	return parsed as ConnectionInfo;
}
