import { NotConfiguredError } from "../../errors.js";

/**
 * The OpenAPI document as tools/gen-openapi.mts wrote it to the static
 * assets (console/openapi.json, without its server): read through the
 * ASSETS binding, which the console's files come through too. Not served at
 * /console/openapi.json: the console passes out only its own types of file.
 */
export async function openApiAsset(assets: Fetcher | undefined): Promise<Record<string, unknown>> {
  if (!assets) throw new NotConfiguredError("the OpenAPI document is not bound (wrangler.toml [assets], binding ASSETS)");
  const res = await assets.fetch("https://assets.invalid/openapi.json");
  if (!res.ok) throw new Error(`the OpenAPI document is missing from the static assets (${res.status}): run node tools/generate.mjs before bundling`);
  return (await res.json()) as Record<string, unknown>;
}
