export { PROTOCOL_VERSION } from "./version.ts";
