import { LOCALES } from "@tjm/platform/locale";
import { beforeAll, describe, expect, it } from "vitest";
import type { Factor } from "../../identity/factors/index.ts";
import { type Catalogue, loadCatalogues } from "./messages.ts";
import { secondFactorPage } from "./second-factor-pages.ts";

const FACTORS: Factor[] = [
  { id: "f1", type: "totp", maskedDestination: null, createdAt: new Date(), lastUsedAt: null },
  { id: "f2", type: "sms", maskedDestination: "+98•••••••89", createdAt: new Date(), lastUsedAt: null },
];
let catalogues: Map<string, Catalogue>;
beforeAll(async () => {
  catalogues = await loadCatalogues();
});

const render = (locale: string, extra = {}) =>
  secondFactorPage({
    catalogue: catalogues.get(locale) as Catalogue,
    action: "/oidc/interaction/uid-1/second-factor",
    sendAction: "/oidc/interaction/uid-1/second-factor/code",
    factors: FACTORS,
    recoveryCodesRemaining: 3,
    ...extra,
  });

describe("the second step's page", () => {
  it.each(LOCALES)("offers each factor, a send button for SMS and a recovery code, in %s", (locale) => {
    const html = render(locale);
    const catalogue = catalogues.get(locale) as Catalogue;
    expect(html).toContain(`lang="${locale}" dir="${catalogue.direction}"`);
    expect([...html.matchAll(/name="method" value="([^"]+)"/g)].map((match) => match[1])).toEqual([
      "totp:f1",
      "sms:f2",
      "recovery",
      "sms:f2",
    ]);
    expect(html).toContain('formaction="/oidc/interaction/uid-1/second-factor/code?locale=');
    expect(html).toContain(catalogue.text("factor.heading"));
    expect(html).toContain('autocomplete="one-time-code"');
  });

  it.each(LOCALES)("says in %s that a code was already used and to wait for the next one", (locale) => {
    const catalogue = catalogues.get(locale) as Catalogue;
    const html = render(locale, { problem: "code-used", selected: "totp:f1" });
    expect(html).toContain(catalogue.text("factor.codeUsed"));
    expect(html).not.toContain(catalogue.text("factor.wrongCode"));
    expect(html).toContain('role="alert"');
  });

  it("announces a wrong code and leaves out recovery when none remain", () => {
    const html = render("fa", { recoveryCodesRemaining: 0, problem: "wrong-code", selected: "sms:f2" });
    expect(html).toContain('role="alert"');
    expect(html).toContain('value="sms:f2" checked');
    expect(html).not.toContain('value="recovery"');
  });
});
