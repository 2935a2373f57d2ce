// Bundle the widget's front end (with vega, vega-lite and vega-embed) into one ES module
// under bbt_widget/static/, so the widget never fetches code from a CDN at run time.
//
//   node build.mjs           production build (minified)
//   node build.mjs --watch   rebuild on change (use with ANYWIDGET_HMR=1 in a notebook)
import * as esbuild from "esbuild";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = resolve(here, "..", "bbt_widget", "static");
const watch = process.argv.includes("--watch");

mkdirSync(outdir, { recursive: true });

/** @type {import("esbuild").BuildOptions} */
const options = {
  entryPoints: { widget: resolve(here, "src", "index.js") },
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["es2020"],
  outdir,
  minify: !watch,
  sourcemap: false,
  // Third-party license banners are kept in a separate file next to the bundle (shipped in
  // the wheel) rather than inline, so the bundle itself stays small and scannable.
  legalComments: "external",
  logLevel: "info",
  // Everything is bundled: an unresolved bare import would otherwise become a runtime fetch.
  external: [],
  metafile: true,
};

/** Write the licenses of every npm package that ended up in the bundle (shipped with it). */
function writeLicenses(metafile) {
  const roots = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const parts = input.split(/[\\/]/);
    const at = parts.lastIndexOf("node_modules");
    if (at < 0) continue;
    const scoped = parts[at + 1].startsWith("@");
    roots.add(parts.slice(0, at + (scoped ? 3 : 2)).join(sep));
  }
  const sections = [];
  for (const root of [...roots].sort()) {
    const dir = resolve(here, root);
    const meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    const file = readdirSync(dir).find((name) => /^(licen[cs]e|copying)(\.|$)/i.test(name));
    const text = file && existsSync(join(dir, file)) ? readFileSync(join(dir, file), "utf8") : "";
    sections.push(`${meta.name}@${meta.version} (${meta.license ?? "see package"})\n\n${text.trim()}\n`);
  }
  const header =
    "Third-party software bundled in widget.js (built by js/build.mjs from npm packages).\n";
  writeFileSync(
    join(outdir, "THIRD_PARTY_LICENSES.txt"),
    `${header}\n${sections.join(`\n${"-".repeat(72)}\n\n`)}`,
  );
  return roots.size;
}

if (watch) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  const result = await esbuild.build(options);
  const count = writeLicenses(result.metafile);
  console.log(`  licenses of ${count} bundled packages -> THIRD_PARTY_LICENSES.txt`);
}
