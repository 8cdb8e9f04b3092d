import { beforeAll, describe, expect, it } from "vitest";
import { type Catalogue, loadCatalogues } from "./messages.ts";
import { codePage, identifierPage, passwordPage, recoveryDonePage } from "./recovery-pages.ts";

let en: Catalogue;
let ps: Catalogue;

beforeAll(async () => {
  const catalogues = await loadCatalogues();
  en = catalogues.get("en") as Catalogue;
  ps = catalogues.get("ps") as Catalogue;
});

describe("the recovery pages", () => {
  it("are right to left in Pashto, with the language switch on the identifier page and the locale kept in the form", () => {
    const html = identifierPage({ catalogue: ps, action: "/oidc/interaction/u1/recovery" });
    expect(html).toContain('<html lang="ps" dir="rtl">');
    expect(html).toContain('action="/oidc/interaction/u1/recovery?locale=ps"');
    expect(html).toContain('href="/oidc/interaction/u1/recovery?locale=fa-AF"');
    expect(html).toContain('<input type="radio" name="channel" value="EMAIL" checked>');
  });

  it("renders a hostile identifier inert on the code page, and asks for a new code on the identifier page", () => {
    const identifier = `"><script>alert(1)</script>`;
    const html = codePage({
      catalogue: en,
      action: "/oidc/interaction/u1/recovery/code",
      restartHref: "/oidc/interaction/u1/recovery",
      identifier,
      channel: "SMS",
    });
    expect(html).not.toContain("<script>");
    expect(html).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(html).toContain('autocomplete="one-time-code"');
    expect(html).toContain('href="/oidc/interaction/u1/recovery?locale=en"');
  });

  it("carries the recovery token only in the form's body, and ends every session unless unchecked", () => {
    const html = passwordPage({
      catalogue: en,
      action: "/oidc/interaction/u1/recovery/password",
      recoveryToken: "tjm_rt_secret",
      problems: ["common"],
    });
    expect(html.match(/tjm_rt_secret/g)).toHaveLength(1);
    expect(html).toContain('<input type="hidden" name="recovery_token" value="tjm_rt_secret">');
    expect(html).toContain('action="/oidc/interaction/u1/recovery/password?locale=en"');
    expect(html).toContain('name="revoke_sessions" value="yes" checked');
    expect(html).toContain("This password is among the most common ones.");
  });

  it("ends with the way back to sign-in, or says the reset is spent", () => {
    expect(recoveryDonePage({ catalogue: en, signInHref: "/oidc/interaction/u1" })).toContain(
      'href="/oidc/interaction/u1?locale=en"',
    );
    expect(
      recoveryDonePage({ catalogue: en, signInHref: "/oidc/interaction/u1", tokenInvalid: true }),
    ).toContain('role="alert">This password reset has expired or was already used.');
  });
});
