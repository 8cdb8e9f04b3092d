/**
 * The dashboard and the alerting of issue 14: deploy/grafana/tjm.json and deploy/prometheus/ name
 * only series the Manager and the Worker agent export (MANAGER_SERIES, WORKER_SERIES), with labels
 * those series carry, and the dashboard graphs every one of them. The rules and the Prometheus
 * config go through promtool, a real process (Debian's `prometheus` package, which
 * `scripts/system-deps test` installs): `check rules`, `test rules` on alerts.test.yml (and that
 * file notices an alert that no longer fires), `check config`.
 */
import { accessSync, constants, readFileSync } from "node:fs";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPOSITORY_ROOT } from "@tjm/devstack/manager-process";
import { runProcess } from "@tjm/devstack/run-process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { MANAGER_SERIES } from "../../manager/src/metrics/series.ts";
import { WORKER_SERIES } from "../../worker-agent/src/metrics/series.ts";

const PROMETHEUS_DIR = join(REPOSITORY_ROOT, "deploy/prometheus");
const DASHBOARD_FILE = join(REPOSITORY_ROOT, "deploy/grafana/tjm.json");

/** Labels Prometheus adds to every scraped series (`service` by prometheus.yml's relabelling). */
const TARGET_LABELS = ["instance", "job", "service"];

const EXPORTED: Record<string, { type: string; labels: readonly string[] }> = {
  ...MANAGER_SERIES,
  ...WORKER_SERIES,
};

/** The series a name selects, or undefined: a histogram is scraped as _bucket (with le), _sum and _count. */
function exported(name: string): { base: string; labels: string[] } | undefined {
  const spec = EXPORTED[name];
  if (spec) return spec.type === "histogram" ? undefined : { base: name, labels: [...spec.labels] };
  const match = /^(.+)_(bucket|sum|count)$/.exec(name);
  const histogram = match && EXPORTED[match[1] as string];
  if (!match || histogram?.type !== "histogram") return undefined;
  return {
    base: match[1] as string,
    labels: [...histogram.labels, ...(match[2] === "bucket" ? ["le"] : [])],
  };
}

interface Selector {
  name: string;
  /** Labels its matchers `{…}` test. */
  matched: string[];
}

interface Parsed {
  selectors: Selector[];
  /** Labels named by by/without/on/ignoring/group_left/group_right. */
  grouping: string[];
}

const TOKEN =
  /\s+|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[A-Za-z_:][A-Za-z0-9_:]*|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?[a-z]*|\$\w+|=~|!~|!=|==|>=|<=|[-+*/%^(){}[\],=<>]/y;
const BINARY_KEYWORDS = new Set(["and", "or", "unless", "bool", "inf", "nan"]);
const GROUPING_KEYWORDS = new Set(["by", "without", "on", "ignoring", "group_left", "group_right"]);
/** Aggregations: their grouping may come before the parenthesis (`sum by (pool) (…)`). */
const AGGREGATIONS = new Set([
  "sum",
  "min",
  "max",
  "avg",
  "group",
  "stddev",
  "stdvar",
  "count",
  "count_values",
  "bottomk",
  "topk",
  "quantile",
]);

function tokens(expr: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < expr.length) {
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(expr);
    if (!match) throw new Error(`cannot read ${JSON.stringify(expr.slice(at, at + 20))} in ${expr}`);
    if (match[0].trim()) out.push(match[0]);
  }
  return out;
}

/**
 * The metric names and labels of a PromQL expression, by its tokens: an aggregation, or an
 * identifier followed by `(`, is a function; a keyword is a keyword; anything else a metric name; ranges
 * `[…]` and what follows `offset` are durations. Anything it does not know stops the test.
 */
