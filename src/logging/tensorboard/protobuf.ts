// Just enough protocol-buffer encoding for TensorBoard's Event records.

type Part = Uint8Array;

function varint(value: number | bigint): Part {
  let rest = BigInt(value);
  const bytes: number[] = [];
  do {
    let byte = Number(rest & 0x7fn);
    rest >>= 7n;
    if (rest > 0n) byte |= 0x80;
    bytes.push(byte);
  } while (rest > 0n);
  return Uint8Array.from(bytes);
}

function key(field: number, wireType: number): Part {
  return varint((field << 3) | wireType);
}

export function concat(parts: Part[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export const field = {
  double(number: number, value: number): Part {
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setFloat64(0, value, true);
    return concat([key(number, 1), bytes]);
  },
  float(number: number, value: number): Part {
    const bytes = new Uint8Array(4);
    new DataView(bytes.buffer).setFloat32(0, value, true);
    return concat([key(number, 5), bytes]);
  },
  int(number: number, value: number): Part {
    return concat([key(number, 0), varint(value)]);
  },
  bytes(number: number, value: Uint8Array): Part {
    return concat([key(number, 2), varint(value.length), value]);
  },
  string(number: number, value: string): Part {
    return field.bytes(number, new TextEncoder().encode(value));
  },
  message(number: number, parts: Part[]): Part {
    return field.bytes(number, concat(parts));
  },
};
