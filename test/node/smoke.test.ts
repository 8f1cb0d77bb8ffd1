import { expect, it, inject } from "vitest";
it("node", () => { expect(inject("upstashUrl")).toBe("http://127.0.0.1:1234"); });
