import { beforeAll, describe, expect, it } from "vitest";
import english from "./messages/en.json" with { type: "json" };
import { type Catalogue, catalogueFrom, loadCatalogues } from "./messages.ts";
import {
  consentPage,
  errorPage,
  escapeHtml,
  loggedOutPage,
  loginPage,
  logoutConfirmPage,
  PAGE_STYLE,
} from "./pages.ts";

let en: Catalogue;
beforeAll(async () => {
  en = (await loadCatalogues()).get("en") as Catalogue;
});

/** A right-to-left catalogue as Persian will be, with the English texts. */
const persian = catalogueFrom({ locale: "fa", direction: "rtl", messages: english.messages });

const HOSTILE = `<script>alert("x")</script>&'`;
const HOSTILE_ESCAPED = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;";

function allPages(catalogue: Catalogue): [string, string][] {
  return [
    ["login", loginPage({ catalogue, action: "/oidc/interaction/u1/login", clientName: "Portal" })],
    [
      "consent",
      consentPage({
        catalogue,
        action: "/oidc/interaction/u1/consent",
        abortAction: "/oidc/interaction/u1/abort",
        clientName: "Portal",
        scopes: ["openid"],
        resources: ["tenant"],
      }),
    ],
    ["error", errorPage({ catalogue, error: "invalid_request", description: "expired" })],
    [
      "logout confirmation",
      logoutConfirmPage({
        catalogue,
        issuer: "https://id.example",
        formHtml: `<form id="op.logoutForm" method="post" action="/oidc/session/end/confirm"></form>`,
        formId: "op.logoutForm",
      }),
    ],
    ["logged out", loggedOutPage({ catalogue, clientName: "Portal" })],
  ];
}

