/**
 * deploy/kubernetes/, checked offline: every manifest against the Kubernetes API schemas (kubernetes-models,
 * and the Prometheus Operator's for the ServiceMonitor) and, for fields those schemas let pass, against
 * the same models' types with strict tsc; then the references between them and to the service: labels
 * and selectors, ports, probe paths, env names, memory and the stop timeline.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Service } from 'kubernetes-models/v1/Service';
import t from 'tap';
import { parse } from 'yaml';
import { loadSettings, variables } from '../../src/config.js';
import { HEALTH_LIVE_PATH, HEALTH_READY_PATH } from '../../src/health/routes.js';
import { SERVICE_NODE_OPTIONS } from '../../src/heap.js';
import { METRICS_PATH } from '../../src/http/observability/metricsServer.js';
import { typeCheckFolder } from '../helpers/packageBin.js';
import { CLOSE_AFTER_GRACE_SECONDS } from './shutdown.js';

const DIR = fileURLToPath(new URL('../../deploy/kubernetes/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Memory a replica uses beside V8's bounded generations: code, buffers, sockets, the allocator. */
const NATIVE_MEMORY_MIB = 256;
/** The longest time a load balancer in front may take to stop sending a stopping pod requests. */
const LOAD_BALANCER_DEREGISTRATION_SECONDS = 15;

const read = async (file: string) => parse(await readFile(`${DIR}${file}`, 'utf8'));

const kustomization = await read('kustomization.yaml');
const resources: string[] = kustomization.resources;
const manifests = await Promise.all(resources.map(async (file) => ({ file, object: await read(file) })));
const byKind = (kind: string) => {
  const found = manifests.filter((manifest) => manifest.object.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0]!.object;
};
const deployment = new Deployment(byKind('Deployment'));
const service = new Service(byKind('Service'));
const pdb = new PodDisruptionBudget(byKind('PodDisruptionBudget'));
const hpa = new HorizontalPodAutoscaler(byKind('HorizontalPodAutoscaler'));
const job = new Job(byKind('Job'));
const serviceMonitor = new ServiceMonitor(byKind('ServiceMonitor'));
const models = [deployment, service, pdb, hpa, job, serviceMonitor];

const api = deployment.spec!.template.spec!.containers[0]!;
const podLabels = deployment.spec!.template.metadata!.labels!;
/** The container's env as the process would see it (values set; Secret references by name). */
const plainEnv = (env: typeof api.env) =>
  Object.fromEntries((env ?? []).filter((v) => v.value !== undefined).map((v) => [v.name, v.value]));
const settings = loadSettings(plainEnv(api.env));

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([key, value]) => labels[key] === value);

const mebibytes = (quantity: unknown) => {
  const [, amount, unit] = /^(\d+)(Mi|Gi)$/.exec(String(quantity)) ?? [];
  if (amount === undefined) throw new Error(`unexpected memory quantity ${String(quantity)}`);
  return Number(amount) * (unit === 'Gi' ? 1024 : 1);
};
const nodeOption = (name: string) => {
  const option = SERVICE_NODE_OPTIONS.find((o) => o.startsWith(`--${name}=`));
  if (option === undefined) throw new Error(`--${name} is not among gwapi's heap options`);
  return Number(option.slice(option.indexOf('=') + 1));
};

t.test('every manifest is listed once and valid against the Kubernetes API schemas', async (t) => {
  t.equal(kustomization.kind, 'Kustomization');
  t.equal(new Set(resources).size, resources.length, 'no resource twice');
  t.equal(manifests.length, models.length, 'one file per object, each checked');
  for (const model of models) {
    t.doesNotThrow(() => model.validate(), `${model.kind} ${model.metadata?.name}`);
  }
});

t.test('the validation rejects a broken manifest', async (t) => {
  const broken = structuredClone(byKind('Deployment'));
  broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
  t.throws(() => new Deployment(broken).validate(), /containerPort must be integer/);
});

interface Manifest {
  file: string;
  object: { apiVersion: string; kind: string };
}

/** The module and interface that kubernetes-models (or its Prometheus Operator package) gives a kind. */
const modelType = ({ apiVersion, kind }: Manifest['object']) => ({
  module: `${apiVersion.startsWith('monitoring.coreos.com/') ? '@kubernetes-models/prometheus-operator' : 'kubernetes-models'}/${apiVersion}/${kind}`,
  name: `I${kind}`,
});

/**
 * tsc's output for each manifest written as a literal of its model's type: the schemas accept fields
 * they do not know, where tsc's excess-property check names each one (`deployment.yaml.ts(…): …`).
 */
async function typeCheck(directory: string, list: Manifest[]) {
  for (const { file, object } of list) {
    const { module, name } = modelType(object);
    const source = `import type { ${name} } from '${module}';\n\nexport const manifest: ${name} = ${JSON.stringify(object, null, 2)};\n`;
    await writeFile(join(directory, `${file}.ts`), source);
  }
  return (await typeCheckFolder(directory)).reported;
}

t.test('no manifest has a field its API does not know', async (t) => {
  t.same(await typeCheck(t.testdir(), manifests), [], 'strict tsc reports nothing');
});

t.test('a misspelled field is named', async (t) => {
  const broken = structuredClone(byKind('Deployment'));
  const [container] = broken.spec.template.spec.containers;
  container.readynessProbe = container.readinessProbe;
  delete container.readinessProbe;
  broken.metadata.lables = broken.metadata.labels;
  const reported = await typeCheck(t.testdir(), [{ file: 'deployment.yaml', object: broken }]);
  t.match(reported, [
    /\/deployment\.yaml\.ts\(\d+,\d+\): error TS2353: .*'"lables"' does not exist in type 'IObjectMeta'/,
    /\/deployment\.yaml\.ts\(\d+,\d+\): error TS2353: .*'"readynessProbe"' does not exist in type 'IContainer'/,
  ]);
  t.equal(reported.length, 2, 'and nothing else');
});

