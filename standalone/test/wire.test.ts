/** Splitting a PostgreSQL client's bytes into messages, and reading where a backend reply leaves the session. */
import { describe, expect, it } from "vitest";
import { MessageReader, endingTransactionStatus, startupParameters } from "../src/db/wire.js";

const typed = (type: string, body: string) => {
  const out = Buffer.alloc(5 + Buffer.byteLength(body));
  out.write(type, 0, "latin1");
  out.writeUInt32BE(4 + Buffer.byteLength(body), 1);
  out.write(body, 5);
  return out;
};

describe("the wire protocol reader", () => {
  it("reads a startup packet, then typed messages, however the bytes are cut", () => {
    const params = Buffer.from("user\0postgres\0database\0postgres\0\0");
    const startup = Buffer.alloc(8);
    startup.writeUInt32BE(8 + params.length, 0);
    startup.writeUInt32BE(196_608, 4);
    const stream = Buffer.concat([startup, params, typed("P", "\0SELECT 1\0\0\0"), typed("S", "")]);
    const reader = new MessageReader();
    const seen: Array<string | null> = [];
    for (let i = 0; i < stream.length; i += 3) {
      reader.push(stream.subarray(i, i + 3));
      for (let m = reader.next(); m; m = reader.next()) {
        seen.push(m.type);
        if (m.type === null) {
          expect(startupParameters(m).get("user")).toBe("postgres");
          reader.startupDone();
        }
      }
    }
    expect(seen).toEqual([null, "P", "S"]);
  });

  it("refuses a length no client sends", () => {
    const reader = new MessageReader();
    reader.push(Buffer.from([0, 0, 0, 2, 0, 0, 0, 0]));
    expect(() => reader.next()).toThrow(/invalid message length/);
  });

  it("reads the transaction status a reply ends with, even split across chunks", () => {
    const ready = (status: string) => typed("Z", status);
    expect(endingTransactionStatus([typed("C", "SELECT 1\0"), ready("I")])).toBe("I");
    const split = Buffer.concat([typed("C", "BEGIN\0"), ready("T")]);
    expect(endingTransactionStatus([split.subarray(0, split.length - 4), split.subarray(-4, -1), split.subarray(-1)])).toBe("T");
    // After a Flush the reply stops without ReadyForQuery: the exchange is still open.
    expect(endingTransactionStatus([typed("1", "")])).toBeNull();
    expect(endingTransactionStatus([])).toBeNull();
  });
});
