/**
 * The types of `./intl-messageformat.js`, which the page imports by that name: assets.ts serves
 * the package's own ES module there, so the types are the package's.
 */
export { IntlMessageFormat } from "intl-messageformat";
