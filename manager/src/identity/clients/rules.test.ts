import { describe, expect, it } from "vitest";
import { type ClientProposal, defineClient, redirectUriRefusal } from "./rules.ts";

const RESOURCES = new Set(["tjm-operations", "account-portal"]);
const INTERACTIVE: ClientProposal = {
  name: "Console",
  redirectUris: ["https://console.example.com/callback"],
  postLogoutRedirectUris: [],
  backchannelLogoutUri: undefined,
  grantTypes: ["authorization_code", "refresh_token"],
  resources: ["tjm-operations"],
  projectIds: [],
  firstParty: true,
  public: false,
};
const ROBOT: ClientProposal = {
  ...INTERACTIVE,
  name: "Robot",
  redirectUris: [],
  grantTypes: ["client_credentials"],
  projectIds: ["6F1C2A90-1D7E-4F39-8B7A-1F0E2D3C4B5A"],
};

describe("defineClient", () => {
  it("derives the response types and stores project ids in lower case", () => {
    expect(defineClient(INTERACTIVE, RESOURCES)).toEqual({
      ok: true,
      value: { ...INTERACTIVE, responseTypes: ["code"] },
    });
    expect(defineClient(ROBOT, RESOURCES)).toEqual({
      ok: true,
      value: { ...ROBOT, responseTypes: [], projectIds: ["6f1c2a90-1d7e-4f39-8b7a-1f0e2d3c4b5a"] },
    });
  });

  it("names every problem by its code and field, in a stable order", () => {
    const defined = defineClient(
      {
        ...INTERACTIVE,
        redirectUris: ["http://app.example.com/cb"],
        postLogoutRedirectUris: ["https://app.example.com/#done"],
        grantTypes: ["password", "refresh_token"],
        resources: ["billing"],
        projectIds: ["not-a-uuid"],
        public: true,
      },
      RESOURCES,
    );
    expect(defined).toEqual({
      ok: false,
      problems: [
        {
          code: "client.redirect_uri_invalid",
          field: "redirectUris",
          uri: "http://app.example.com/cb",
          refusal: "not-https",
        },
        {
          code: "client.redirect_uri_invalid",
          field: "postLogoutRedirectUris",
          uri: "https://app.example.com/#done",
          refusal: "fragment",
        },
        { code: "client.grant_type_unknown", grantType: "password" },
        { code: "client.redirect_uri_without_code_grant" },
        { code: "client.logout_uri_without_code_grant" },
        { code: "client.refresh_without_code_grant" },
        { code: "client.resource_unknown", resource: "billing", known: ["tjm-operations", "account-portal"] },
        { code: "client.project_id_invalid", projectId: "not-a-uuid" },
        { code: "client.projects_need_client_credentials" },
      ],
    });
  });

  it("refuses a public client the client_credentials grant, and a code grant without a redirect URI", () => {
    expect(defineClient({ ...ROBOT, public: true }, RESOURCES)).toEqual({
      ok: false,
      problems: [{ code: "client.public_client_credentials" }],
    });
    expect(defineClient({ ...INTERACTIVE, redirectUris: [] }, RESOURCES)).toEqual({
      ok: false,
      problems: [{ code: "client.redirect_uri_required" }],
    });
  });
});

describe("redirectUriRefusal", () => {
  it.each([
    "https://app.example.com/callback",
    "https://app.example.com:8443/cb?tenant=a%20b&next=/x@y",
    "https://xn--bcher-kva.example/",
    "http://localhost:3000/cb",
    "http://127.0.0.1/cb",
    "http://[::1]:8765/cb",
  ])("takes %s", (uri) => {
    expect(redirectUriRefusal(uri)).toBeUndefined();
  });

  it.each([
    ["/callback", "not-absolute"],
    ["https://app .example.com/cb", "malformed"],
    ["https://[::1/cb", "malformed"],
    ["https://user:pw@app.example.com/cb", "userinfo"],
    ["https://app.example.com@evil.example/cb", "userinfo"],
    ["https://app.example.com/cb#", "fragment"],
    ["https://*.example.com/cb", "wildcard"],
    ["https://app.example.com/*", "wildcard"],
    ["https:/app.example.com/cb", "not-canonical"],
    ["https:app.example.com/cb", "not-canonical"],
    ["https://app.example.com/c b", "not-canonical"],
    [" https://app.example.com/cb", "not-canonical"],
    ["https://App.Example.com/cb", "not-canonical"],
    ["https://app.example.com", "not-canonical"],
    ["https://app.example.com:443/cb", "not-canonical"],
    ["https://bücher.example/", "not-canonical"],
    ["https:\\\\app.example.com\\cb", "not-canonical"],
    ["http://app.example.com/cb", "not-https"],
    ["myapp://cb", "not-https"],
  ])("refuses %j: %s", (uri, refusal) => {
    expect(redirectUriRefusal(uri)).toBe(refusal);
  });
});
