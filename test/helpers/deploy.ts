// What the deployment files (Dockerfile, compose.yaml, deploy/kubernetes/) are checked against:
// the settings docs/configuration.md documents, and the runtime stage of the Dockerfile (its user,
// ports and environment), read from the files themselves.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as assert from 'uvu/assert';
import { parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Every variable with a row in docs/configuration.md. */
export function documentedSettings(): Set<string> {
  const table = readFileSync(`${ROOT}docs/configuration.md`, 'utf8');
  return new Set([...table.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]!));
}

export interface RuntimeStage {
  user: string;
  env: Record<string, string>;
  expose: string[];
  healthcheck: string;
}

/** The Dockerfile's last stage: USER, ENV (the `KEY=value \` form it uses), EXPOSE, HEALTHCHECK. */
export function dockerfileRuntime(): RuntimeStage {
  const text = readFileSync(`${ROOT}Dockerfile`, 'utf8').replace(/\\\n/g, ' ');
  const last = text.slice(text.lastIndexOf('\nFROM '));
  const instruction = (name: string) => [...last.matchAll(new RegExp(`^${name} (.*)$`, 'gm'))].map((m) => m[1]!.trim());
  const env: Record<string, string> = {};
  for (const line of instruction('ENV')) for (const [, key, value] of line.matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)) env[key!] = value!;
  return { user: instruction('USER')[0] ?? '', env, expose: instruction('EXPOSE').flatMap((l) => l.split(/\s+/)), healthcheck: instruction('HEALTHCHECK')[0] ?? '' };
}

/** The first of `paths` that exists, or undefined (tools the tests skip without). */
export function findTool(...paths: string[]): string | undefined {
  return paths.find((path) => existsSync(path));
}

export const KUBECTL = findTool('/usr/bin/kubectl', '/usr/local/bin/kubectl');

export type Manifest = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; [key: string]: any };

// One model class for each kind deploy/kubernetes uses: a kind without one fails the test.
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1 Deployment': Deployment,
  'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'batch/v1 Job': Job,
  'networking.k8s.io/v1 NetworkPolicy': NetworkPolicy,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
  'v1 ConfigMap': ConfigMap,
  'v1 PersistentVolumeClaim': PersistentVolumeClaim,
  'v1 Secret': Secret,
  'v1 Service': Service,
};

/**
 * deploy/kubernetes/<dir> as `kubectl kustomize` builds it (as a user applies it); without kubectl
 * its resource files as written (no generated ConfigMap, no image rewrite).
 */
export function kustomize(dir: string): Manifest[] {
  if (KUBECTL) {
    const text = execFileSync(KUBECTL, ['kustomize', `${ROOT}deploy/kubernetes/${dir}`], { encoding: 'utf8' });
    return parseAllDocuments(text).map((doc) => doc.toJS() as Manifest);
  }
  const kustomization = parseAllDocuments(readFileSync(`${ROOT}deploy/kubernetes/${dir}/kustomization.yaml`, 'utf8'))[0]!.toJS() as { resources: string[] };
  return kustomization.resources
    .filter((file) => file.endsWith('.yaml'))
    .flatMap((file) => parseAllDocuments(readFileSync(`${ROOT}deploy/kubernetes/${dir}/${file}`, 'utf8')).map((doc) => doc.toJS() as Manifest));
}

/** Validates a manifest against the Kubernetes API's schema of its kind (kubernetes-models). */
export function assertValidManifest(manifest: Manifest): void {
  const Model = MODELS[`${manifest.apiVersion} ${manifest.kind}`];
  assert.ok(Model, `a schema for ${manifest.apiVersion} ${manifest.kind}`);
  try {
    new Model!(manifest).validate();
  } catch (err) {
    assert.unreachable(`${manifest.kind} ${manifest.metadata.name}: ${(err as Error).message}`);
  }
}
