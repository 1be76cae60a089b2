import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { linkSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stateManifestPath } from "prime-agent-kernel";
import { PRIVATE_FILE_MODE, STATE_KEY_FILE, writeFileAtomically } from "../home/index.js";

/** The seal beside a snapshot's manifest. */
export const STATE_SEAL = "manifest.seal";

/** The seal of the latest manifest, or of the one kept for `entry` (`entries/<entry>.seal`). */
function sealPath(stateDir: string, entry?: string): string {
	return entry === undefined
		? join(stateDir, STATE_SEAL)
		: stateManifestPath(stateDir, entry).replace(/\.json$/, ".seal");
}

/** The agent home's sealing key. */
export function stateKeyPath(agentHome: string): string {
	return join(agentHome, STATE_KEY_FILE);
}

/**
 * Proof that a kernel-state snapshot was saved by this agent home. A snapshot is pickled Python:
 * loading it runs whatever code it holds, so one copied from elsewhere (a shared folder, a download,
 * another user's home) must never be loaded. Every save seals the manifest with an HMAC keyed by a
 * secret of the agent home (`kernel-state.key`, private, made on the first save); a restore checks
 * the seal first. The manifest names each variable file by its SHA-256, which the restore checks
 * before loading it, so the seal covers every pickle as well.
 */
export class StateSeal {
	/** @param keyPath The key file in the agent home. */
	constructor(private readonly keyPath: string) {}

	/**
	 * Seal the manifest a save just wrote in `stateDir` (the latest, or the one kept for `entry`).
	 * Throws when it cannot (the save is then reported failed).
	 */
	sign(stateDir: string, entry?: string): void {
		const seal = this.mac(readFileSync(stateManifestPath(stateDir, entry)), this.key(true) as Buffer);
		writeFileAtomically(sealPath(stateDir, entry), seal, PRIVATE_FILE_MODE);
	}

	/** Whether a manifest in `stateDir` carries this home's seal (false without a key, a seal or a manifest). */
	check(stateDir: string, entry?: string): boolean {
		const key = this.key(false);
		if (!key) return false;
		try {
			const expected = Buffer.from(this.mac(readFileSync(stateManifestPath(stateDir, entry)), key));
			const found = readFileSync(sealPath(stateDir, entry));
			return found.length === expected.length && timingSafeEqual(found, expected);
		} catch {
			return false;
		}
	}

	private mac(manifest: Buffer, key: Buffer): string {
		return createHmac("sha256", key).update(manifest).digest("hex");
	}

	/** The home's key; made (once, by whichever process comes first) when `create` is set. */
	private key(create: boolean): Buffer | undefined {
		try {
			return Buffer.from(readFileSync(this.keyPath, "utf8").trim(), "hex");
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
				if (create) throw error;
				return undefined;
			}
			if (!create) return undefined;
		}
		// Written whole, then linked into place: a process reading the key never sees half of it, and
		// when two make one at once the first link wins and both use it.
		const temp = `${this.keyPath}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
		try {
			writeFileSync(temp, randomBytes(32).toString("hex"), { mode: PRIVATE_FILE_MODE, flag: "wx" });
			linkSync(temp, this.keyPath);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
		} finally {
			rmSync(temp, { force: true });
		}
		return Buffer.from(readFileSync(this.keyPath, "utf8").trim(), "hex");
	}
}
