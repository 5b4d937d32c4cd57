// matte's own version, as in package.json (test/engine/version.test.ts keeps the two equal). A
// constant rather than a read of package.json: dist/ and the packed package place that file at
// different depths, and asking the addon (versions()) would open ONNX Runtime just for this.
export const MATTE_VERSION = '0.1.0';
