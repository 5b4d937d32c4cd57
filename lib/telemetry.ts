// ONNX Runtime's own telemetry, switched off before its library loads.
//
// The official ONNX Runtime builds since 1.29 carry Microsoft's 1DS telemetry on Linux too
// (microsoft/onnxruntime#27379): on first use they write a device id and an event queue under
// ~/.cache/Microsoft/DeveloperTools/.onnxruntime, a `.ses` file and a `mat-debug-<pid>.log` in the
// temporary directory, and upload the queued events over HTTPS. A self-hosted image service must
// not phone home, so matte opts out. `ORT_DISABLE_TELEMETRY=1` is ONNX Runtime's full opt-out on
// Linux, and it is latched when the library initialises: it has to be in the environment before
// matte's ONNX Runtime is opened (by the first model or versions(): native/matte/onnxruntime.h). It
// is set when the addon loads, so it is in place whatever comes first. A value the user set,
// either way, is kept.
//
// The variable is process-wide: an onnxruntime-node loaded later in the same process reads it too.

export const TELEMETRY_VARIABLE = 'ORT_DISABLE_TELEMETRY';

/** Sets ORT_DISABLE_TELEMETRY=1 unless the user chose a value; call before loading the addon. */
export function disableOnnxRuntimeTelemetry(env: NodeJS.ProcessEnv = process.env): void {
  if (env[TELEMETRY_VARIABLE] === undefined) env[TELEMETRY_VARIABLE] = '1';
}