function parsePromQL(expr: string): Parsed {
  const list = tokens(expr);
  const parsed: Parsed = { selectors: [], grouping: [] };
  let i = 0;
  const labelList = (into: string[]) => {
    if (list[i] !== "(") throw new Error(`expected ( after ${list[i - 1]} in ${expr}`);
    for (i++; list[i] !== ")"; i++) {
      const token = list[i];
      if (token === undefined) throw new Error(`unclosed label list in ${expr}`);
      if (token !== ",") into.push(token);
    }
    i++;
  };
  while (i < list.length) {
    const token = list[i] as string;
    if (token === "[") {
      while (list[i] !== "]") {
        if (++i >= list.length) throw new Error(`unclosed [ in ${expr}`);
      }
      i++;
    } else if (token === "offset") {
      i += 2;
    } else if (GROUPING_KEYWORDS.has(token)) {
      i++;
      if (list[i] === "(") labelList(parsed.grouping);
    } else if (token === "{") {
      throw new Error(`a selector without a metric name in ${expr}`);
    } else if (AGGREGATIONS.has(token) || (/^[A-Za-z_:]/.test(token) && list[i + 1] === "(")) {
      i++;
    } else if (/^[A-Za-z_:]/.test(token) && !BINARY_KEYWORDS.has(token)) {
      const selector: Selector = { name: token, matched: [] };
      i++;
      if (list[i] === "{") {
        for (i++; list[i] !== "}"; i++) {
          const label = list[i];
          if (label === undefined) throw new Error(`unclosed { in ${expr}`);
          if (label === ",") continue;
          selector.matched.push(label);
          i += 2; // the operator and the quoted value
        }
        i++;
      }
      parsed.selectors.push(selector);
    } else {
      i++;
    }
  }
  return parsed;
}

/** What is wrong with the series and labels an expression names: [] when all is exported. */
function problems(where: string, expr: string): string[] {
  const found: string[] = [];
  const { selectors, grouping } = parsePromQL(expr);
  const labels = new Set(TARGET_LABELS);
  for (const selector of selectors) {
    const series = exported(selector.name);
    if (!series) {
      found.push(`${where}: ${selector.name} is not exported`);
      continue;
    }
    for (const label of series.labels) labels.add(label);
    for (const label of selector.matched) {
      if (![...TARGET_LABELS, ...series.labels].includes(label))
        found.push(`${where}: ${selector.name} has no label ${label}`);
    }
  }
  for (const label of grouping) {
    if (!labels.has(label)) found.push(`${where}: no series of ${expr} has the label ${label}`);
  }
  return found;
}

// ---- promtool ------------------------------------------------------------------------------

let promtoolPath = "";
let scratch = "";

beforeAll(async () => {
  const dirs = [...(process.env.PATH ?? "").split(":"), "/usr/bin", "/usr/local/bin"];
  for (const dir of dirs.filter(Boolean)) {
    try {
      accessSync(join(dir, "promtool"), constants.X_OK);
      promtoolPath = join(dir, "promtool");
      break;
    } catch {}
  }
  if (!promtoolPath) throw new Error("promtool is not installed: run scripts/system-deps test");
  scratch = await mkdtemp(join(tmpdir(), "tjm-observability-"));
});

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const promtool = (args: string[], cwd = PROMETHEUS_DIR) =>
  runProcess(promtoolPath, args, { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, cwd });

// ---- the dashboard --------------------------------------------------------------------------

interface Target {
  refId: string;
  expr: string;
  datasource: { type: string; uid: string };
}

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
  targets?: Target[];
}

interface Variable {
  name: string;
  type: string;
  query: string | { query: string };
  datasource?: { type: string; uid: string };
}

interface Dashboard {
  schemaVersion: number;
  uid: string;
  panels: Panel[];
  templating: { list: Variable[] };
}

const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, "utf8")) as Dashboard;
const graphs = dashboard.panels.filter((panel) => panel.type !== "row");
const queries = graphs.flatMap((panel) =>
  (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}" ${target.refId}`, ...target })),
);
/** Grafana's template variables as PromQL accepts them, for promtool. */
const concrete = (expr: string) =>
  expr.replaceAll("$__rate_interval", "5m").replace(/\$(pool|worker)\b/g, ".*");

