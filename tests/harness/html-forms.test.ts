import { alertText, parseForms, unescapeHtml } from "@tjm/devstack/oidc-client";
import { describe, expect, it } from "vitest";

const PAGE_URL = "http://127.0.0.1:4000/oidc/interaction/uid-1";

describe("parseForms", () => {
  it("resolves the action against the page and decodes its entities", () => {
    const html = `<form method="POST" action="login?a=1&amp;b=2"><input name="email"></form>`;
    const [form] = parseForms(html, PAGE_URL);
    expect(form?.action).toBe("http://127.0.0.1:4000/oidc/interaction/login?a=1&b=2");
    expect(form?.method).toBe("post");
  });

  it("takes an absolute-path action, and the page itself when there is none", () => {
    const forms = parseForms(
      `<form action='/oidc/interaction/uid-1/login' method=post></form><form method="post"></form>`,
      PAGE_URL,
    );
    expect(forms.map((form) => form.action)).toEqual([`${PAGE_URL}/login`, PAGE_URL]);
  });

  it("collects the fields a browser submits and the named submit buttons apart", () => {
    const html = `
      <form method="post" action="/oidc/interaction/uid-1/login">
        <input type="hidden" name="csrf" value="t&#x27;k&#39;n">
        <input type="email" name="email" autocomplete="username" required>
        <input type="password" name="password">
        <input type="checkbox" name="remember">
        <input type="checkbox" name="agreed" checked value="yes">
        <input type="submit" value="Sign in">
        <button type="submit" name="decision" value="allow">Allow</button>
        <button name="decision" value="deny">Deny</button>
      </form>`;
    const [form] = parseForms(html, PAGE_URL);
    expect(form?.fields).toEqual({ csrf: "t'k'n", email: "", password: "", agreed: "yes" });
    expect(form?.submits).toEqual([
      { name: "decision", value: "allow" },
      { name: "decision", value: "deny" },
    ]);
  });

  it("finds no form on a page without one", () => {
    expect(parseForms("<p>Signed out.</p>", PAGE_URL)).toEqual([]);
  });
});

describe("alertText", () => {
  it("reads the alert's text without its markup", () => {
    const html = `<main><h1>Sign in</h1>
      <div class="problem" role="alert"><p>Wrong e-mail   or <strong>password</strong>.</p>
      <div>Try again &amp; again.</div></div>
      <form method="post"></form></main>`;
    expect(alertText(html)).toBe("Wrong e-mail or password . Try again & again.");
  });

  it("is undefined on a page without an alert", () => {
    expect(alertText(`<main><p role="status">Welcome</p></main>`)).toBeUndefined();
  });
});

describe("unescapeHtml", () => {
  it.each([
    ["a &amp; b", "a & b"],
    ["&lt;tag&gt; &quot;q&quot; &apos;", `<tag> "q" '`],
    ["&#233;&#xE9;", "éé"],
    ["&unknown; &amp", "&unknown; &amp"],
  ])("%s → %s", (escaped, plain) => {
    expect(unescapeHtml(escaped)).toBe(plain);
  });
});