describe("every page", () => {
  it("is a complete document in the catalogue's language and direction, with a skip link to <main>", () => {
    for (const [, html] of allPages(en)) {
      expect(html.startsWith("<!doctype html>\n")).toBe(true);
      expect(html).toContain(`<html lang="en" dir="ltr">`);
      expect(html).toContain(`<a class="skip-link" href="#main">Skip to the main content</a>`);
      expect(html).toContain(`<main id="main">`);
      expect(html).toContain(`<style>${PAGE_STYLE}</style>`);
      expect(html.trimEnd().endsWith("</html>")).toBe(true);
    }
  });

  it("takes dir=rtl and lang from a right-to-left catalogue", () => {
    for (const [, html] of allPages(persian)) expect(html).toContain(`<html lang="fa" dir="rtl">`);
  });

  it("loads nothing from outside and runs no script", () => {
    for (const [, html] of allPages(en)) {
      expect(html).not.toMatch(/<script|<link|\ssrc=|\son[a-z]+=|javascript:/i);
    }
  });

  it("has one h1 and no other heading level", () => {
    for (const [name, html] of allPages(en)) {
      expect(html.match(/<h1[\s>]/g), name).toHaveLength(1);
      expect(html, name).not.toMatch(/<h[2-6][\s>]/);
    }
  });

  it("styles with logical properties only, so a right-to-left page is mirrored", () => {
    expect(PAGE_STYLE).not.toMatch(
      /(margin|padding|border)-(left|right)|[{;](left|right):|text-align:(left|right)/,
    );
    expect(PAGE_STYLE).toMatch(/:focus-visible\{outline:3px solid/);
  });
});

describe("escaping", () => {
  it("escapes the five characters that matter in text and attributes", () => {
    expect(escapeHtml(HOSTILE)).toBe(HOSTILE_ESCAPED);
  });

  it("renders a hostile client name, e-mail, action and scope inert", () => {
    const pages = [
      loginPage({ catalogue: en, action: `/a"${HOSTILE}`, clientName: HOSTILE, email: HOSTILE }),
      consentPage({
        catalogue: en,
        action: HOSTILE,
        abortAction: HOSTILE,
        clientName: HOSTILE,
        scopes: [HOSTILE],
        resources: [],
      }),
      errorPage({ catalogue: en, error: HOSTILE, description: HOSTILE, backHref: HOSTILE }),
      logoutConfirmPage({ catalogue: en, issuer: HOSTILE, formHtml: "", formId: HOSTILE }),
      loggedOutPage({ catalogue: en, clientName: HOSTILE }),
    ];
    for (const html of pages) {
      expect(html).not.toContain("<script>");
      expect(html).toContain(HOSTILE_ESCAPED);
    }
    expect(pages[0]).toContain(`<title>Sign in to ${HOSTILE_ESCAPED}</title>`);
    expect(pages[0]).toContain(`action="/a&quot;${HOSTILE_ESCAPED}?locale=en"`);
  });

  it("inserts the provider's logout form verbatim: it is the provider's own HTML", () => {
    const formHtml = `<form id="op.logoutForm" method="post" action="/oidc/session/end/confirm"><input type="hidden" name="xsrf" value="abc"/></form>`;
    const html = logoutConfirmPage({
      catalogue: en,
      issuer: "https://id.example",
      formHtml,
      formId: "op.logoutForm",
    });
    expect(html).toContain(formHtml);
  });
});

describe("login page", () => {
  const action = "/oidc/interaction/u1/login";

  it("offers the page in every language, each named in itself, the current one marked", () => {
    const html = loginPage({ catalogue: en, action, clientName: "Account portal" });
    const nav = /<nav class="languages" aria-label="Language"><ul>(.*?)<\/ul><\/nav>/.exec(html)?.[1];
    expect(nav).toBe(
      [
        `<li><a href="/oidc/interaction/u1?locale=en" lang="en" hreflang="en" aria-current="true">English</a></li>`,
        `<li><a href="/oidc/interaction/u1?locale=fa" lang="fa" hreflang="fa">فارسی</a></li>`,
        `<li><a href="/oidc/interaction/u1?locale=fa-AF" lang="fa-AF" hreflang="fa-AF">دری</a></li>`,
        `<li><a href="/oidc/interaction/u1?locale=ps" lang="ps" hreflang="ps">پښتو</a></li>`,
      ].join(""),
    );
    expect(PAGE_STYLE).toContain(
      `html[dir="rtl"]{font-family:"Noto Naskh Arabic","Noto Sans Arabic",Vazirmatn,Tahoma,sans-serif`,
    );
  });

  it("posts e-mail and password to the action from one submit button", () => {
    const html = loginPage({ catalogue: en, action, clientName: "Account portal" });
    expect(html.match(/<form /g)).toHaveLength(1);
    expect(html).toContain(`<form method="post" action="${action}?locale=en">`);
    expect(html).toMatch(
      /<input id="email" name="email" type="email" dir="auto" autocomplete="username" [^>]*required autofocus/,
    );
    expect(html).toMatch(
      /<input id="password" name="password" type="password" autocomplete="current-password" required/,
    );
    expect(html.match(/<button /g)).toHaveLength(1);
    expect(html).toContain(`<button type="submit" class="primary">Sign in</button>`);
    expect(html).toContain(
      `<label for="email">E-mail address <span class="required">(required)</span></label>`,
    );
    expect(html).toContain(`<label for="password">Password <span class="required">(required)</span></label>`);
    expect(html).toContain("<h1>Sign in to Account portal</h1>");
    expect(html).toContain("You are signing in to Account portal");
    expect(html).not.toContain('role="alert"');
    expect(html).not.toContain("aria-describedby");
  });

  it("announces a failure with one text for every cause, described on both fields", () => {
    const html = loginPage({
      catalogue: en,
      action,
      clientName: "Portal",
      email: "a@example.com",
      problem: "invalid-credentials",
    });
    expect(html).toContain(
      `<p id="problem" class="problem" role="alert">The e-mail address or password is not correct.</p>`,
    );
    expect(html.match(/aria-describedby="problem"/g)).toHaveLength(2);
    expect(html.match(/<input[^>]*aria-invalid="true"/g)).toHaveLength(2);
    expect(html).toContain(`value="a@example.com"`);
  });

  it.each([
    [15, "Too many failed attempts. Try again in 15 minutes."],
    [2, "Too many failed attempts. Try again in 2 minutes."],
    [1, "Too many failed attempts. Try again in a minute."],
    [0.2, "Too many failed attempts. Try again in a minute."],
    [undefined, "Too many failed attempts. Try again in a minute."],
  ])("refused after %s minutes' worth: %s", (minutes, text) => {
    const html = loginPage({
      catalogue: en,
      action,
      clientName: "Portal",
      problem: "too-many-attempts",
      retryAfterMinutes: minutes,
    });
    expect(html).toContain(`role="alert">${text}</p>`);
    expect(html.match(/aria-describedby="problem"/g)).toHaveLength(2);
    expect(html).not.toMatch(/<input[^>]*aria-invalid/);
  });
});

describe("consent page", () => {
  const page = (scopes: string[], resources: Parameters<typeof consentPage>[0]["resources"]) =>
    consentPage({
      catalogue: en,
      action: "/oidc/interaction/u1/consent",
      abortAction: "/oidc/interaction/u1/abort",
      clientName: "Render farm",
      scopes,
      resources,
    });

  it("posts decision=allow or decision=deny; deny goes to the abort action in a browser", () => {
    const html = page(["openid"], []);
    expect(html).toContain(`<form method="post" action="/oidc/interaction/u1/consent?locale=en">`);
    expect(html).toMatch(
      /<button type="submit" class="primary" name="decision" value="allow">Allow<\/button>/,
    );
    expect(html).toMatch(
      /<button type="submit" class="secondary" name="decision" value="deny" formaction="\/oidc\/interaction\/u1\/abort\?locale=en">Deny<\/button>/,
    );
    expect(html).toContain("<h1>Render farm wants to access your account</h1>");
  });

  it("lists each resource and scope once, in words, and names a scope it has no words for", () => {
    const html = page(
      ["openid", "email", "profile", "offline_access", "openid", "jobs:read"],
      ["operations", "account-portal", "admin-console", "tenant", "tenant"],
    );
    const main = html.slice(html.indexOf("<main"), html.indexOf("</main>"));
    const items = [...main.matchAll(/<li>(.*?)<\/li>/g)].map((match) => match[1]);
    expect(items).toEqual([
      english.messages["consent.resource.operations"],
      english.messages["consent.resource.account-portal"],
      english.messages["consent.resource.admin-console"],
      english.messages["consent.resource.tenant"],
      english.messages["consent.scope.openid"],
      english.messages["consent.scope.email"],
      english.messages["consent.scope.profile"],
      english.messages["consent.scope.offline_access"],
      "Use the permission jobs:read",
    ]);
  });

  it("gives no words to a scope named like an object's property", () => {
    expect(page(["constructor"], [])).toContain("<li>Use the permission constructor</li>");
  });
});

describe("error, logout and logged-out pages", () => {
  it("shows the error and its description, and a way on", () => {
    const html = errorPage({ catalogue: en, error: "invalid_request", description: "the sign-in expired" });
    expect(html).toContain("<p>invalid_request: the sign-in expired</p>");
    expect(html).toContain(`<p>${english.messages["error.startAgain"]}</p>`);
    expect(errorPage({ catalogue: en, error: "server_error" })).toContain("<p>server_error</p>");
    expect(errorPage({ catalogue: en, error: "x", backHref: "/portal" })).toContain(
      `<a href="/portal">Go back</a>`,
    );
  });

  it("asks before signing out, both buttons submitting the provider's form", () => {
    const html = logoutConfirmPage({
      catalogue: en,
      issuer: "https://id.example",
      formHtml: "",
      formId: "op.logoutForm",
    });
    expect(html).toContain("<h1>Sign out of https://id.example?</h1>");
    expect(html).toContain(
      `<button type="submit" class="primary" form="op.logoutForm" name="logout" value="yes" autofocus>Yes, sign me out</button>`,
    );
    expect(html).toContain(
      `<button type="submit" class="secondary" form="op.logoutForm">No, stay signed in</button>`,
    );
  });

  it("says the person is signed out, of which client when known", () => {
    expect(loggedOutPage({ catalogue: en, clientName: "Portal" })).toContain(
      "<p>You have signed out of Portal.</p>",
    );
    expect(loggedOutPage({ catalogue: en })).not.toContain("signed out of");
  });
});
