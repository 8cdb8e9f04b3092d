/**
 * compose.yaml and deploy/ checked without Docker (there is no engine where the suite runs): the
 * file against the Compose Specification's JSON schema, every build context, Dockerfile, script
 * and file it names, every service's environment against the configuration its process parses,
 * the files one-shots hand to other services, and the Dockerfiles against the repository. No
 * image is built and no container started; docs/operations.md, "Deploying with Compose", says so too.
 */
import { execFileSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, posix } from "node:path";
import { REPOSITORY_ROOT } from "@tjm/devstack/manager-process";
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as adminConfig from "../../admin/src/config.ts";
import {
  initTrust,
  MANAGER_CREDS_FILE,
  MANAGER_ENV_FILE,
  MANAGER_ENV_NAMES,
  SERVER_TRUST_FILE,
} from "../../deploy/nats/trust.ts";
import * as managerConfig from "../../manager/src/config.ts";
import { generateEnrollmentToken } from "../../manager/src/enrollment/tokens.ts";
import * as workerConfig from "../../worker-agent/src/config.ts";
import {
  interpolate,
  readCompose,
  readEnvFile,
  referencedVariables,
  type Service,
  volumeMount,
  words,
} from "./compose-file.ts";
import {
  copiedInto,
  dockerignore,
  lintDockerfile,
  parseDockerfile,
  type Stage,
  stageOf,
} from "./dockerfile.ts";

const ROOT = REPOSITORY_ROOT;
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const rootPackage = JSON.parse(read("package.json")) as {
  scripts: Record<string, string>;
  workspaces: string[];
};

const { text: composeText, document: compose } = readCompose(ROOT);
const envExample = readEnvFile(read("deploy/.env.example"));
/** The example with every empty value (the secrets) filled, as an operator's deploy/.env would be. */
const envFilled = new Map(
  [...envExample].map(([name, value]) => [name, value === "" ? randomBytes(32).toString("hex") : value]),
);
const resolved = interpolate(compose, envFilled);
const services = Object.entries(resolved.value.services);

/**
 * The official schema (compose-spec/compose-spec's compose-spec.json) as the pinned dclint
 * package ships it. It is draft-07, Ajv's default; its `$schema` spells that draft's URI in a way
 * Ajv does not know, so it is checked here and then left out.
 */
function composeSchema(): object {
  const require = createRequire(import.meta.url);
  const file = join(dirname(require.resolve("dclint/package.json")), "schemas/compose.schema.json");
  const { $schema, ...schema } = JSON.parse(readFileSync(file, "utf8"));
  expect($schema).toMatch(/draft-07/);
  return schema;
}
// Formats off: the schema's "duration" means Compose's 10s/1m30s, not ajv-formats' ISO 8601.
const validateCompose = new Ajv({ allErrors: true, strict: false, validateFormats: false }).compile(
  composeSchema(),
);

const schemaErrors = (document: unknown) =>
  validateCompose(document)
    ? []
    : (validateCompose.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);

/** What runs in a service built from one of our Dockerfiles: its image stage and its command line. */
interface Launch {
  stage: Stage;
  /** ENTRYPOINT then CMD, after the service's own entrypoint/command. */
  argv: string[];
  /** Repository paths of the shell scripts it runs, the ones they call included. */
  scripts: string[];
  process: "manager" | "admin" | "worker" | "nats-init" | undefined;
}

const dockerfiles = new Map<string, ReturnType<typeof parseDockerfile>>();
function dockerfileOf(service: Service): { path: string; target: string | undefined } | undefined {
  if (service.build === undefined) return undefined;
  if (typeof service.build === "string")
    return { path: posix.join(service.build, "Dockerfile"), target: undefined };
  return {
    path: posix.join(service.build.context, service.build.dockerfile ?? "Dockerfile"),
    target: service.build.target,
  };
}
function parsedDockerfile(path: string) {
  let parsed = dockerfiles.get(path);
  if (parsed === undefined) {
    parsed = parseDockerfile(read(path));
    dockerfiles.set(path, parsed);
  }
  return parsed;
}

