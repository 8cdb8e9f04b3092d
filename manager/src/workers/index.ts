import { createRouter } from "../platform/http.ts";
import { createChallenge, createChallengeRoute } from "./challenge.ts";
import type { WorkersDeps } from "./deps.ts";
import { disableWorkerHandler, disableWorkerRoute } from "./disable.ts";
import { drainWorkerHandler, drainWorkerRoute } from "./drain.ts";
import { getWorkerHandler, getWorkerRoute } from "./get.ts";
import { listWorkersHandler, listWorkersRoute } from "./list.ts";
import { reRegisterWorker, reRegisterWorkerRoute } from "./re-registration.ts";
import { refreshCredentials, refreshCredentialsRoute } from "./refresh-credentials.ts";
import { registerWorker, registerWorkerRoute } from "./registration.ts";
import { undrainWorkerHandler, undrainWorkerRoute } from "./undrain.ts";

/** Worker-facing routes, mounted under /api/v1/worker; Workers prove themselves by token or NKey. */
export function workerApp(deps: WorkersDeps) {
  return createRouter()
    .openapi(registerWorkerRoute, registerWorker(deps))
    .openapi(createChallengeRoute, createChallenge(deps))
    .openapi(reRegisterWorkerRoute, reRegisterWorker(deps))
    .openapi(refreshCredentialsRoute, refreshCredentials(deps));
}

/** Operator routes, mounted under /api/v1/operations behind operator auth. */
export function workersOperationsApp(deps: WorkersDeps) {
  return createRouter()
    .openapi(listWorkersRoute, listWorkersHandler(deps))
    .openapi(getWorkerRoute, getWorkerHandler(deps))
    .openapi(drainWorkerRoute, drainWorkerHandler(deps))
    .openapi(undrainWorkerRoute, undrainWorkerHandler(deps))
    .openapi(disableWorkerRoute, disableWorkerHandler(deps));
}

export { CommandConsumerKeeper } from "./consumer.ts";
export { type CredentialIssuer, createCredentialIssuer } from "./credentials.ts";
export type { WorkersDeps } from "./deps.ts";
export { WorkerMonitor } from "./monitor.ts";
export type { WorkerLifecycleHooks } from "./store.ts";
export type { WorkerStatistic } from "./view.ts";
