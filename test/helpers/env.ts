// For tests that set an environment variable the library reads: remembers its value now and gives
// a function that puts it back (deleting it when it was unset), so one suite's setting never leaks.
export function keepEnv(name: string): () => void {
  const saved = process.env[name];
  return () => {
    if (saved === undefined) delete process.env[name];
    else process.env[name] = saved;
  };
}