describe("deploy/grafana/tjm.json", () => {
  it("is a classic-model dashboard of a current schema, its Prometheus chosen by a variable", () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(41);
    expect(dashboard.uid).toBe("tjm-overview");
    const datasource = dashboard.templating.list.find((variable) => variable.type === "datasource");
    expect(datasource).toMatchObject({ name: "datasource", query: "prometheus" });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, meant literally.
    const viaVariable = { type: "prometheus", uid: "${datasource}" };
    for (const panel of graphs) {
      expect(panel.datasource, panel.title).toEqual(viaVariable);
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) expect(target.datasource, panel.title).toEqual(viaVariable);
    }
    for (const variable of dashboard.templating.list.filter((v) => v.type === "query")) {
      expect(variable.datasource, variable.name).toEqual(viaVariable);
    }
    expect(new Set(dashboard.panels.map((panel) => panel.id)).size).toBe(dashboard.panels.length);
    for (const { title, gridPos } of dashboard.panels)
      expect(gridPos.x + gridPos.w, title).toBeLessThanOrEqual(24);
  });

  it("names only exported series, and only labels they carry (panels and variables)", () => {
    const found = queries.flatMap(({ where, expr }) => problems(where, expr));
    for (const variable of dashboard.templating.list.filter((v) => v.type === "query")) {
      const query = typeof variable.query === "string" ? variable.query : variable.query.query;
      const match = /^label_values\((\w+), (\w+)\)$/.exec(query);
      expect(match, `variable ${variable.name}: ${query}`).not.toBeNull();
      found.push(...problems(`variable ${variable.name}`, `${match?.[1]}{${match?.[2]}=""}`));
    }
    expect(found).toEqual([]);
  });

  it("graphs every series the Manager and the Worker agent export", () => {
    const graphed = new Set(
      queries.flatMap(({ expr }) => parsePromQL(expr).selectors.map(({ name }) => exported(name)?.base)),
    );
    expect(Object.keys(EXPORTED).filter((name) => !graphed.has(name))).toEqual([]);
  });

  it("every query is PromQL that promtool accepts (variables given values)", async () => {
    const rules = {
      groups: [
        {
          name: "dashboard",
          rules: queries.map(({ where, expr }, index) => ({
            record: `dashboard:query_${index}`,
            expr: concrete(expr),
            labels: { query: where },
          })),
        },
      ],
    };
    const file = join(scratch, "dashboard-queries.yml");
    await writeFile(file, stringify(rules));
    const run = await promtool(["check", "rules", file]);
    expect(run.stderr).toBe("");
    expect(run).toMatchObject({ code: 0 });
    expect(run.stdout).toContain(`SUCCESS: ${queries.length} rules found`);
  });
});

// ---- the alert rules ------------------------------------------------------------------------

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

interface RuleTest {
  alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[];
}

const alertsText = readFileSync(join(PROMETHEUS_DIR, "alerts.yml"), "utf8");
const rules = (parse(alertsText) as { groups: { rules: Rule[] }[] }).groups.flatMap((group) => group.rules);
const ruleTests = (
  parse(readFileSync(join(PROMETHEUS_DIR, "alerts.test.yml"), "utf8")) as { tests: RuleTest[] }
).tests;

const ALERTS = [
  "TJMQueueNotDraining",
  "TJMNoWorkerOnline",
  "TJMOutboxGrowing",
  "TJMWorkersLost",
  "TJMDispatchLatencyOverTarget",
  "TJMStorageWaits",
];

