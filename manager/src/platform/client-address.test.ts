import { describe, expect, it } from "vitest";
import { clientAddress } from "./client-address.ts";

describe("clientAddress", () => {
  it("is the socket's address when no proxy is trusted, whatever X-Forwarded-For says", () => {
    expect(clientAddress("203.0.113.9", "198.51.100.1", [])).toBe("203.0.113.9");
  });

  it("reads X-Forwarded-For from the right past trusted proxies only", () => {
    expect(clientAddress("10.0.0.2", "198.51.100.1, 203.0.113.7", ["10.0.0.2"])).toBe("203.0.113.7");
    expect(clientAddress("10.0.0.2", "198.51.100.1, 203.0.113.7, 10.0.0.3", ["10.0.0.2", "10.0.0.3"])).toBe(
      "203.0.113.7",
    );
  });

  it("does not believe a forwarded address from an untrusted socket", () => {
    expect(clientAddress("203.0.113.9", "127.0.0.1", ["10.0.0.2"])).toBe("203.0.113.9");
  });

  it("stops at a malformed hop and keeps the last trustworthy address", () => {
    expect(clientAddress("10.0.0.2", "not-an-ip", ["10.0.0.2"])).toBe("10.0.0.2");
  });

  it("unwraps IPv4-mapped IPv6 socket addresses", () => {
    expect(clientAddress("::ffff:10.0.0.2", "203.0.113.7", ["10.0.0.2"])).toBe("203.0.113.7");
  });
});
