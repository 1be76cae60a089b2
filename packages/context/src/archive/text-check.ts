import { isUtf8 } from "node:buffer";

/** Bytes at the end of `data` that start a UTF-8 sequence the data does not complete (0 to 3). */
export function incompleteTail(data: Uint8Array): number {
	const from = Math.max(0, data.length - 3);
	for (let i = data.length - 1; i >= from; i--) {
		const byte = data[i];
		if ((byte & 0xc0) === 0x80) continue;
		const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
		return i + needed > data.length ? data.length - i : 0;
	}
	return 0;
}

/** Output is binary when more than this share of its bytes are NUL or not valid UTF-8. */
export const BINARY_ODD_SHARE = 0.1;

/** NUL bytes plus bytes that are not valid UTF-8 (each becomes one U+FFFD when decoded). */
function oddBytesOf(data: Buffer, valid: boolean): number {
	let odd = 0;
	for (let at = data.indexOf(0); at !== -1; at = data.indexOf(0, at + 1)) odd++;
	if (!valid) {
		const text = data.toString("utf8");
		for (let at = text.indexOf("\uFFFD"); at !== -1; at = text.indexOf("\uFFFD", at + 1)) odd++;
	}
	return odd;
}

/**
 * Decides, while bytes stream past, whether they are exact text (valid UTF-8 without NUL bytes) and
 * whether they are mostly text at all. Validates without decoding; only a chunk that fails the check
 * is decoded to count its odd bytes. A sequence split between chunks is carried over.
 */
export class TextCheck {
	private carry: Buffer | null = null;
	/** Not exact text: some byte is NUL or not valid UTF-8 (the bytes are still archived exactly). */
	binary = false;
	private bytes = 0;
	private odd = 0;

	push(data: Buffer): void {
		this.bytes += data.length;
		const bytes = this.carry === null ? data : Buffer.concat([this.carry, data]);
		const cut = bytes.length - incompleteTail(bytes);
		this.carry = cut < bytes.length ? Buffer.from(bytes.subarray(cut)) : null;
		const whole = bytes.subarray(0, cut);
		const valid = isUtf8(whole);
		if (valid && !whole.includes(0)) return;
		this.binary = true;
		this.odd += oddBytesOf(whole, valid);
	}

	end(): boolean {
		if (this.carry !== null) {
			this.binary = true;
			this.odd += this.carry.length;
			this.carry = null;
		}
		return this.binary;
	}

	/**
	 * Mostly not text: more than `BINARY_ODD_SHARE` of the bytes are odd. A log with a few NUL or
	 * Latin-1 bytes is still text, shown with those bytes visibly escaped. Call after `end`.
	 */
	mostlyNotText(): boolean {
		return this.odd > this.bytes * BINARY_ODD_SHARE;
	}
}
