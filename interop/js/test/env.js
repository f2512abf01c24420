// What the Go side (interop/js_test.go) passes every JS suite: mustEnv
// reads one address it set, and fails at once, saying how to run the
// suites, when it is missing.
export function mustEnv(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run these tests through interop/run.sh or go test in interop/`);
  return v;
}
