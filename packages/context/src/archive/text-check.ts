import { isUtf8 } from "node:buffer";

/** Bytes at the end of `data` that start a UTF-8 sequence the data does not complete (0 to 3). */
function incompleteTail(data: Uint8Array): number {
	const from = Math.max(0, data.length - 3);
	for (let i = data.length - 1; i >= from; i--) {
		const byte = data[i];
		if ((byte & 0xc0) === 0x80) continue;
		const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
		return i + needed > data.length ? data.length - i : 0;
	}
	return 0;
}

/**
 * Decides, while bytes stream past, whether they are text: valid UTF-8 without NUL bytes. Validates
 * without decoding; a sequence split between chunks is carried over and checked with the next one.
 */
export class TextCheck {
	private carry: Buffer | null = null;
	binary = false;

	push(data: Buffer): void {
		if (this.binary) return;
		if (data.includes(0)) {
			this.binary = true;
			return;
		}
		const bytes = this.carry === null ? data : Buffer.concat([this.carry, data]);
		const cut = bytes.length - incompleteTail(bytes);
		this.carry = cut < bytes.length ? Buffer.from(bytes.subarray(cut)) : null;
		if (!isUtf8(bytes.subarray(0, cut))) this.binary = true;
	}

	end(): boolean {
		if (this.carry !== null) this.binary = true;
		return this.binary;
	}
}
