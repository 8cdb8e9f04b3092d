/**
 * The ids of the elements the console's views write (views.ts and the files it calls, on the
 * server) and the page's scripts find (in the browser): both import them from here, so a renamed
 * or misspelt id fails the type check on both sides instead of at run time in a browser. Served
 * as an asset like the scripts; plain JavaScript because both sides load it as it is.
 */

export const ids = /** @type {const} */ ({
  // The frame of every console view (pages/layout.ts).
  consoleMessages: "console-messages",
  signOut: "sign-out",
  liveNotice: "live-notice",
  viewStatus: "view-status",
  actionResult: "action-result",

  // The pager under a list view's table.
  pagerPrevious: "pager-previous",
  pagerPosition: "pager-position",
  pagerNext: "pager-next",

  // Jobs and one job.
  jobFilters: "job-filters",
  jobsTable: "jobs-table",
  jobSections: "job-sections",
  jobSummary: "job-summary",
  jobProgress: "job-progress",
  jobActions: "job-actions",
  outputsStatus: "outputs-status",
  outputsTable: "outputs-table",
  manifestStatus: "manifest-status",
  jobManifest: "job-manifest",
  attemptsTable: "attempts-table",
  logStatus: "log-status",
  attemptLog: "attempt-log",
  jobPlan: "job-plan",

  // The submit form.
  submitErrors: "submit-errors",
  submitForm: "submit-form",
  template: "template",
  projectId: "project-id",
  priority: "priority",
  inputUri: "input-uri",
  manifestUri: "manifest-uri",
  removedSegments: "removed-segments",
  outputs: "outputs",
  addOutput: "add-output",

  // Workers and enrollment.
  workersTable: "workers-table",
  enrollmentForm: "enrollment-form",
  tokenLabel: "token-label",
  issuedToken: "issued-token",
  tokenValue: "token-value",
  copyToken: "copy-token",
  tokenDetails: "token-details",
  copyResult: "copy-result",

  // The account page.
  avatarImage: "avatar-image",
  noAvatar: "no-avatar",
  avatarForm: "avatar-form",
  avatarFile: "avatar-file",
  removeAvatar: "remove-avatar",
  profileForm: "profile-form",
  genderDescriptionField: "gender-description-field",
  identifiersSummary: "identifiers-summary",
  identifiersForm: "identifiers-form",
  codeForm: "code-form",
  codeIntro: "code-intro",
  cancelChange: "cancel-change",
  passwordForm: "password-form",
  mfaTable: "mfa-table",
  mfaRemaining: "mfa-remaining",
  mfaRevoke: "mfa-revoke",
  mfaRegenerate: "mfa-regenerate",
  mfaTotp: "mfa-totp",
  mfaQr: "mfa-qr",
  mfaSecret: "mfa-secret",
  mfaCodeForm: "mfa-code-form",
  mfaCodeIntro: "mfa-code-intro",
  mfaCode: "mfa-code",
  mfaCancel: "mfa-cancel",
  mfaRecovery: "mfa-recovery",
  mfaRecoveryList: "mfa-recovery-list",
  mfaPrint: "mfa-print",
  mfaSaved: "mfa-saved",
  mfaPrintSheet: "mfa-print-sheet",
  sessionsTable: "sessions-table",
  revokeOthers: "revoke-others",
  rememberedList: "remembered-list",
  anotherAccount: "another-account",
  appsList: "apps-list",
  developerAppsList: "developer-apps-list",
  developerAppGrace: "developer-app-grace",
  developerAppSecret: "developer-app-secret",
  developerAppSecretHeading: "developer-app-secret-heading",
  developerAppSecretValue: "developer-app-secret-value",
  developerAppForm: "developer-app-form",
  developerAppFormLegend: "developer-app-form-legend",
  developerAppCancel: "developer-app-cancel",
  deleteForm: "delete-form",

  // Client management.
  clientFilters: "client-filters",
  clientsTable: "clients-table",
  newClient: "new-client",
  clientSecret: "client-secret",
  clientSecretHeading: "client-secret-heading",
  clientSecretValue: "client-secret-value",
  clientForm: "client-form",
  cancelEdit: "cancel-edit",
  clientActions: "client-actions",
  clientGrace: "client-grace",
  rotateSecret: "rotate-secret",
  deleteClient: "delete-client",
  grantsTable: "grants-table",
  grantForm: "grant-form",
});

/**
 * The sections of the account page and of the clients view. A section's name is its element's
 * id and the start of its heading's, its status line's and its sign-in-again offer's (the
 * functions below), and the fragment a sign-in again comes back to.
 */
export const sections = /** @type {const} */ ({
  profile: "profile",
  identifiers: "identifiers",
  password: "password",
  mfa: "mfa",
  sessions: "sessions",
  remembered: "remembered",
  apps: "apps",
  developerApps: "developer-apps",
  logout: "logout",
  delete: "delete",
  editor: "editor",
  grants: "grants",
});

/** @typedef {typeof sections[keyof typeof sections]} Section */

/** @param {Section} section */
export const headingId = (section) => `${section}-heading`;

/** @param {Section} section */
export const statusId = (section) => `${section}-status`;

/** @param {Section} section */
export const reauthId = (section) => `${section}-reauth`;

/**
 * The list under a form field where its problems are shown (the field's `aria-describedby`).
 * @param {string} fieldId
 */
export const errorsId = (fieldId) => `${fieldId}-errors`;

/**
 * The section `name` names (a fragment of the address), if it is one.
 * @param {string} name
 * @returns {name is Section}
 */
export function isSection(name) {
  return Object.values(sections).some((section) => section === name);
}
