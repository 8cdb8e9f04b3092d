import { describe, expect, it } from "vitest";
import { grantScopes, type SessionPayload, sessionSids, signedInClients, withoutClient } from "./payload.ts";

const session: SessionPayload = {
  uid: "u1",
  accountId: "a1",
  loginTs: 1_700_000_000,
  authorizations: {
    "client-b": { sid: "sid-b", grantId: "grant-b" },
    "client-a": { sid: "sid-a", grantId: "grant-a", persistsLogout: false },
    "client-c": {},
  },
};

describe("a provider session's payload", () => {
  it("hands out one sid per client that holds one", () => {
    expect(sessionSids(session).sort()).toEqual(["sid-a", "sid-b"]);
    expect(sessionSids({})).toEqual([]);
  });

  it("lists its clients by id with their sid and grant", () => {
    expect(signedInClients(session)).toEqual([
      { clientId: "client-a", sid: "sid-a", grantId: "grant-a" },
      { clientId: "client-b", sid: "sid-b", grantId: "grant-b" },
      { clientId: "client-c", sid: undefined, grantId: undefined },
    ]);
  });

  it("without one client keeps everything else, the other clients' sids included", () => {
    const rest = withoutClient(session, "client-a");
    expect(rest).toEqual({
      ...session,
      authorizations: { "client-b": session.authorizations?.["client-b"], "client-c": {} },
    });
    expect(sessionSids(rest)).toEqual(["sid-b"]);
    expect(session.authorizations).toHaveProperty("client-a");
  });
});

describe("a grant's payload", () => {
  it("reads its OpenID scopes and its scopes per resource", () => {
    expect(
      grantScopes({ openid: { scope: "openid email" }, resources: { "urn:tjm:ops": "access" } }),
    ).toEqual({ openid: ["openid", "email"], resources: { "urn:tjm:ops": ["access"] } });
    expect(grantScopes({})).toEqual({ openid: [], resources: {} });
  });
});
