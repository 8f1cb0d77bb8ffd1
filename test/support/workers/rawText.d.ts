// A file imported with Vite's `?raw` suffix is its text (e.g. the 0.1 scripts in test/kinds/mutex/fixtures/, read inside workerd, which has no file system).
declare module "*?raw" {
  const text: string;
  export default text;
}
