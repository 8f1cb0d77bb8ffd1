import type { TestProject } from "vitest/node";
export default async function setup(project: TestProject) {
  project.provide("upstashUrl", "http://127.0.0.1:1234");
  return async () => {};
}
declare module "vitest" { export interface ProvidedContext { upstashUrl: string } }