/** `sh deploy/x.sh` calls inside a script, followed. */
function scriptChain(first: string): string[] {
  const chain = [first];
  for (let index = 0; index < chain.length; index += 1) {
    const text = read(chain[index] as string);
    for (const match of text.matchAll(/\bsh\s+(deploy\/[\w./-]+\.sh)\b/g)) {
      if (!chain.includes(match[1] as string)) chain.push(match[1] as string);
    }
  }
  return chain;
}

function launchOf(service: Service): Launch | undefined {
  const built = dockerfileOf(service);
  if (built === undefined) return undefined;
  const stage = stageOf(parsedDockerfile(built.path), built.target);
  if (stage === undefined) return undefined;
  const entrypoint = service.entrypoint === undefined ? (stage.entrypoint ?? []) : words(service.entrypoint);
  // A service's entrypoint resets the image's CMD, as Docker does.
  const command =
    service.command !== undefined
      ? words(service.command)
      : service.entrypoint === undefined
        ? (stage.cmd ?? [])
        : [];
  const argv = [...entrypoint, ...command];
  const first = argv[0] === "/bin/sh" || argv[0] === "sh" ? argv[1] : undefined;
  const scripts = first === undefined ? [] : scriptChain(first);
  const texts = scripts.map(read).join("\n") + argv.join(" ");
  const process = texts.includes("manager/src/main.node.ts")
    ? "manager"
    : texts.includes("admin/src/main.ts")
      ? "admin"
      : texts.includes("worker-agent/src/main.ts")
        ? "worker"
        : argv.includes("deploy/nats/init.ts")
          ? "nats-init"
          : undefined;
  return { stage, argv, scripts, process };
}