describe("deploy/prometheus/alerts.yml", () => {
  it("alerts on a queue that does not drain, the outbox, lost Workers, dispatch latency and storage waits", () => {
    expect(rules.map((rule) => rule.alert)).toEqual(ALERTS);
    for (const rule of rules) {
      expect(rule.for, rule.alert).toMatch(/^\d+m$/);
      expect(["warning", "critical"], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      expect(rule.annotations?.description, rule.alert).toBeTruthy();
    }
  });

  it("names only exported series, and only labels they carry", () => {
    expect(rules.flatMap((rule) => problems(`alert ${rule.alert}`, rule.expr))).toEqual([]);
  });

  it("passes promtool check rules", async () => {
    const run = await promtool(["check", "rules", "alerts.yml"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toContain(`SUCCESS: ${ALERTS.length} rules found`);
  });

  it("alerts.test.yml has each alert firing and each one staying quiet, and promtool test rules passes", async () => {
    const cases = ruleTests.flatMap((test) => test.alert_rule_test ?? []);
    for (const alert of ALERTS) {
      const ofAlert = cases.filter((c) => c.alertname === alert);
      expect(
        ofAlert.some((c) => c.exp_alerts.length > 0),
        `${alert} fires`,
      ).toBe(true);
      expect(
        ofAlert.some((c) => c.exp_alerts.length === 0),
        `${alert} stays quiet`,
      ).toBe(true);
    }
    const run = await promtool(["test", "rules", "alerts.test.yml"]);
    expect(run.stderr).toBe("");
    expect(run).toMatchObject({ code: 0 });
    expect(run.stdout).toContain("SUCCESS");
  });

  it("alerts.test.yml fails when any alert stops firing", async () => {
    const runs = ALERTS.map(async (alert) => {
      const dir = join(scratch, alert);
      await cp(PROMETHEUS_DIR, dir, { recursive: true });
      const document = parse(await readFile(join(dir, "alerts.yml"), "utf8")) as {
        groups: { rules: Rule[] }[];
      };
      for (const rule of document.groups.flatMap((group) => group.rules)) {
        if (rule.alert === alert) rule.expr = "vector(1) > 2";
      }
      await writeFile(join(dir, "alerts.yml"), stringify(document));
      return { alert, run: await promtool(["test", "rules", "alerts.test.yml"], dir) };
    });
    for (const { alert, run } of await Promise.all(runs)) {
      expect(run.code, alert).toBe(1);
      expect(run.stdout + run.stderr, alert).toContain(`alertname: ${alert}, time:`);
    }
  });
});

// ---- the scrape configuration ---------------------------------------------------------------

interface ScrapeConfig {
  job_name: string;
  metrics_path?: string;
  dns_sd_configs?: { names: string[]; type: string; port: number }[];
}

describe("deploy/prometheus/prometheus.yml", () => {
  it("passes promtool check config, which loads alerts.yml", async () => {
    const run = await promtool(["check", "config", "prometheus.yml"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toContain("SUCCESS: 1 rule files found");
    expect(run.stdout).toContain(`SUCCESS: ${ALERTS.length} rules found`);
  });

  it("scrapes every Manager replica on the API port and each Worker on 9464, as compose.yaml runs them", () => {
    const config = parse(readFileSync(join(PROMETHEUS_DIR, "prometheus.yml"), "utf8")) as {
      rule_files: string[];
      scrape_configs: ScrapeConfig[];
    };
    expect(config.rule_files).toEqual(["alerts.yml"]);
    const jobs = Object.fromEntries(config.scrape_configs.map((job) => [job.job_name, job]));
    expect(jobs["tjm-manager"]).toMatchObject({
      metrics_path: "/metrics",
      dns_sd_configs: [{ names: ["manager"], type: "A", port: 8080 }],
    });
    expect(jobs["tjm-worker"]).toMatchObject({
      metrics_path: "/metrics",
      dns_sd_configs: [{ names: ["worker-cpu", "worker-nvidia"], type: "A", port: 9464 }],
    });

    type Service = { environment?: Record<string, string>; deploy?: { replicas?: number } };
    const compose = parse(readFileSync(join(REPOSITORY_ROOT, "compose.yaml"), "utf8"), { merge: true }) as {
      services: Record<string, Service>;
    };
    // /metrics on the API port: no METRICS_PORT moves it away from PORT's default, 8080.
    const manager = compose.services.manager;
    expect(manager?.deploy?.replicas).toBeGreaterThan(1);
    expect(manager?.environment).not.toHaveProperty("METRICS_PORT");
    expect(manager?.environment).not.toHaveProperty("PORT");
    for (const name of ["worker-cpu", "worker-nvidia"]) {
      expect(compose.services[name]?.environment, name).toMatchObject({
        WORKER_METRICS_HOST: "0.0.0.0",
        WORKER_METRICS_PORT: "9464",
      });
    }
  });
});
