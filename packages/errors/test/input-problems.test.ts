import { describe, expect, it } from "vitest";
import { inputProblems, invalidInput } from "../src/index.js";

describe("input problems", () => {
  it("names each unknown key on its own and every other issue by its dotted path", () => {
    const issues = [
      { code: "too_big", path: ["content"], message: "Too big" },
      { code: "unrecognized_keys", path: [], keys: ["contnet", "bogus"], message: 'Unrecognized keys: "contnet", "bogus"' },
      { code: "unrecognized_keys", path: ["asOf"], keys: ["when"], message: "x" },
      { code: "invalid_type", path: ["tags", 0], message: "Invalid input" },
      { code: "custom", path: [], message: "whole input" },
    ];
    expect(inputProblems(issues)).toEqual([
      { field: "content", message: "Too big" },
      { field: "contnet", message: "unrecognized key" },
      { field: "bogus", message: "unrecognized key" },
      { field: "asOf.when", message: "unrecognized key" },
      { field: "tags.0", message: "Invalid input" },
      { field: "input", message: "whole input" },
    ]);
  });

  it("makes the first problem the invalid_input error's field", () => {
    const unknown = { code: "unrecognized_keys", path: [], keys: ["lmit"], message: "m" };
    const err = invalidInput([unknown]);
    expect(err).toMatchObject({ reason: "invalid_input", message: "lmit: unrecognized key", details: { field: "lmit" } });
    expect(invalidInput([]).message).toBe("invalid input");
  });
});
