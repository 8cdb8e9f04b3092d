/**
 * RP-initiated logout on oidc-provider's context: what the request holds for the decision
 * (logout.ts), and ending the session when it says so, from the logoutSource hook, which
 * end_session calls after it has validated the hint and set the session's logout state.
 */
import type { KoaContextWithOIDC } from "oidc-provider";
import { confirm } from "oidc-provider/lib/actions/end_session.js";
import type { LogoutRequest } from "./logout.ts";

/** What the logout request holds, as oidc-provider's end_session has checked it. */
export function logoutRequestOf(ctx: KoaContextWithOIDC): LogoutRequest {
  const client = ctx.oidc.client as
    | (KoaContextWithOIDC["oidc"]["client"] & { first_party?: unknown })
    | undefined;
  const session = ctx.oidc.session;
  return {
    firstParty: client?.first_party === true,
    hint: ctx.oidc.entities.IdTokenHint?.payload,
    session: {
      accountId: session?.accountId,
      sid: client && session ? session.sidFor(client.clientId) : undefined,
    },
  };
}

// The confirmation's own last step, which ends the session as its "yes" does: back-channel
// logouts, every grant of the session revoked, the session and its cookie gone, the redirect to
// the post-logout URI with its state, and the end_session.success event (the audit row). TJM
// does not write that protocol again; oidc-provider exports no API for it (the version is pinned
// and tests/provider/logout.test.ts checks the outcome).
const endSessionStep = confirm.find((step) => step.name === "endSession") ?? missingEndSessionStep();

function missingEndSessionStep(): never {
  throw new Error(
    "oidc-provider's end_session.js has no endSession step: provider/end-session.ts needs updating",
  );
}

/** Ends the browser's whole provider session, as the confirmation page's "yes" would. */
export async function endSessionAsConfirmed(ctx: KoaContextWithOIDC): Promise<void> {
  // end_session read its own parameters; `logout` is the "yes" button's field.
  (ctx.oidc.params as Record<string, unknown>).logout = "yes";
  await endSessionStep(ctx, async () => undefined);
}