/** Upper-case variables a shell script reads; those it sets or exports itself are not counted. */
function scriptReads(text: string): Set<string> {
  const set = new Set(
    [...text.matchAll(/^\s*(?:export\s+)?([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1] as string),
  );
  const reads = [...text.matchAll(/\$\{?([A-Z][A-Z0-9_]*)/g)].map((match) => match[1] as string);
  return new Set(reads.filter((name) => !set.has(name)));
}

/** The settings files the entrypoints source (`. "$file"`), and who writes what into them. */
const SOURCED_FILES: Record<string, { names: readonly string[]; writtenBy: string }> = {
  [`/var/lib/tjm/manager-nats/${MANAGER_ENV_FILE}`]: {
    names: MANAGER_ENV_NAMES,
    writtenBy: "deploy/nats/trust.ts",
  },
  "/var/lib/tjm/admin-client/client.env": {
    // The NAME=${value} lines its template writes (after a literal \n too).
    names: [...read("deploy/admin-client.sh").matchAll(/(?<![A-Z0-9_])([A-Z][A-Z0-9_]*)=\$\{/g)].map(
      (m) => m[1] as string,
    ),
    writtenBy: "deploy/admin-client.sh",
  },
};

/** Variables a script chain hands the process: the files it sources and what it exports. */
function scriptProvides(scripts: string[]): string[] {
  const names: string[] = [];
  for (const script of scripts) {
    const text = read(script);
    for (const [file, { names: written }] of Object.entries(SOURCED_FILES)) {
      if (text.includes(file) && /^\s*\.\s+"\$\w+"/m.test(text)) names.push(...written);
    }
    names.push(...[...text.matchAll(/^\s*export\s+([A-Z][A-Z0-9_]*)/gm)].map((match) => match[1] as string));
  }
  return names;
}

let trustDir: string;
/** Real values for what the entrypoints add: the NATS account settings nats-init writes, a client, a token. */
let provided: Record<string, string>;

beforeAll(async () => {
  trustDir = await mkdtemp(join(tmpdir(), "tjm-compose-trust-"));
  await initTrust({
    keys: join(trustDir, "keys"),
    server: join(trustDir, "server"),
    manager: join(trustDir, "manager"),
  });
  provided = {
    ...Object.fromEntries(readEnvFile(await readFile(join(trustDir, "manager", MANAGER_ENV_FILE), "utf8"))),
    ADMIN_CLIENT_ID: randomUUID(),
    ADMIN_CLIENT_SECRET: `tjm_cs_${randomBytes(32).toString("base64url")}`,
    ENROLLMENT_TOKEN: generateEnrollmentToken(),
  };
});
afterAll(() => (trustDir ? rm(trustDir, { recursive: true, force: true }) : undefined));

describe("compose.yaml against the Compose Specification", () => {
  it("is valid as written and once interpolated (the schema dclint ships: compose-spec.json)", () => {
    expect(schemaErrors(compose)).toEqual([]);
    expect(resolved.errors).toEqual([]);
    expect(schemaErrors(resolved.value)).toEqual([]);
  });

  it("the schema check is not vacuous: a misspelt key and an unknown depends_on condition are refused", () => {
    const broken = structuredClone(resolved.value) as { services: Record<string, Record<string, unknown>> };
    broken.services.manager = { ...broken.services.manager, replicaz: 2 };
    broken.services.migrate = {
      ...broken.services.migrate,
      depends_on: { postgres: { condition: "service_ready" } },
    };
    const errors = schemaErrors(broken);
    expect(
      errors.some((error) => error.startsWith("/services/manager must NOT have additional properties")),
    ).toBe(true);
    expect(errors.some((error) => error.startsWith("/services/migrate/depends_on/postgres/condition"))).toBe(
      true,
    );
  });

  it("names only services, volumes and configs it declares (the schema cannot see references)", () => {
    const problems: string[] = [];
    for (const [name, service] of services) {
      for (const dependency of Object.keys(service.depends_on ?? {}))
        if (!(dependency in resolved.value.services))
          problems.push(`${name} depends on unknown ${dependency}`);
      for (const entry of service.volumes ?? []) {
        const { source } = volumeMount(entry);
        if (!source.startsWith(".") && !source.startsWith("/") && !(source in (resolved.value.volumes ?? {})))
          problems.push(`${name} mounts undeclared volume ${source}`);
      }
      for (const config of service.configs ?? [])
        if (!(config.source in (resolved.value.configs ?? {})))
          problems.push(`${name} uses undeclared config ${config.source}`);
      const shared = /^service:(.+)$/.exec(service.network_mode ?? "")?.[1];
      if (shared !== undefined && !(shared in resolved.value.services))
        problems.push(`${name} shares the network of unknown ${shared}`);
    }
    for (const [name, config] of Object.entries(resolved.value.configs ?? {}))
      if (!existsSync(join(ROOT, config.file)))
        problems.push(`config ${name}: ${config.file} does not exist`);
    expect(problems).toEqual([]);
  });
});

describe("compose.yaml's settings and secrets", () => {
  it("reads every interpolated variable from deploy/.env.example, and every entry there is used", () => {
    const used = referencedVariables(composeText);
    expect([...used].filter((name) => !envExample.has(name))).toEqual([]);
    expect([...envExample.keys()].filter((name) => !used.has(name))).toEqual([]);
  });

  it("refuses to start while a secret left empty in the example is unset: each is required (:?)", () => {
    const { errors } = interpolate(compose, envExample);
    const empty = [...envExample].filter(([, value]) => value === "").map(([name]) => name);
    // METRICS_BEARER_TOKEN is optional (empty: /metrics without a token).
    expect([...new Set(errors.map((error) => error.name))].sort()).toEqual(
      empty.filter((name) => name !== "METRICS_BEARER_TOKEN").sort(),
    );
    for (const error of errors) expect(error.message).toBe(`set ${error.name} in deploy/.env`);
  });

  it("keeps deploy/.env and deploy/secrets/ out of git and out of every build context", () => {
    const gitignore = read(".gitignore").split("\n");
    expect(gitignore).toContain("deploy/.env");
    expect(gitignore).toContain("deploy/secrets/");
    const ignored = dockerignore(read(".dockerignore"));
    for (const path of [
      "deploy/.env",
      "deploy/secrets/admin-password",
      "manager/node_modules/x",
      "node_modules/.bin",
    ])
      expect(ignored(path), path).toBe(true);
    expect(ignored("deploy/.env.example")).toBe(false);
  });
});

describe("what compose.yaml's services run", () => {
  it("builds from contexts, Dockerfiles and targets that exist", () => {
    const problems: string[] = [];
    for (const [name, service] of services) {
      const built = dockerfileOf(service);
      if (built === undefined) continue;
      if (!existsSync(join(ROOT, built.path))) {
        problems.push(`${name}: ${built.path} does not exist`);
        continue;
      }
      if (stageOf(parsedDockerfile(built.path), built.target) === undefined)
        problems.push(`${name}: ${built.path} has no stage ${built.target}`);
    }
    expect(problems).toEqual([]);
    expect(services.filter(([, service]) => service.build !== undefined).length).toBeGreaterThanOrEqual(9);
  });

  it("names only scripts and files that exist, in its image or mounted", () => {
    const problems: string[] = [];
    const scriptLike = /^\/?(?:[\w.-]+\/)+[\w.-]+\.(?:ts|sh|mjs|js|conf|cfg)$/;
    for (const [name, service] of services) {
      const launch = launchOf(service);
      const mounted = new Map<string, string | undefined>();
      for (const config of service.configs ?? [])
        mounted.set(config.target, resolved.value.configs?.[config.source]?.file);
      const checkPath = (path: string, where: string) => {
        if (!scriptLike.test(path)) return;
        if (path.startsWith("/") && mounted.has(path)) {
          const file = mounted.get(path);
          if (file === undefined || !existsSync(join(ROOT, file)))
            problems.push(`${name}: ${where} ${path} is mounted from a missing file`);
          return;
        }
        if (launch === undefined) {
          problems.push(`${name}: ${where} ${path} is neither mounted nor in an image built here`);
          return;
        }
        const inImage = posix.resolve(launch.stage.workdir, path);
        const repoPath = posix.relative("/app", inImage);
        if (!existsSync(join(ROOT, repoPath)))
          problems.push(`${name}: ${where} ${path} does not exist in the repository`);
        else if (!copiedInto(launch.stage, inImage))
          problems.push(`${name}: ${where} ${path} is not copied into its image`);
      };
      const argv = launch?.argv ?? [...words(service.entrypoint), ...words(service.command)];
      for (const arg of argv) checkPath(arg, "command");
      for (const arg of service.healthcheck?.test ?? []) checkPath(arg, "health check");
      for (const script of launch?.scripts ?? []) {
        checkPath(script, "script");
        for (const match of read(script).matchAll(/\b(deploy\/[\w./-]+\.(?:sh|ts))\b/g))
          checkPath(match[1] as string, `${script} runs`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("shell scripts parse (sh -n) and entrypoints run them through /bin/sh (no exec bit needed)", () => {
    const scripts = readdirSync(join(ROOT, "deploy"), { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".sh"))
      .map((file) => `deploy/${file}`);
    expect(scripts.length).toBeGreaterThanOrEqual(6);
    for (const script of scripts) execFileSync("sh", ["-n", join(ROOT, script)]);
    for (const [name, service] of services) {
      const launch = launchOf(service);
      if (launch?.argv.some((arg) => arg.endsWith(".sh"))) expect(launch.argv[0], name).toBe("/bin/sh");
    }
  });

  it("gives each TJM process settings its configuration reads, and every one it requires", () => {
    const problems: string[] = [];
    const checked: string[] = [];
    for (const [name, service] of services) {
      const launch = launchOf(service);
      const given = Object.fromEntries(
        Object.entries(service.environment ?? {}).map(([key, value]) => [
          key,
          value === null ? "" : String(value),
        ]),
      );
      const scriptsRead = new Set(launch?.scripts.flatMap((script) => [...scriptReads(read(script))]) ?? []);
      const env = {
        ...given,
        ...Object.fromEntries(scriptProvides(launch?.scripts ?? []).map((key) => [key, provided[key] ?? ""])),
      };
      let reads: Set<string>;
      let parsed: { ok: true } | { ok: false; problems: string[] };
      switch (launch?.process) {
        case "manager":
          reads = new Set(Object.keys(managerConfig.configSchema.shape));
          parsed = managerConfig.parseEnv(env);
          break;
        case "admin":
          reads = new Set(Object.keys(adminConfig.configSchema.shape));
          parsed = adminConfig.parseEnv(env);
          break;
        case "worker":
          reads = new Set(Object.keys(workerConfig.configSchema.shape));
          parsed = workerConfig.parseEnv(env, "host");
          break;
        case "nats-init":
          // It reads no environment at all: its directories are its arguments.
          expect(read("deploy/nats/init.ts")).not.toContain("process.env");
          reads = new Set();
          parsed = { ok: true };
          break;
        default:
          continue;
      }
      checked.push(name);
      for (const key of Object.keys(given))
        if (!reads.has(key) && !scriptsRead.has(key))
          problems.push(`${name}: ${key} is read by neither its process nor its scripts`);
      for (const key of scriptsRead)
        if (!(key in env) && !reads.has(key))
          problems.push(`${name}: its scripts read ${key}, which it is not given`);
      if (!parsed.ok) problems.push(...parsed.problems.map((problem) => `${name}: ${problem}`));
    }
    expect(problems).toEqual([]);
    expect(checked.sort()).toEqual(
      [
        "admin",
        "admin-client",
        "admin-migrate",
        "manager",
        "migrate",
        "nats-init",
        "worker-cpu",
        "worker-cpu-token",
        "worker-nvidia",
        "worker-nvidia-token",
      ].sort(),
    );
  });

  it("gives minio-init every variable its script reads, and nothing else", () => {
    const service = resolved.value.services["minio-init"] as Service;
    const script = resolved.value.configs?.[service.configs?.[0]?.source ?? ""]?.file ?? "";
    expect(words(service.entrypoint)).toEqual(["/bin/sh", service.configs?.[0]?.target]);
    expect(Object.keys(service.environment ?? {}).sort()).toEqual([...scriptReads(read(script))].sort());
  });

  it("hands each file over in a volume the writer fills before the reader starts", () => {
    const mountOf = (service: Service, directory: string) =>
      (service.volumes ?? []).map(volumeMount).find((mount) => mount.target === directory);
    /** Whether `name` waits (directly or through what it waits for) for `writer` to complete. */
    const waitsFor = (name: string, writer: string, seen = new Set<string>()): boolean => {
      if (seen.has(name)) return false;
      seen.add(name);
      return Object.entries(resolved.value.services[name]?.depends_on ?? {}).some(
        ([dependency, { condition }]) =>
          (dependency === writer && condition === "service_completed_successfully") ||
          waitsFor(dependency, writer, seen),
      );
    };
    const handovers: { writer: string; writes: string; reader: string; reads: string }[] = [];
    for (const [name, service] of services) {
      const launch = launchOf(service);
      const texts = [
        ...(launch?.scripts.map(read) ?? []),
        ...Object.values(service.environment ?? {}).map(String),
      ].join("\n");
      for (const file of [
        `/var/lib/tjm/manager-nats/${MANAGER_ENV_FILE}`,
        `/var/lib/tjm/manager-nats/${MANAGER_CREDS_FILE}`,
        "/var/lib/tjm/admin-client/client.env",
      ])
        if (texts.includes(file))
          handovers.push({
            writer: file.includes("admin-client") ? "admin-client" : "nats-init",
            writes: file,
            reader: name,
            reads: file,
          });
      if (launch?.scripts.includes("deploy/worker-entrypoint.sh"))
        handovers.push({
          writer: `${name}-token`,
          writes: "/var/lib/tjm/enroll/token.json",
          reader: name,
          reads: "/var/lib/tjm/enroll/token.json",
        });
      if ((service.configs ?? []).some((config) => config.source === "nats-server"))
        handovers.push({
          writer: "nats-init",
          writes: `/var/lib/tjm/nats-trust/${SERVER_TRUST_FILE}`,
          reader: name,
          // nats-server resolves the include against the configuration file's directory.
          reads: posix.join(
            "/etc/nats",
            /include\s+"([^"]+)"/.exec(read("deploy/nats/nats-server.conf"))?.[1] ?? "?",
          ),
        });
    }
    const problems: string[] = [];
    for (const { writer, writes, reader, reads } of handovers) {
      const writerService = resolved.value.services[writer];
      if (writer === reader) continue;
      if (writerService === undefined) {
        problems.push(`${reader} reads ${reads}, but no service ${writer} writes it`);
        continue;
      }
      const writerMount = mountOf(writerService, posix.dirname(writes));
      const readerMount = mountOf(resolved.value.services[reader] as Service, posix.dirname(reads));
      if (writerMount === undefined || writerMount.readOnly)
        problems.push(`${writer} cannot write ${writes}`);
      if (readerMount === undefined || readerMount.source !== writerMount?.source)
        problems.push(`${reader} does not mount the volume ${writer} writes ${writes} into`);
      if (!waitsFor(reader, writer)) problems.push(`${reader} does not wait for ${writer} to complete`);
      const writerLaunch = launchOf(writerService);
      const writerText = [...(writerLaunch?.scripts.map(read) ?? []), ...(writerLaunch?.argv ?? [])].join(
        "\n",
      );
      if (!writerText.includes(writes) && !writerText.includes(posix.dirname(writes)))
        problems.push(`${writer} does not write ${writes}`);
    }
    expect(problems).toEqual([]);
    expect(handovers.length).toBeGreaterThanOrEqual(12);
  });
});

describe("the stack the issue asks for", () => {
  const service = (name: string) => resolved.value.services[name] as Service;

  it("PostgreSQL 17, three NATS nodes on one cluster in operator mode with fsync on every write, streams with three replicas", () => {
    expect(service("postgres").image).toBe("postgres:17");
    const natsConfig = read("deploy/nats/nats-server.conf");
    expect(natsConfig).toMatch(/^\s*sync_interval:\s*always\s*$/m);
    expect(natsConfig).toMatch(/^\s*store_dir:\s*\/data\/jetstream\s*$/m);
    for (const name of ["nats-1", "nats-2", "nats-3"]) {
      const node = service(name);
      // `sync_interval: always` needs nats-server 2.10 or newer.
      const [major, minor] = (/^nats:(\d+)\.(\d+)\.\d+/.exec(node.image ?? "") ?? []).slice(1).map(Number);
      expect((major ?? 0) * 100 + (minor ?? 0), node.image).toBeGreaterThanOrEqual(210);
      expect(node.environment?.NATS_SERVER_NAME).toBe(name);
      expect(natsConfig).toContain(`nats-route://${name}:6222`);
      expect(node.volumes).toContain(`${name}-data:/data`);
    }
    expect(service("manager").environment?.NATS_STREAM_REPLICAS).toBe("3");
    expect(service("manager").environment?.NATS_AUTH).toBe("jwt");
    expect(service("manager").environment?.NATS_URL).toBe(
      "nats://nats-1:4222,nats://nats-2:4222,nats://nats-3:4222",
    );
  });

  it("two Manager replicas after a one-shot migrate, checked on the readiness route with a probe timeout below the check's", () => {
    const manager = service("manager");
    expect(manager.deploy?.replicas).toBe(2);
    expect(manager.depends_on?.migrate).toEqual({ condition: "service_completed_successfully" });
    expect(service("migrate").command).toEqual(["migrate"]);
    const seconds = (duration: string | undefined) => Number(/^(\d+)s$/.exec(duration ?? "")?.[1]);
    for (const [name, { healthcheck }] of services) {
      const test = healthcheck?.test ?? [];
      if (!test.includes("deploy/http-probe.ts")) continue;
      const probeMs = Number(test.at(-1));
      expect(probeMs, name).toBeLessThan(seconds(healthcheck?.timeout) * 1000);
    }
    expect(manager.healthcheck?.test).toContain("http://127.0.0.1:8080/api/health/ready");
  });

  it("MinIO aborts incomplete uploads in every bucket only after the longest a job may run", () => {
    const hours = (duration: unknown) => Number(/^(\d+)h$/.exec(String(duration))?.[1]);
    const deadlineHours = Number(
      service("manager").environment?.JOB_DEADLINE_HOURS ??
        managerConfig.configSchema.shape.JOB_DEADLINE_HOURS.parse(undefined),
    );
    const minio = service("minio").environment;
    expect(hours(minio?.MINIO_API_STALE_UPLOADS_EXPIRY)).toBeGreaterThan(deadlineHours);
    expect(hours(minio?.MINIO_API_STALE_UPLOADS_CLEANUP_INTERVAL)).toBeGreaterThan(0);
  });

  it("Workers, SDK clients and the console reach the Managers by one service name with nothing that buffers", () => {
    expect(service("worker-cpu").environment?.MANAGER_URL).toBe("http://manager:8080");
    expect(service("admin").network_mode).toBe("service:gateway");
    expect(service("admin").environment?.MANAGER_URL).toBe("http://localhost:8080");
    const gateway = read("deploy/gateway/haproxy.cfg");
    expect(gateway).toMatch(/^\s*mode tcp\s*$/m);
    expect(gateway).toMatch(/^\s*server-template manager 2 manager:8080\s*$/m);
    expect(gateway).toMatch(/^\s*option httpchk GET \/api\/health\/ready\s*$/m);
    expect(service("gateway").ports).toEqual(["127.0.0.1:8080:8080", "127.0.0.1:8090:8090"]);
  });

  it("one CPU Worker enrolled at first start; the NVIDIA Worker under the gpu profile with a device reservation", () => {
    expect(service("worker-cpu").profiles).toBeUndefined();
    expect(service("worker-cpu-token").environment?.TJM_WORKER_POOL).toBe("cpu");
    const nvidia = service("worker-nvidia");
    expect(nvidia.profiles).toEqual(["gpu"]);
    expect(service("worker-nvidia-token").profiles).toEqual(["gpu"]);
    expect(nvidia.deploy?.resources?.reservations?.devices).toEqual([
      { driver: "nvidia", count: "all", capabilities: ["gpu"] },
    ]);
    const image = stageOf(parsedDockerfile("deploy/worker.Dockerfile"), "nvidia");
    expect(image?.env.NVIDIA_DRIVER_CAPABILITIES?.split(",")).toContain("video");
    expect(image?.env.FFMPEG_PATH).toBe("/usr/lib/jellyfin-ffmpeg/ffmpeg");
    expect(read("deploy/worker.Dockerfile")).toMatch(/apt-get install -y --no-install-recommends ffmpeg\b/);
    expect(read("deploy/worker.Dockerfile")).toMatch(/FROM node:24\.21\.0-bookworm-slim AS agent/);
  });

  it("no account exists until the operator creates one: no service runs `accounts create`", () => {
    expect(composeText).not.toMatch(/accounts\s+create/);
  });
});

describe("deploy/*.Dockerfile", () => {
  const ignored = dockerignore(read(".dockerignore"));
  const lintContext = {
    root: ROOT,
    context: ".",
    ignored,
    scripts: rootPackage.scripts,
    workspaces: rootPackage.workspaces,
    // The root postinstall (patch-package) applies these during npm ci.
    postinstallInputs: readdirSync(join(ROOT, "patches")).map((file) => `patches/${file}`),
  };

  it.each(["deploy/manager.Dockerfile", "deploy/admin.Dockerfile", "deploy/worker.Dockerfile"])(
    "%s: COPY sources exist and are in the context, npm ci has every manifest first, RUN npm scripts exist",
    (path) => {
      const dockerfile = parsedDockerfile(path);
      expect(lintDockerfile(dockerfile, lintContext)).toEqual([]);
      // Node is the official image of the version the root package.json pins.
      const pinned = (JSON.parse(read("package.json")) as { devDependencies: Record<string, string> })
        .devDependencies.node;
      for (const stage of dockerfile.stages)
        if (stage.from.startsWith("node:")) expect(stage.from).toBe(`node:${pinned}-bookworm-slim`);
    },
  );

  it("the lint finds what it claims to: a missing source, an ignored one, an unknown npm script, npm ci too early", () => {
    const bad = parseDockerfile(
      [
        "FROM node:24.21.0-bookworm-slim AS bad",
        "WORKDIR /app",
        "COPY package.json ./",
        "RUN npm ci",
        "COPY no-such-folder/ x/",
        "COPY deploy/.env.example deploy/.env ./",
        "RUN npm run --silent no-such-script",
        "CMD node x.js",
      ].join("\n"),
    );
    expect(
      lintDockerfile(bad, { ...lintContext, ignored: (path) => path === "deploy/.env" || ignored(path) }),
    ).toEqual([
      "line 8: CMD must use the exec form (a JSON array)",
      "line 5: COPY source no-such-folder/ does not exist",
      expect.stringMatching(
        /^line 6: COPY source deploy\/\.env (does not exist|is excluded by \.dockerignore)$/,
      ),
      "line 4: npm ci runs before package-lock.json is in the image",
      ...rootPackage.workspaces.map(
        (workspace) => `line 4: npm ci runs before ${workspace}/package.json is in the image`,
      ),
      ...lintContext.postinstallInputs.map((file) => `line 4: npm ci runs before ${file} is in the image`),
      'line 7: RUN names npm script "no-such-script", which package.json does not define',
    ]);
  });
});