t.test('every container runs the image compose builds, as the kustomization names it', async (t) => {
  const compose = await readFile(`${ROOT}docker-compose.yml`, 'utf8');
  const composeImage = /^\s*image: \$\{GWAPI_IMAGE:-([^}]+)\}$/m.exec(compose)?.[1];
  const [image] = kustomization.images;
  t.equal(`${image.name}:${image.newTag}`, composeImage);
  for (const container of [api, ...job.spec!.template.spec!.containers]) {
    t.equal(container.image, image.name, container.name);
  }
  t.same(api.args, ['serve']);
  t.same(job.spec!.template.spec!.containers[0]!.args, ['migrate']);
});

t.test('the Service, PDB, HPA and ServiceMonitor point at the api Deployment', async (t) => {
  t.same(deployment.spec!.selector.matchLabels, podLabels, 'the Deployment selects its own pods');
  t.ok(matches(service.spec!.selector, podLabels), 'Service selector');
  t.ok(matches(pdb.spec!.selector!.matchLabels, podLabels), 'PodDisruptionBudget selector');
  t.notOk(matches(pdb.spec!.selector!.matchLabels, job.spec!.template.metadata!.labels!), 'not the Job');
  t.ok(matches(serviceMonitor.spec.selector.matchLabels, service.metadata!.labels!), 'ServiceMonitor');
  t.same(hpa.spec!.scaleTargetRef, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    name: deployment.metadata!.name,
  });
  t.equal(hpa.spec!.metrics?.[0]?.resource?.name, 'cpu');
  t.ok(api.resources?.requests?.cpu, 'CPU utilisation needs a CPU request');
  t.notOk(deployment.spec!.replicas, 'the HPA alone sets the replica count');
  t.ok(hpa.spec!.minReplicas! > 1, 'more than one replica');
});

t.test('ports and probes are the ones the service listens on', async (t) => {
  const containerPort = (name: string) => api.ports?.find((port) => port.name === name)?.containerPort;
  t.equal(containerPort('http'), settings.PORT);
  t.equal(containerPort('metrics'), settings.METRICS_PORT);
  t.equal(settings.HOST, '0.0.0.0', 'reachable from outside the pod');
  for (const port of service.spec!.ports!) {
    t.ok(containerPort(String(port.targetPort)), `Service port ${port.name} targets a container port`);
  }
  const [endpoint] = serviceMonitor.spec.endpoints!;
  t.ok(
    service.spec!.ports!.some((port) => port.name === endpoint?.port),
    'ServiceMonitor port is on the Service',
  );
  t.equal(endpoint?.path, METRICS_PATH);
  t.equal(api.readinessProbe?.httpGet?.path, HEALTH_READY_PATH);
  t.equal(api.livenessProbe?.httpGet?.path, HEALTH_LIVE_PATH);
  t.equal(api.startupProbe?.httpGet?.path, HEALTH_LIVE_PATH);
  for (const probe of [api.readinessProbe, api.livenessProbe, api.startupProbe]) {
    t.equal(probe?.httpGet?.port, 'http');
  }
});

t.test('env names are settings; the URLs come from the Secret', async (t) => {
  for (const container of [api, ...job.spec!.template.spec!.containers]) {
    for (const variable of container.env ?? []) {
      t.ok(variable.name in variables, `${container.name}: ${variable.name} is a setting`);
      const secret = variable.valueFrom?.secretKeyRef;
      t.equal(secret !== undefined, variable.name.endsWith('_URL'), `${variable.name}: Secret iff a URL`);
      if (secret) t.same(secret, { name: 'gwapi', key: variable.name });
    }
  }
  const apiSecrets = api.env!.filter((v) => v.valueFrom).map((v) => v.name);
  t.same(apiSecrets, ['DATABASE_URL', 'REDIS_URL']);
});

t.test('the memory limit leaves room beside the bounded heap', async (t) => {
  // Three semi-spaces: V8's young generation beside the old one.
  const heap = nodeOption('max-old-space-size') + 3 * nodeOption('max-semi-space-size');
  const limit = mebibytes(api.resources?.limits?.memory);
  t.ok(heap + NATIVE_MEMORY_MIB <= limit, `${heap} + ${NATIVE_MEMORY_MIB} ≤ ${limit} MiB`);
  t.equal(mebibytes(api.resources?.requests?.memory), limit, 'requested as much as the limit');
});

t.test('a stopping replica outlasts de-registration, then drains before it is killed', async (t) => {
  const preStop = api.lifecycle?.preStop?.sleep?.seconds ?? 0;
  t.ok(preStop > LOAD_BALANCER_DEREGISTRATION_SECONDS, `preStop ${preStop} s`);
  const drain = settings.SHUTDOWN_GRACE_SECONDS + CLOSE_AFTER_GRACE_SECONDS;
  const grace = deployment.spec!.template.spec!.terminationGracePeriodSeconds ?? 30;
  t.ok(grace > preStop + drain, `terminationGracePeriodSeconds ${grace} > ${preStop} + ${drain}`);
  const strategy = deployment.spec!.strategy?.rollingUpdate;
  t.equal(strategy?.maxUnavailable, 0, 'a rollout starts a replica before stopping one');
});
